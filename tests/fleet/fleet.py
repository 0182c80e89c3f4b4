#!/usr/bin/env python3
"""The fleet suite: deploy/compose.yaml, as users run it, with a coordinator, three workers and
client containers on the project's private network, and a fault injected while a batch runs.

usage: python3 tests/fleet/fleet.py [--seed S] [--image I] [--next-image I] [TEST...]

Tests (all by default, in this order):
  network_cut       a worker is disconnected from the network for longer than a lease, then
                    reconnected (docker network disconnect / connect)
  coordinator_kill  the coordinator container is SIGKILLed and started again on its volume
  pause             a worker is frozen (docker pause) until its leases expire, then unpaused
  rolling_upgrade   the workers are replaced one by one with --next-image, then the coordinator
  tls_and_tokens    the same with TLS (deploy/compose.tls.yaml) and a random token; a client with
                    the wrong token or without TLS is refused

Each test starts a fresh store (the tables volume is built once per run by the compose file's
`tables` service), submits a batch through a client container (`docker compose run ... worker
submit`, as deploy/README.md does), injects its fault, waits for the batch to finish and then
checks, by itself: every line answered exactly once, every answer applied to its line by an
independent cube model (cube.py) gives the solved cube and is optimal-length-plausible (no longer
than the scramble), lines seen done before the fault are still done with the same answer (nothing
acknowledged is lost). It prints the numbers of leases expired (jobs re-leased) and results
rejected, from the coordinator's counters. The seed (printed; --seed or CUBEFLEET_FLEET_SEED)
names the scrambles and the fault timings, so a failure can be replayed.

Needs: the images (deploy/build-image.sh, and --tag for --next-image), Docker, Compose (`docker
compose` or `docker-compose`), openssl. Everything it starts is in a compose project of its own
(`cubefleet-fleet-SEED-PID`) and is removed at the end, volumes included, unless
CUBEFLEET_FLEET_KEEP=1.
"""
import argparse
import json
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(DEPLOY, "tests"))
import cube  # noqa: E402
# the ports, drain time and autoscaling metric the deploy files (and deploy/check.sh) use
from contract import AUTOSCALE_METRIC, COORD_HTTP_PORT, GRPC_PORT, WORKER_DRAIN_S  # noqa: E402
LEASE_SECONDS = 8          # the coordinator's --lease in these tests (heartbeats every 5 s)
WORKERS = 3
SCRAMBLE_LENGTH = 14       # optimal searches of 14-move scrambles: ~60 ms each (0.15 s at most),
LINES = 1000               # so a batch of this many keeps three 1-thread workers busy ~1 min


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Failure(Exception):
    pass


def compose_command():
    for cmd in (["docker", "compose"], ["docker-compose"]):
        try:
            if subprocess.run(cmd + ["version"], capture_output=True, timeout=60).returncode == 0:
                return cmd
        except (OSError, subprocess.TimeoutExpired):
            pass
    raise Failure("neither `docker compose` nor `docker-compose` works")


