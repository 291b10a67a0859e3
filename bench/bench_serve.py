"""``guard serve`` under load: throughput and p50/p99 latency at 1, 16 and 64 concurrent clients.

The model is the loopback stub (``python -m guard.testing.openai_stub``, a
fixed-latency scripted server, NOT a real model) in its own process. Hits repeat
one event whose verdict is cached; misses send a new command every request, so
each one is judged by the stub. Miss latency is reported as a ratio to the stub's
latency, and to a floor measured in the same run: the same load generator posting
chat completions straight to the stub at the most clients, i.e. what this machine, at its
load then, gives a client with no guard between (``cat /proc/loadavg`` is printed
before and after). The service's CPU per request (its process, all threads, from
/proc) says what each request costs whatever the load. The load generator (one keep-alive
connection per client, minimal HTTP/1.1) runs on the same machine as the service
and the stub, so the figures are a lower bound of what the service does on its
own cores. Each row starts on an idle service: the bench waits until the service
uses no CPU (the previous row's audit rows written), so a burst of misses is not
measured against 2,560 hits' audit writes. The first burst of misses at the most
clients is a row of its own: each of its misses opens a connection to the model,
which the later rows find kept alive (a service in use keeps them).

Run once per transport (``GUARD_TRANSPORT``: ``auto`` sends ``openai/`` models over
guard's own HTTP/1.1 wire, ``litellm`` forces LiteLLM); for each, the connections
the service opened to the stub (accepts counted by the stub) against the calls made.
Last, the openai/ transport's own CPU per call at that many calls in flight, against
the same POST on a bare keep-alive socket in the same process: where a miss's CPU goes.

    python bench/bench_serve.py [--stub-latency 0.2] [--clients 1 16 64] [--hit-requests 40] [--miss-waves 3] [--transport auto litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench_cache_setup import config, event, free_port, loadavg, pct, wait_for
from bench_hook import guard_command, trust_folder

from guard.server.identity import service_key

_commands = itertools.count()
#: The per-user token guard serve requires (what ``guard serve --print-token`` prints).
AUTH = f"Bearer {service_key()}"
WARM_CLIENTS = 4

#: A chat completion the size of a quick judgement's prompt (about 1.3 kB), for the floor.
CHAT = {
    "model": "stub-judge",
    "max_tokens": 160,
    "temperature": 0,
    "response_format": {"type": "json_object"},
    "messages": [{"role": "system", "content": "s" * 600}, {"role": "user", "content": "u" * 640}],
}


async def _post(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    port: int,
    payload: dict[str, Any],
    path: str = "/v1/hooks",
) -> dict[str, Any]:
    """One keep-alive HTTP/1.1 POST to ``path`` (guard serve's /v1/hooks unless told); the JSON answer back."""
    body = json.dumps(payload).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAuthorization: {AUTH}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    status_and_headers = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    length = next(int(h.split(":", 1)[1]) for h in status_and_headers if h.lower().startswith("content-length:"))
    answer = await reader.readexactly(length)
    if " 200 " not in status_and_headers[0]:
        raise RuntimeError(f"{status_and_headers[0]}: {answer[:200]!r}")
    return dict(json.loads(answer))


async def load(port: int, clients: int, per_client: int, hit: bool) -> tuple[list[float], float]:
    """Latencies (ms) of ``clients × per_client`` requests and the wall time they took.

    Each client is one keep-alive connection speaking just enough HTTP/1.1: a full
    client library costs more CPU per request than the service on this machine.
    """
    latencies: list[float] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for _ in range(per_client):
                payload = event("rm -rf ~/victim" if hit else f"rm -rf ~/victim-{next(_commands)}")
                started = time.perf_counter()
                answer = await _post(reader, writer, port, payload)
                latencies.append((time.perf_counter() - started) * 1000)
                if answer["decision"] != "deny":
                    raise RuntimeError(f"unexpected decision {answer}")
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, time.perf_counter() - started


async def floor(stub_port: int, clients: int, per_client: int) -> list[float]:
    """Latencies (ms) of chat completions posted straight to the stub by ``clients`` keep-alive clients: no guard in between."""
    latencies: list[float] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", stub_port)
        try:
            for _ in range(per_client):
                started = time.perf_counter()
                await _post(reader, writer, stub_port, CHAT, path="/v1/chat/completions")
                latencies.append((time.perf_counter() - started) * 1000)
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


def transport_cpu(stub_latency: float, in_flight: int, rounds: int = 4) -> tuple[float, float]:
    """CPU per call (ms) in this process: the openai/ transport's ``complete`` against the same POST on a bare keep-alive socket, ``in_flight`` at a time.

    The service's misses and an eval's rows spend most of their CPU here; the bare
    socket is the floor, measured in the same run and process.
    """
    from guard.judge.chat import ChatRequest
    from guard.judge.openai_transport import complete

    port = free_port()
    stub = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "guard.testing.openai_stub",
            "--port",
            str(port),
            "--latency",
            str(stub_latency),
            "--mode",
            "deny",
        ],
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"

    async def guarded() -> None:
        async def one() -> None:
            await complete(
                ChatRequest(
                    model="openai/stub-judge",
                    messages=CHAT["messages"],
                    max_tokens=160,
                    temperature=0,
                    timeout=60,
                    api_base=base,
                    api_key="stub",
                    response_format={"type": "json_object"},
                )
            )

        await asyncio.gather(*(one() for _ in range(in_flight)))  # connections opened: not part of the figure

        for _ in range(rounds):
            await asyncio.gather(*(one() for _ in range(in_flight)))

    def cpu_per_call(run: Any) -> float:
        started = time.process_time()
        asyncio.run(run)
        return (time.process_time() - started) / (in_flight * rounds) * 1000

    try:
        wait_for(port, stub)
        bare = cpu_per_call(floor(port, in_flight, rounds))  # same calls, same connections kept per client
        return cpu_per_call(guarded()), bare
    finally:
        stub.terminate()
        stub.wait()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of process ``pid`` so far, all its threads (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int, quiet_s: float = 0.2, limit_s: float = 15.0) -> None:
    """Wait until process ``pid`` is idle (no CPU for ``quiet_s``): the last row's audit rows are written before the next row starts."""
    end = time.monotonic() + limit_s
    last = cpu_seconds(pid)
    while last is not None and time.monotonic() < end:
        time.sleep(quiet_s)
        now = cpu_seconds(pid)
        if now == last:
            return
        last = now


