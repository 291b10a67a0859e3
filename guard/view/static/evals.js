// guard view, evals pages: a changed filter applies at once (the Filter button still works without this file).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("form.filters select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.requestSubmit());
  }
});