def parse_metrics(text):
    """{(name, labels): value} of a Prometheus text page."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            try:
                out[(m.group(1), m.group(2) or "")] = float(m.group(3))
            except ValueError:
                pass
    return out


def metric(metrics, name, labels=""):
    return sum(v for (n, lab), v in metrics.items() if n == name and labels in lab)


class Fleet:
    """One compose project: the deploy files run with settings from the environment."""

    def __init__(self, seed, image, tls_dir=None, token="cubefleet-dev-token"):
        self.project = f"cubefleet-fleet-{seed}-{os.getpid()}".lower()
        self.compose = compose_command()
        self.image = image
        self.tls_dir = tls_dir
        self.token = token
        self.inputs = tempfile.mkdtemp(prefix="cubefleet-fleet-")
        os.chmod(self.inputs, 0o755)
        self.counters = {}     # name -> (sum over dead coordinator incarnations, last seen)

    # --- settings -------------------------------------------------------------------------
    def env(self, image=None):
        env = dict(os.environ)
        env.update({
            "CUBEFLEET_IMAGE": image or self.image,
            "CUBEFLEET_TOKEN": self.token,
            "CUBEFLEET_LEASE_SECONDS": str(LEASE_SECONDS),
            "CUBEFLEET_WORKER_THREADS": "1",
            "CUBEFLEET_GRPC_PORT": "127.0.0.1:0",
            "CUBEFLEET_HTTP_PORT": "127.0.0.1:0",
            "CUBEFLEET_COORDINATOR_URL": self.url(),
        })
        if self.tls_dir:
            env["CUBEFLEET_TLS_DIR"] = self.tls_dir
        return env

    def url(self):
        return ("https" if self.tls_dir else "http") + f"://coordinator:{GRPC_PORT}"

    def files(self):
        f = ["-f", os.path.join(DEPLOY, "compose.yaml")]
        if self.tls_dir:
            f += ["-f", os.path.join(DEPLOY, "compose.tls.yaml")]
        return f

    def run_compose(self, *args, image=None, check=True, timeout=600, capture=True):
        cmd = self.compose + ["-p", self.project, "--project-directory", DEPLOY] + self.files() + list(args)
        p = subprocess.run(cmd, cwd=DEPLOY, env=self.env(image), capture_output=capture, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise Failure(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    # --- containers -----------------------------------------------------------------------
    def containers(self, service, all_states=False):
        cmd = ["docker", "ps", "-q", "--no-trunc", "--filter", f"label=com.docker.compose.project={self.project}",
               "--filter", f"label=com.docker.compose.service={service}",
               "--filter", "label=com.docker.compose.oneoff=False"]
        if all_states:
            cmd.insert(2, "-a")
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
        return sorted(out)

    def inspect(self, container, fmt):
        return subprocess.run(["docker", "inspect", "-f", fmt, container], capture_output=True,
                              text=True, check=True).stdout.strip()

    def network(self):
        return f"{self.project}_default"

    def http(self, path, token=True, timeout=5):
        """GET from the coordinator's HTTP port, published on 127.0.0.1 at a port Docker chose."""
        coord = self.containers("coordinator")
        if not coord:
            raise ConnectionError("no coordinator container running")
        port = subprocess.run(["docker", "port", coord[0], f"{COORD_HTTP_PORT}/tcp"], capture_output=True,
                              text=True).stdout.split("\n")[0].strip()
        if not port:
            raise ConnectionError("coordinator's HTTP port not published (yet)")
        # with TLS the page is HTTPS under the gRPC certificate (made for the name
        # `coordinator`, reached here through 127.0.0.1: the chain is checked against the test
        # CA, the name is not)
        scheme, context = "http", None
        if self.tls_dir:
            scheme = "https"
            context = ssl.create_default_context(cafile=os.path.join(self.tls_dir, "ca.pem"))
            context.check_hostname = False
        req = urllib.request.Request(f"{scheme}://{port.replace('0.0.0.0', '127.0.0.1')}{path}")
        if token:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            return r.read().decode()

    def workers(self, prefix):
        """The registered worker sessions (as /api/status shows them) whose name starts with
        `prefix` (a container's short id: worker names are host-pid); /metrics names none."""
        status = json.loads(self.http("/api/status"))
        return [w for w in status["workers"] if w["name"].startswith(prefix)]

    def metrics(self):
        """The coordinator's /metrics; counters summed over its restarts (a drop = a new process)."""
        m = parse_metrics(self.http("/metrics", token=False))
        for name in ("cubefleet_lease_expiries_total", "cubefleet_results_rejected_total",
                     "cubefleet_results_verified_total"):
            v = metric(m, name)
            base, last = self.counters.get(name, (0.0, 0.0))
            if v < last:
                base += last
            self.counters[name] = (base, v)
        return m

    def counter(self, name):
        base, last = self.counters.get(name, (0.0, 0.0))
        return int(base + last)

    # --- lifecycle ------------------------------------------------------------------------
    def start(self, workers=WORKERS):
        """Coordinator (after the tables service has built the tables) and `workers` workers."""
        self.run_compose("up", "-d", "--scale", f"worker={workers}", "coordinator", "worker",
                         timeout=1200)
        wait_for("coordinator serving /metrics", lambda: self.metrics() is not None, 120)
        wait_for(f"{workers} workers registered",
                 lambda: metric(self.metrics(), "cubefleet_workers") >= workers, 120)

    def reset(self):
        """Removes coordinator, workers and the store (the tables volume stays)."""
        self.run_compose("rm", "-f", "-s", "-v", "coordinator", "worker", check=False)
        vols = subprocess.run(["docker", "volume", "ls", "-q", "--filter",
                               f"label=com.docker.compose.project={self.project}"],
                              capture_output=True, text=True).stdout.split()
        for v in vols:
            if v.endswith("_sled"):
                subprocess.run(["docker", "volume", "rm", "-f", v], capture_output=True)
        self.counters = {}

    def down(self):
        self.run_compose("down", "-v", "--remove-orphans", "-t", "5", check=False, timeout=300)
        shutil.rmtree(self.inputs, ignore_errors=True)

    def dump(self):
        """What to read when a test failed."""
        print("---- compose ps", flush=True)
        print(self.run_compose("ps", check=False).stdout, flush=True)
        p = self.run_compose("logs", "--no-color", "--tail", "60", check=False)
        text = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
        print("---- compose logs (last 60 lines each)\n" + text, flush=True)

    # --- the client container -------------------------------------------------------------
    def client(self, *args, token=None, timeout=300, check=True, url=None):
        """`docker compose run --rm --no-deps -T -v INPUTS:/in:ro worker ARGS --coordinator URL`."""
        extra = []
        if token is not None:
            extra = ["-e", f"CUBEFLEET_TOKEN={token}"]
        return self.run_compose("run", "--rm", "--no-deps", "-T", *extra, "-v", f"{self.inputs}:/in:ro",
                                "worker", *args, "--coordinator", url or self.url(),
                                check=check, timeout=timeout)

    def submit(self, name, lines):
        path = os.path.join(self.inputs, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o644)
        p = self.client("submit", f"/in/{name}", "--optimal")
        ids = [w for w in p.stdout.split() if w.strip()]
        if not ids:
            raise Failure(f"submit printed no batch id: {p.stdout!r} {p.stderr!r}")
        return ids[-1]

    def results(self, batch):
        p = self.client("results", batch, timeout=600)
        return [json.loads(x) for x in p.stdout.splitlines() if x.strip()]

    def requeued_at_open(self):
        """Jobs the coordinator container queued again when it opened its store (the leases it
        held when it was killed or replaced), from its log lines `store opened ... requeued=N`."""
        n = 0
        for c in self.containers("coordinator"):
            p = subprocess.run(["docker", "logs", c], capture_output=True, text=True)
            for line in (p.stdout + p.stderr).splitlines():
                line = re.sub(r"\x1b\[[0-9;]*m", "", line)
                if "store opened" in line:
                    m = re.search(r"requeued=(\d+)", line)
                    n += int(m.group(1)) if m else 0
        return n

    def done_count(self):
        return metric(self.metrics(), "cubefleet_jobs", 'state="done"')


