#!/usr/bin/env python3
"""Distance, measured: two-phase throughput of one worker whose coordinator is a round trip away.

usage: python3 tests/fleet/delay.py [--binary target/release/cubefleet] [--tables DIR]
           [--lines N] [--rtt-ms 0,100] [--targets 20,21] [--threads 1] [--runs 3] [--seed S]

A coordinator and a worker run as processes on this machine; the worker dials the coordinator
through a delaying TCP proxy (this file, on 127.0.0.1) that holds every chunk of bytes for half
the round trip in each direction, in order. For each target and round trip, `runs` times
(alternated, so a slow spell of the machine hits every configuration alike): a fresh store, a
batch of N random states (`cubefleet scramble --count N --seed S`) submitted while no worker
runs, then the worker started; throughput is read from the coordinator's `cubefleet_jobs{state=
"done"}` between 5 % and 95 % of the batch (the steady state: no start, no tail), and the whole
batch's time from the worker's start is printed too, and the share of that window the search
threads spent searching (`cubefleet_worker_search_seconds_total`, from the worker's /metrics):
the machine's other load slows searches in every configuration alike, but only waiting for the
coordinator lowers that share. Prints one line per run and a table of medians with the ratio
to no delay.
"""
import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import metric, parse_metrics  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class DelayProxy:
    """127.0.0.1:PORT -> target, every chunk held `one_way` seconds in each direction."""

    def __init__(self, target_port, one_way):
        self.target_port, self.one_way = target_port, one_way
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = None
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait(10)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _pipe(self, reader, writer):
        queue = asyncio.Queue()

        async def send():
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                delay = due - self.loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(send())
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                queue.put_nowait((self.loop.time() + self.one_way, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((0, None))
        try:
            await sender
        except (ConnectionError, OSError):
            pass

    async def _serve(self, reader, writer):
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_w), self._pipe(up_r, writer))

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)


def address_from_log(proc_log, key, timeout=60):
    """The `key=ADDR` a process logged (its bound address), read from its log file."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(proc_log, errors="replace") as f:
            m = re.search(key + r"=(?:\x1b\[[0-9;]*m)*(127\.0\.0\.1:\d+)", f.read())
        if m:
            return m.group(1)
        time.sleep(0.1)
    raise RuntimeError(f"no {key}= in {proc_log}")


def scrape(http, name, labels=""):
    with urllib.request.urlopen(f"http://{http}/metrics", timeout=5) as r:
        return metric(parse_metrics(r.read().decode()), name, labels)


def done(http):
    return scrape(http, "cubefleet_jobs", 'state="done"')


def one_run(args, lines_file, n, target, rtt_ms, work):
    data = tempfile.mkdtemp(dir=work)
    clog = os.path.join(data, "coordinator.log")
    wlog = os.path.join(data, "worker.log")
    env = dict(os.environ, RUST_LOG="info", NO_COLOR="1")
    env.pop("CUBEFLEET_TOKEN", None)
    coord = subprocess.Popen([args.binary, "coordinator", "--listen", "127.0.0.1:0", "--data", data + "/store",
                              "--http", "127.0.0.1:0"], stdout=subprocess.DEVNULL,
                             stderr=open(clog, "w"), env=env)
    worker = proxy = None
    try:
        grpc = address_from_log(clog, "listen")
        http = address_from_log(clog, "http")
        subprocess.run([args.binary, "submit", lines_file, "--coordinator", f"http://{grpc}",
                        "--max-length", str(target)], check=True, capture_output=True, env=env, timeout=600)
        proxy = DelayProxy(int(grpc.split(":")[1]), rtt_ms / 2000.0)
        start = time.monotonic()
        worker = subprocess.Popen([args.binary, "worker", "--coordinator", f"http://127.0.0.1:{proxy.port}",
                                   "--tables", args.tables, "--no-build", "--threads", str(args.threads),
                                   "--http", "127.0.0.1:0"],
                                  stdout=subprocess.DEVNULL, stderr=open(wlog, "w"), env=env)
        whttp = address_from_log(wlog, "http")
        marks = {}
        lo, hi = 0.05 * n, 0.95 * n
        while True:
            d = done(http)
            now = time.monotonic()
            for mark, at in (("lo", lo), ("hi", hi)):
                if d >= at and mark not in marks:
                    marks[mark] = (now, d, scrape(whttp, "cubefleet_worker_search_seconds_total"))
            if d >= n:
                total = now - start
                break
            if now - start > 900 or worker.poll() is not None:
                raise RuntimeError(f"run did not finish: {d} of {n} done; see {wlog}")
            time.sleep(0.05)
        (t1, d1, s1), (t2, d2, s2) = marks["lo"], marks["hi"]
        # busy: the share of the window the search threads spent in searches (a thread the
        # machine preempts mid-search still counts as busy; one waiting for a lease does not)
        return (d2 - d1) / (t2 - t1), total, (s2 - s1) / ((t2 - t1) * args.threads)
    finally:
        for p in (worker, coord):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
        if proxy:
            proxy.stop()
        shutil.rmtree(data, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/cubefleet"))
    ap.add_argument("--tables", default=os.environ.get("CUBEFLEET_TABLES",
                                                       os.path.expanduser("~/.cache/cubefleet/tables")))
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--rtt-ms", default="0,100")
    ap.add_argument("--targets", default="20,21")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args()
    subprocess.run([args.binary, "tables", "build", "--dir", args.tables], check=True)
    work = tempfile.mkdtemp(prefix="cubefleet-delay-")
    try:
        lines_file = os.path.join(work, "states.txt")
        with open(lines_file, "w") as f:
            subprocess.run([args.binary, "scramble", "--count", str(args.lines), "--seed", str(args.seed)],
                           check=True, stdout=f)
        rtts = [int(x) for x in args.rtt_ms.split(",")]
        targets = [int(x) for x in args.targets.split(",")]
        rates = {}
        for run in range(args.runs):
            for target in targets:
                for rtt in (rtts if run % 2 == 0 else rtts[::-1]):
                    rate, total, busy = one_run(args, lines_file, args.lines, target, rtt, work)
                    rates.setdefault((target, rtt), []).append((rate, total, busy))
                    print(f"run {run + 1}: target {target}, rtt {rtt} ms: {rate:.0f} lines/s "
                          f"(5-95 %), threads busy {100 * busy:.1f} %, whole batch {total:.2f} s", flush=True)
        print(f"\n{args.lines} random states (seed {args.seed}), 1 worker x {args.threads} thread(s), "
              f"{args.runs} runs, medians:")
        print("| target | round trip | lines/s (5-95 %) | threads busy | whole batch s | ratio to no delay |")
        print("| --- | --- | --- | --- | --- | --- |")
        for target in targets:
            base = statistics.median(r for r, _, _ in rates[(target, rtts[0])])
            for rtt in rtts:
                rs = rates[(target, rtt)]
                med = statistics.median(r for r, _, _ in rs)
                tot = statistics.median(t for _, t, _ in rs)
                busy = statistics.median(b for _, _, b in rs)
                print(f"| {target} | {rtt} ms | {med:.0f} | {100 * busy:.1f} % | {tot:.2f} | {med / base:.3f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