def stub_stats(port: int) -> dict[str, int]:
    """Calls the stub answered and TCP connections it accepted (this request's own included)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/stub/stats") as r:
        return dict(json.loads(r.read()))


def measure(transport: str, args: argparse.Namespace) -> tuple[list[tuple[Any, ...]], dict[str, int], str]:
    """One service on its own stub, driven at every client count: table rows, the stub's counts, /metrics."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        (workdir / "guard.yaml").write_text(config("sqlite:///.guard/cache.db"))
        stub_port, serve_port = free_port(), free_port()
        stub_cli = ["--port", str(stub_port), "--latency", str(args.stub_latency), "--mode", "deny"]
        stub = subprocess.Popen(
            [sys.executable, "-m", "guard.testing.openai_stub", *stub_cli], stdout=subprocess.DEVNULL
        )
        env = {
            **os.environ,
            "GUARD_API_BASE": f"http://127.0.0.1:{stub_port}/v1",
            "XDG_CACHE_HOME": str(workdir / "xdg"),
            "GUARD_TRANSPORT": transport,
        }
        env = trust_folder(workdir, env)
        serve = subprocess.Popen(
            [*guard_command(), "serve", "--port", str(serve_port), "--log-level", "warning"],
            cwd=workdir,
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(stub_port, stub)
            wait_for(serve_port, serve)
            before = stub_stats(stub_port)  # the readiness probes' connections and its own
            asyncio.run(load(serve_port, 1, 2, hit=True))  # fill the cache
            asyncio.run(
                load(serve_port, WARM_CLIENTS, 2, hit=False)
            )  # first judgements: model client and prompt caches warm
            settle(serve.pid)
            cold, wall = asyncio.run(
                load(serve_port, max(args.clients), 1, hit=False)
            )  # every miss opens its own model connection
            rows.append(("cold", max(args.clients), len(cold), len(cold) / wall, pct(cold, 0.5), pct(cold, 0.99), None))
            for clients in args.clients:
                for kind, per_client in (("hit", args.hit_requests), ("miss", args.miss_waves)):
                    settle(serve.pid)
                    cpu_before = cpu_seconds(serve.pid)
                    latencies, wall = asyncio.run(load(serve_port, clients, per_client, hit=kind == "hit"))
                    cpu_after = cpu_seconds(serve.pid)
                    cpu_ms = (
                        None
                        if cpu_before is None or cpu_after is None
                        else (cpu_after - cpu_before) / len(latencies) * 1000
                    )
                    rows.append(
                        (
                            kind,
                            clients,
                            len(latencies),
                            len(latencies) / wall,
                            pct(latencies, 0.5),
                            pct(latencies, 0.99),
                            cpu_ms,
                        )
                    )
            with urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{serve_port}/metrics", headers={"Authorization": AUTH})
            ) as r:
                metrics = r.read().decode()
            after = stub_stats(stub_port)
            counts = {"calls": after["calls"], "connections": after["connections"] - before["connections"] - 1}
            floor_ms = asyncio.run(
                floor(stub_port, max(args.clients), args.miss_waves)
            )  # after the counts: its calls are not the service's
            rows.append(
                ("floor", max(args.clients), len(floor_ms), None, pct(floor_ms, 0.5), pct(floor_ms, 0.99), None)
            )
        finally:
            for proc in (serve, stub):
                proc.terminate()
                proc.wait()
    return rows, counts, metrics