def wait_for(what, cond, timeout, every=0.5):
    """Polls `cond` until it is true; connection errors count as false."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except (OSError, urllib.error.URLError, ConnectionError, subprocess.SubprocessError) as e:
            last = e
        time.sleep(every)
    raise Failure(f"timed out after {timeout} s waiting for {what}" + (f" (last error: {last})" if last else ""))


def done_lines(results):
    return {r["index"]: r for r in results if r.get("status") not in ("queued", "leased")}


def verify(lines, results, before=None):
    """Every line answered once, each answer checked by the cube model; `before`: results seen
    earlier, each of which must be unchanged."""
    seen = {}
    for r in results:
        i = r["index"]
        if i in seen:
            raise Failure(f"line {i} answered twice: {seen[i]} and {r}")
        seen[i] = r
    missing = sorted(set(range(len(lines))) - set(seen))
    extra = sorted(set(seen) - set(range(len(lines))))
    if missing or extra:
        raise Failure(f"{len(missing)} lines unanswered (first {missing[:5]}), {len(extra)} unknown ({extra[:5]})")
    bad = []
    for i, line in enumerate(lines):
        r = seen[i]
        if r["input"] != line:
            bad.append(f"line {i}: input {r['input']!r} is not {line!r}")
        elif r["status"] != "solved" or not r.get("optimal"):
            bad.append(f"line {i}: status {r['status']}, optimal {r.get('optimal')}")
        elif not cube.solves(line, r["solution"]):
            bad.append(f"line {i}: {r['solution']!r} does not solve {line!r}")
        elif r["length"] != len(r["solution"].split()) or r["length"] > len(line.split()):
            bad.append(f"line {i}: length {r['length']} for {r['solution']!r} of a {len(line.split())}-move scramble")
    for i, r in (before or {}).items():
        if seen[i].get("solution") != r.get("solution") or seen[i]["status"] != r["status"]:
            bad.append(f"line {i}: was {r['status']} {r.get('solution')!r} before the fault, now "
                       f"{seen[i]['status']} {seen[i].get('solution')!r}")
    if bad:
        raise Failure(f"{len(bad)} bad answers:\n  " + "\n  ".join(bad[:20]))
    return len(seen)


# --- the tests ------------------------------------------------------------------------------
class Test:
    """One batch through the fleet with one fault."""

    def __init__(self, fleet, name, rng, lines):
        self.fleet, self.name, self.rng, self.lines = fleet, name, rng, lines
        self.batch = None
        self.before = {}

    def begin(self):
        self.batch = self.fleet.submit(f"{self.name}.txt", self.lines)
        log(f"{self.name}: batch {self.batch}, {len(self.lines)} lines submitted (acknowledged)")

    def wait_progress(self, fraction):
        """Until a random share around `fraction` of the lines is done (the seed picks it)."""
        target = int(len(self.lines) * fraction * self.rng.uniform(0.8, 1.2))
        wait_for(f"{target} lines done", lambda: self.fleet.done_count() >= target, 600)
        m = self.fleet.metrics()
        queued, work = metric(m, "cubefleet_jobs", 'state="queued"'), metric(m, AUTOSCALE_METRIC)
        if queued > 0 and work <= 0:
            raise Failure(f"{AUTOSCALE_METRIC} is {work} with {queued} jobs queued: the autoscaler would see no work")
        log(f"{self.name}: {int(self.fleet.done_count())} of {len(self.lines)} done; "
            f"{AUTOSCALE_METRIC} {work:.1f} with {int(queued)} queued")

    def snapshot(self):
        self.before.update(done_lines(self.fleet.results(self.batch)))
        log(f"{self.name}: {len(self.before)} lines seen done")

    def finish(self):
        n = len(self.lines)
        wait_for("the batch to finish", lambda: self.fleet.done_count() >= n, 900, every=1)
        results = self.fleet.results(self.batch)
        verified = verify(self.lines, results, self.before)
        expired = self.fleet.counter("cubefleet_lease_expiries_total")
        rejected = self.fleet.counter("cubefleet_results_rejected_total")
        requeued = self.fleet.requeued_at_open()
        log(f"{self.name}: ok: {verified} lines answered once and verified by the test; "
            f"{len(self.before)} seen done before the fault unchanged; jobs re-leased: {expired} after "
            f"their lease expired, requeued={requeued} logged by the coordinator at its starts; results rejected: {rejected}")
        return {"test": self.name, "lines": verified, "leases_expired": expired,
                "requeued_at_restart": requeued, "results_rejected": rejected,
                "seen_before": len(self.before)}


def expiries_after(fleet, start, seconds):
    """Waits at least `seconds` and until the lease expiry counter has risen above `start`."""
    t0 = time.monotonic()
    wait_for("leases to expire", lambda: fleet.metrics() is not None
             and fleet.counter("cubefleet_lease_expiries_total") > start
             and time.monotonic() - t0 >= seconds, LEASE_SECONDS * 6)


def test_network_cut(fleet, t):
    fleet.start()
    t.begin()
    t.wait_progress(0.2)
    t.snapshot()
    victim = t.rng.choice(fleet.containers("worker"))
    fleet.metrics()
    start = fleet.counter("cubefleet_lease_expiries_total")
    subprocess.run(["docker", "network", "disconnect", fleet.network(), victim], check=True)
    log(f"{t.name}: worker {victim[:12]} cut off")
    expiries_after(fleet, start, LEASE_SECONDS + 4)
    subprocess.run(["docker", "network", "connect", fleet.network(), victim], check=True)
    prefix = f"{victim[:12]}-"
    before = sum(w["completed"] for w in fleet.workers(prefix))
    log(f"{t.name}: worker {victim[:12]} reconnected after the expiry counter rose to "
        f"{fleet.counter('cubefleet_lease_expiries_total')}")
    result = t.finish()
    result["cut_worker_results_after_reconnect"] = int(
        sum(w["completed"] for w in fleet.workers(prefix)) - before)
    log(f"{t.name}: the cut worker reported {result['cut_worker_results_after_reconnect']} results after it was reconnected")
    return result


def test_coordinator_kill(fleet, t):
    fleet.start()
    t.begin()
    t.wait_progress(0.3)
    t.snapshot()
    coord = fleet.containers("coordinator")[0]
    fleet.metrics()
    subprocess.run(["docker", "kill", "--signal", "KILL", coord], check=True, capture_output=True)
    log(f"{t.name}: coordinator {coord[:12]} SIGKILLed")
    # the restart policy may start it again by itself; if not, start it as an operator would
    time.sleep(1)
    if fleet.inspect(coord, "{{.State.Running}}") != "true":
        subprocess.run(["docker", "start", coord], check=True, capture_output=True)
    wait_for("the coordinator back", lambda: fleet.metrics() is not None, 120)
    log(f"{t.name}: coordinator back on its volume, {int(fleet.done_count())} done")
    return t.finish()


def held(fleet, container):
    """The jobs a worker container's sessions hold leases on, as /api/status says."""
    return sum(w["held"] for w in fleet.workers(f"{container[:12]}-"))


