// guard view, decisions list: while on the newest page, ask for rows newer than the top one
// (under the same filters) every few seconds and put them on top. Without this file the page still works.
"use strict";
(function () {
  const live = document.getElementById("live");
  const rows = document.getElementById("rows");
  if (!live || !rows || live.dataset.off) return;
  const every = 2000;
  let top = Number(live.dataset.top || 0);
  let failures = 0;
  live.textContent = "live: new decisions appear here as agents run";

  async function poll() {
    const url = new URL(live.dataset.newer, window.location.href);
    url.searchParams.set("after", String(top));
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const answer = await response.json();
      failures = 0;
      if (answer.count > 0) {
        top = answer.top;
        const holder = document.createElement("tbody");
        holder.innerHTML = answer.html; // rendered and escaped by the server's templates
        const fresh = Array.from(holder.children);
        fresh.forEach((tr) => tr.classList.add("fresh"));
        rows.prepend(...fresh);
        const empty = document.querySelector("p.empty");
        if (empty) empty.remove();
        live.textContent = `live: ${answer.count} new at ${new Date().toLocaleTimeString()}`;
      }
    } catch (err) {
      failures += 1;
      live.textContent = `live updates paused (${err.message}); retrying`;
    }
    window.setTimeout(poll, Math.min(every * 2 ** failures, 30000));
  }
  window.setTimeout(poll, every);
})();