def fleet(stub_latency: float, replicas: int = 3, events: int = 30) -> dict[str, int] | None:
    """``events`` identical concurrent events spread over ``replicas`` services sharing one redis-server: the model calls made."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        redis_port, stub_port = free_port(), free_port()
        (workdir / "guard.yaml").write_text(config(f"redis://127.0.0.1:{redis_port}/0"))
        procs = [
            subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(redis_port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    tmp,
                ],
                stdout=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "guard.testing.openai_stub",
                    "--port",
                    str(stub_port),
                    "--latency",
                    str(stub_latency),
                    "--mode",
                    "deny",
                ],
                stdout=subprocess.DEVNULL,
            ),
        ]
        env = {
            **os.environ,
            "GUARD_API_BASE": f"http://127.0.0.1:{stub_port}/v1",
            "XDG_CACHE_HOME": str(workdir / "xdg"),
        }
        env = trust_folder(workdir, env)
        ports = [free_port() for _ in range(replicas)]
        try:
            wait_for(redis_port, procs[0])
            wait_for(stub_port, procs[1])
            for port in ports:
                procs.append(
                    subprocess.Popen(
                        [*guard_command(), "serve", "--port", str(port), "--log-level", "warning"],
                        cwd=workdir,
                        env=env,
                        stderr=subprocess.DEVNULL,
                    )
                )
                wait_for(port, procs[-1])

            async def one(n: int) -> dict[str, Any]:
                reader, writer = await asyncio.open_connection("127.0.0.1", ports[n % replicas])
                try:
                    return await _post(reader, writer, ports[n % replicas], event("rm -rf ~/fleet-victim"))
                finally:
                    writer.close()

            async def burst() -> list[dict[str, Any]]:
                return await asyncio.gather(*(one(n) for n in range(events)))

            answers = asyncio.run(burst())
            assert {a["decision"] for a in answers} == {"deny"}, answers
            return {"calls": stub_stats(stub_port)["calls"], "events": events, "replicas": replicas}
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stub-latency", type=float, default=0.2)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--hit-requests", type=int, default=40, help="requests per client for cache hits")
    parser.add_argument("--miss-waves", type=int, default=3, help="requests per client for misses")
    parser.add_argument(
        "--transport",
        nargs="+",
        default=["auto", "litellm"],
        help="GUARD_TRANSPORT values to compare (auto: guard's own wire for openai/ models)",
    )
    args = parser.parse_args()
    stub_ms = args.stub_latency * 1000
    print(
        f"guard serve, one process; model = loopback STUB with a fixed {stub_ms:.0f} ms latency; load generator on the same {os.cpu_count()}-core machine"
    )
    for transport in args.transport:
        load_before = loadavg()
        rows, counts, metrics = measure(transport, args)
        print(f"\nGUARD_TRANSPORT={transport} (load average before {load_before}, after {loadavg()})\n")
        print(
            "| requests | clients | n | throughput req/s | p50 ms | p99 ms | p50 / stub latency | p99 / stub latency | service CPU per request |\n|---|---|---|---|---|---|---|---|---|"
        )
        for kind, clients, n, rps, p50, p99, cpu_ms in rows:
            ratio = f"{p50 / stub_ms:.2f}× | {p99 / stub_ms:.2f}×" if kind in ("miss", "floor", "cold") else "– | –"
            label = {
                "floor": "no guard: straight to the stub (floor)",
                "cold": "cache miss, first burst: model connections opened",
            }.get(kind, f"cache {kind}")
            print(
                f"| {label} | {clients} | {n} | {'–' if rps is None else f'{rps:.0f}'} | {p50:.1f} | {p99:.1f} | {ratio} | {'–' if cpu_ms is None else f'{cpu_ms:.2f} ms'} |"
            )
        top = max(args.clients)
        miss = next(r for r in rows if r[0] == "miss" and r[1] == top)
        base = next(r for r in rows if r[0] == "floor")
        print(
            f"\n{top} concurrent distinct misses, model connections kept: p50 {miss[4] / stub_ms:.2f}× the model's latency (goal ≤ 1.5×), "
            f"{miss[4] / base[4]:.2f}× the floor measured in this run ({base[4] / stub_ms:.2f}× the model's latency with no guard)"
        )
        print(
            f"\nconnections the service opened to the model: {counts['connections']} for {counts['calls']} calls (at most {max(WARM_CLIENTS, *args.clients)} in flight)"
        )
        counters = {
            line.split()[0]: line.split()[1]
            for line in metrics.splitlines()
            if line.startswith(("guard_cache_hit", "guard_cache_miss"))
        }
        print("service /metrics after the run: " + json.dumps(counters))
    top = max(args.clients)
    transport, bare = transport_cpu(args.stub_latency, top)
    print(
        f"\nopenai/ transport, {top} calls in flight: {transport:.2f} ms CPU per call, {transport / bare:.1f}× a bare keep-alive socket's {bare:.2f} ms (same run)"
    )
    fleet_counts = fleet(args.stub_latency)
    if fleet_counts is None:
        print("\nfleet: redis-server is not installed; skipped")
    else:
        print(
            f"\nfleet: {fleet_counts['events']} identical concurrent events over {fleet_counts['replicas']} replicas on one Redis → {fleet_counts['calls']} model call(s)"
        )


if __name__ == "__main__":
    main()