def test_pause(fleet, t):
    fleet.start()
    t.begin()
    t.wait_progress(0.3)
    t.snapshot()
    fleet.metrics()
    start = fleet.counter("cubefleet_lease_expiries_total")
    # a fast batch may be leased out whole, and a worker between its results and its next
    # lease holds nothing: a frozen worker whose hands are (or become) empty is let go and
    # another is frozen, until the leases of one expire
    for _ in range(20):
        victim = t.rng.choice(fleet.containers("worker"))
        subprocess.run(["docker", "pause", victim], check=True, capture_output=True)
        paused = time.monotonic()
        log(f"{t.name}: worker {victim[:12]} paused holding {held(fleet, victim)} leases")

        def expired():
            return fleet.metrics() is not None and fleet.counter("cubefleet_lease_expiries_total") > start

        try:
            wait_for("the frozen worker's leases to expire or its hands to be empty",
                     lambda: expired() or held(fleet, victim) == 0, LEASE_SECONDS * 6)
            if expired():
                expiries_after(fleet, start, LEASE_SECONDS + 2 - (time.monotonic() - paused))
                break
        finally:
            subprocess.run(["docker", "unpause", victim], capture_output=True)
        log(f"{t.name}: worker {victim[:12]} held nothing: unpaused before its leases could expire")
    else:
        raise Failure("no frozen worker held a lease long enough for it to expire, 20 times")
    log(f"{t.name}: worker {victim[:12]} unpaused after its leases expired "
        f"({fleet.counter('cubefleet_lease_expiries_total')} expired)")
    return t.finish()


