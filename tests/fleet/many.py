#!/usr/bin/env python3
"""Many workers: what 1,000 registered, idle workers cost a coordinator, and its lease latency.

usage: python3 tests/fleet/many.py [--binary target/release/cubefleet] [--workers 1000]
           [--seconds 60] [--probes 20]

A `cubefleet coordinator` process on 127.0.0.1 and, in this process, N stand-in workers speaking
the real gRPC protocol (stubs generated from proto/cubefleet/v1/cubefleet.proto with grpcio-tools,
installed from PyPI into a virtualenv under ~/.cache/cubefleet-fleet-venv): each registers, then
does what an idle `cubefleet worker` does, a lease that long-polls 5 s (`IDLE_LEASE_WAIT`) and a
heartbeat every 5 s. Measured: the coordinator's CPU (utime + stime from /proc) and resident
memory over `--seconds`, first with no worker, then with N; the round trip of an empty lease
(wait 0) from one more stand-in while the N poll (p50, p99 of 200); and `--probes` times, the time
from a one-line batch's acknowledged submission to a stand-in holding its job (the long polls
woken). The stand-in that gets the job reports the scramble's inverse as its solution, which the
coordinator verifies like any other.
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
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cube  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV = os.path.expanduser("~/.cache/cubefleet-fleet-venv")
TOOLS = ["grpcio==1.85.1", "grpcio-tools==1.85.1"]


def ensure_grpc():
    """Re-runs this script in the virtualenv that has grpcio (made on first use)."""
    if os.environ.get("CUBEFLEET_MANY_VENV") == "1":
        return
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *TOOLS], check=True)
    os.execve(py, [py, *sys.argv], dict(os.environ, CUBEFLEET_MANY_VENV="1"))


def stubs(out):
    from grpc_tools import protoc
    proto = os.path.join(ROOT, "proto")
    rc = protoc.main(["protoc", f"-I{proto}", f"--python_out={out}", f"--grpc_python_out={out}",
                      os.path.join(proto, "cubefleet/v1/cubefleet.proto")])
    if rc != 0:
        raise SystemExit("protoc failed")
    sys.path.insert(0, out)
    from cubefleet.v1 import cubefleet_pb2, cubefleet_pb2_grpc
    return cubefleet_pb2, cubefleet_pb2_grpc


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    m = re.search(r"VmRSS:\s+(\d+) kB", open(f"/proc/{pid}/status").read())
    return int(m.group(1)) / 1024


def inverse(moves):
    return " ".join(t[0] + {"": "'", "'": "", "2": "2"}[t[1:]] for t in reversed(moves.split()))


async def main_async(args, pb, pbg, grpc_addr):
    import grpc
    channels = [grpc.aio.insecure_channel(grpc_addr) for _ in range(8)]
    stop = asyncio.Event()
    probe = {"line": None, "got": None}
    registered = []

    async def standin(i):
        stub = pbg.WorkersStub(channels[i % len(channels)])
        r = await stub.Register(pb.RegisterRequest(name=f"standin-{i}", threads=1,
                                                   table_fingerprint="stand-in", protocol=2))
        wid = r.worker_id
        registered.append(wid)
        next_beat = time.monotonic() + 5
        while not stop.is_set():
            try:
                resp = await stub.Lease(pb.LeaseRequest(worker_id=wid, max_jobs=2, wait_millis=5000))
            except grpc.aio.AioRpcError:
                await asyncio.sleep(1)
                continue
            if resp.jobs:
                probe["got"] = time.monotonic()
                results = [pb.Completion(job_id=j.job_id, status="solved", solution=inverse(probe["line"]),
                                         has_solution=True, millis=1.0) for j in resp.jobs]
                await stub.Complete(pb.CompleteRequest(worker_id=wid, results=results))
            if time.monotonic() >= next_beat:
                await stub.Heartbeat(pb.HeartbeatRequest(worker_id=wid))
                next_beat += 5

    tasks = [asyncio.ensure_future(standin(i)) for i in range(args.workers)]
    while len(registered) < args.workers:
        await asyncio.sleep(0.2)
    await asyncio.sleep(10)          # every stand-in in its poll-heartbeat cycle
    c0, t0 = cpu_seconds(args.pid), time.monotonic()
    await asyncio.sleep(args.seconds)
    busy = (cpu_seconds(args.pid) - c0) / (time.monotonic() - t0)
    rss = rss_mb(args.pid)

    # an empty lease's round trip while the N poll
    stub = pbg.WorkersStub(channels[0])
    wid = (await stub.Register(pb.RegisterRequest(name="probe", threads=1, table_fingerprint="stand-in",
                                                  protocol=2))).worker_id
    rtts = []
    for _ in range(200):
        t = time.monotonic()
        await stub.Lease(pb.LeaseRequest(worker_id=wid, max_jobs=1, wait_millis=0))
        rtts.append(time.monotonic() - t)
    rtts.sort()

    # submission acknowledged -> a stand-in holds the job
    wakes = []
    for k in range(args.probes):
        line = cube.scrambles(f"many-{k}", 1, 12)[0]
        probe.update(line=line, got=None)
        path = os.path.join(args.work, f"probe{k}.txt")
        open(path, "w").write(line + "\n")
        proc = await asyncio.create_subprocess_exec(
            args.binary, "submit", path, "--coordinator", f"http://{grpc_addr}", "--max-length", "20",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        await proc.wait()
        acked = time.monotonic()
        while probe["got"] is None and time.monotonic() - acked < 15:
            await asyncio.sleep(0.001)
        if probe["got"] is not None:
            wakes.append(max(0.0, probe["got"] - acked))
        await asyncio.sleep(0.5)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for ch in channels:
        await ch.close()
    return busy, rss, rtts, wakes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/cubefleet"))
    ap.add_argument("--workers", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--probes", type=int, default=20)
    args = ap.parse_args()
    ensure_grpc()
    work = tempfile.mkdtemp(prefix="cubefleet-many-")
    args.work = work
    pb, pbg = stubs(work)
    log = os.path.join(work, "coordinator.log")
    env = dict(os.environ, NO_COLOR="1")
    env.pop("CUBEFLEET_TOKEN", None)
    coord = subprocess.Popen([args.binary, "coordinator", "--listen", "127.0.0.1:0", "--data",
                              os.path.join(work, "store")], stderr=open(log, "w"),
                             stdout=subprocess.DEVNULL, env=env)
    args.pid = coord.pid
    try:
        addr = None
        for _ in range(300):
            m = re.search(r"listen=(?:\x1b\[[0-9;]*m)*(127\.0\.0\.1:\d+)", open(log).read())
            if m:
                addr = m.group(1)
                break
            time.sleep(0.1)
        if not addr:
            raise SystemExit("the coordinator did not start; see " + log)
        time.sleep(3)
        c0, t0 = cpu_seconds(coord.pid), time.monotonic()
        time.sleep(min(args.seconds, 30))
        idle0 = (cpu_seconds(coord.pid) - c0) / (time.monotonic() - t0)
        rss0 = rss_mb(coord.pid)
        busy, rss, rtts, wakes = asyncio.run(main_async(args, pb, pbg, addr))
        pct = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))] * 1000  # noqa: E731
        print(f"coordinator with no worker: {100 * idle0:.2f} % of a core, {rss0:.0f} MB resident")
        print(f"coordinator with {args.workers} idle stand-in workers (lease long-poll 5 s + heartbeat 5 s "
              f"each): {100 * busy:.2f} % of a core over {args.seconds:.0f} s, {rss:.0f} MB resident "
              f"({1024 * (rss - rss0) / args.workers:.1f} KB per worker)")
        print(f"empty lease round trip at that size: p50 {pct(rtts, 0.5):.2f} ms, p99 {pct(rtts, 0.99):.2f} ms")
        if wakes:
            print(f"submission acknowledged -> job leased by a long-polling stand-in ({len(wakes)} of "
                  f"{args.probes}): median {1000 * statistics.median(wakes):.1f} ms, max {1000 * max(wakes):.1f} ms")
        else:
            print("no probe job was leased")
    finally:
        coord.terminate()
        try:
            coord.wait(30)
        except subprocess.TimeoutExpired:
            coord.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