def test_rolling_upgrade(fleet, t, next_image):
    fleet.start()
    t.begin()
    t.wait_progress(0.1)
    new_id = fleet.inspect(next_image, "{{.Id}}")
    upgraded = set()
    for old in fleet.containers("worker"):
        # SIGTERM: the worker drains (finishes or hands back its jobs) and exits
        subprocess.run(["docker", "stop", "-t", str(WORKER_DRAIN_S + 15), old], check=True, capture_output=True)
        subprocess.run(["docker", "rm", "-v", old], check=True, capture_output=True)
        fleet.run_compose("up", "-d", "--no-deps", "--no-recreate", "--scale", f"worker={WORKERS}",
                          "worker", image=next_image)
        new = [c for c in fleet.containers("worker")
               if fleet.inspect(c, "{{.Image}}") == new_id and c not in upgraded]
        if len(new) != 1:
            raise Failure(f"expected one new worker on {next_image}, found {len(new)}")
        upgraded.add(new[0])
        wait_for("the new worker registered", lambda: any(
            w["threads"] > 0 for w in fleet.workers(f"{new[0][:12]}-")), 180)
        log(f"{t.name}: worker {old[:12]} drained and replaced by {new[0][:12]} on {next_image} "
            f"({int(fleet.done_count())} done)")
    t.snapshot()
    fleet.run_compose("up", "-d", "--no-deps", "coordinator", image=next_image)
    wait_for("the upgraded coordinator serving", lambda: fleet.metrics() is not None, 120)
    coord = fleet.containers("coordinator")
    if len(coord) != 1 or fleet.inspect(coord[0], "{{.Image}}") != new_id:
        raise Failure("the coordinator was not replaced by the new image")
    log(f"{t.name}: coordinator replaced by {next_image}")
    result = t.finish()
    for c in fleet.containers("worker") + fleet.containers("coordinator"):
        if fleet.inspect(c, "{{.Image}}") != new_id:
            raise Failure(f"container {c[:12]} still runs the old image")
    return result


def test_tls_and_tokens(fleet, t):
    fleet.start()
    # refused: a wrong token (over TLS), and plain text to the TLS port
    p = fleet.client("status", token="not-the-token", check=False, timeout=120)
    if p.returncode == 0:
        raise Failure(f"a client with a wrong token was served: {p.stdout}")
    p = fleet.client("status", check=False, timeout=120, url=f"http://coordinator:{GRPC_PORT}")
    if p.returncode == 0:
        raise Failure(f"a plain-text client was served by the TLS coordinator: {p.stdout}")
    try:
        fleet.http("/api/status", token=False)
        raise Failure("/api/status answered without the token")
    except urllib.error.HTTPError as e:
        if e.code != 401:
            raise
    log(f"{t.name}: wrong token and plain text refused; /api/status needs the token")
    t.begin()
    t.wait_progress(0.3)
    t.snapshot()
    coord = fleet.containers("coordinator")[0]
    subprocess.run(["docker", "kill", "--signal", "KILL", coord], check=True, capture_output=True)
    time.sleep(1)
    if fleet.inspect(coord, "{{.State.Running}}") != "true":
        subprocess.run(["docker", "start", coord], check=True, capture_output=True)
    wait_for("the coordinator back", lambda: fleet.metrics() is not None, 120)
    log(f"{t.name}: coordinator SIGKILLed and started again under TLS")
    return t.finish()


def make_tls(directory):
    """A CA and a certificate for `coordinator` signed by it, with openssl."""
    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)
    ssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-days", "2", "-subj", "/CN=cubefleet fleet test CA", "-keyout", "ca.key", "-out", "ca.pem")
    ssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", "/CN=coordinator", "-keyout", "key.pem", "-out", "cert.csr")
    with open(os.path.join(directory, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:coordinator\nbasicConstraints=CA:FALSE\n"
                "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    ssl("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext.cnf", "-out", "cert.pem")
    os.chmod(directory, 0o755)
    for f in ("ca.pem", "cert.pem", "key.pem"):
        os.chmod(os.path.join(directory, f), 0o644)   # test keys, read by the image's uid 10001


def remove_anonymous_volumes(before):
    """Removes the anonymous volumes (the image's VOLUMEs that no compose volume covers) that
    appeared during the run and that no container uses any more: Compose v1 leaves some behind
    when it recreates a container or removes a one-off client."""
    now = subprocess.run(["docker", "volume", "ls", "-q", "--filter", "dangling=true"],
                         capture_output=True, text=True).stdout.split()
    for v in set(now) - before:
        labels = subprocess.run(["docker", "volume", "inspect", "-f", "{{len .Labels}}", v],
                                capture_output=True, text=True).stdout.strip()
        if labels == "0" and re.fullmatch(r"[0-9a-f]{64}", v):
            subprocess.run(["docker", "volume", "rm", v], capture_output=True)


TESTS = ["network_cut", "coordinator_kill", "pause", "rolling_upgrade", "tls_and_tokens"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tests", nargs="*", metavar="TEST", help=" ".join(TESTS))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CUBEFLEET_FLEET_SEED", "0")) or None)
    ap.add_argument("--image", default="cubefleet:local")
    ap.add_argument("--next-image", default="cubefleet:next")
    ap.add_argument("--lines", type=int, default=LINES)
    args = ap.parse_args()
    seed = args.seed or random.SystemRandom().randrange(1, 2**31)
    tests = args.tests or TESTS
    for name in tests:
        if name not in TESTS:
            ap.error(f"unknown test {name}: one of {' '.join(TESTS)}")
    log(f"fleet suite: seed {seed} (replay: CUBEFLEET_FLEET_SEED={seed} python3 tests/fleet/fleet.py "
        f"{' '.join(tests)}), image {args.image}, next image {args.next_image}")
    for image in {args.image, args.next_image} if "rolling_upgrade" in tests else {args.image}:
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0:
            raise SystemExit(f"image {image} missing: build it with deploy/build-image.sh --tag {image}")
    t0 = time.monotonic()
    volumes_before = set(subprocess.run(["docker", "volume", "ls", "-q"], capture_output=True,
                                        text=True).stdout.split())
    passed, failed, summary = [], [], []
    plain = Fleet(seed, args.image)
    tls_dir = tempfile.mkdtemp(prefix="cubefleet-fleet-tls-")
    make_tls(tls_dir)
    secure = Fleet(seed, args.image, tls_dir=tls_dir, token=f"fleet-{random.Random(seed).getrandbits(64):016x}")
    secure.project = plain.project            # the same tables volume
    secure.counters = {}
    try:
        for i, name in enumerate(tests):
            fleet = secure if name == "tls_and_tokens" else plain
            rng = random.Random(f"{seed}-{name}")
            lines = cube.scrambles(f"{seed}-{name}-lines", args.lines, SCRAMBLE_LENGTH)
            t = Test(fleet, name, rng, lines)
            started = time.monotonic()
            log(f"=== {name}")
            try:
                plain.reset()
                if name == "rolling_upgrade":
                    summary.append(test_rolling_upgrade(fleet, t, args.next_image))
                else:
                    summary.append(globals()[f"test_{name}"](fleet, t))
                passed.append(name)
                log(f"=== {name}: passed in {time.monotonic() - started:.0f} s")
            except (Failure, subprocess.SubprocessError, OSError, KeyError, ValueError) as e:
                failed.append(name)
                log(f"=== {name}: FAILED after {time.monotonic() - started:.0f} s: {e}")
                fleet.dump()
    finally:
        if os.environ.get("CUBEFLEET_FLEET_KEEP") != "1":
            plain.run_compose("rm", "-f", "-s", "-v", check=False)
            secure.down()
            plain.down()
            shutil.rmtree(tls_dir, ignore_errors=True)
            remove_anonymous_volumes(volumes_before)
    for s in summary:
        log("summary: " + json.dumps(s))
    log(f"fleet suite: seed {seed}, {time.monotonic() - t0:.0f} s")
    print(f"fleet: {len(passed)} passed, {len(failed)} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
