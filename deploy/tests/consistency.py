#!/usr/bin/env python3
"""Cross-file checks of deploy/ that no schema can express.

usage: consistency.py DEPLOY_DIR RENDERED_BASE.yaml RENDERED_OVERLAY.yaml...

Checks, against the binary's contract (subcommands, flags, ports, health service, metric names):
  - every `cubefleet` invocation in compose.yaml, the rendered Kubernetes manifests, the systemd
    units and the README's shell blocks uses a known subcommand and only its known flags;
  - Kubernetes: selectors match pod labels, Services/NetworkPolicies select existing pods and name
    existing ports, the StatefulSet's serviceName is a headless Service, probes use the named gRPC
    health service, termination grace periods cover the drains, every referenced Secret exists in
    the overlay, the ScaledObject targets the worker Deployment on the queued-work metric, one
    namespace and consistent labels everywhere;
  - compose: workers publish no host port (scalable), mount the tables read-only with --no-build,
    wait for the tables service; Prometheus targets are compose services and ports;
  - Dockerfile: entrypoint, CUBEFLEET_TABLES, volumes, non-root user.
Exits 1 with one line per problem.
"""
import os
import re
import shlex
import sys

import yaml

# --- the binary's contract -------------------------------------------------------------------
FLAGS = {
    ("coordinator",): {"--listen", "--data", "--http", "--token", "--tls-cert", "--tls-key", "--lease"},
    ("worker",): {"--coordinator", "--tables", "--threads", "--token", "--no-build", "--http"},
    ("tables", "build"): {"--dir", "--huge", "--giant", "--force"},
    ("tables", "verify"): {"--dir"},
    ("tables", "info"): {"--dir", "--json"},
    ("submit",): {"--coordinator", "--wait", "--optimal", "--max-length"},
    ("status",): {"--coordinator", "--json", "--watch"},
    ("results",): {"--coordinator"},
    ("scramble",): {"--count", "--seed"},
    ("solve",): set(),
    ("run",): set(),
    ("bench",): set(),
    ("certs",): {"--name", "--out", "--days"},
}
BOOLEAN = {"--no-build", "--huge", "--giant", "--force", "--json", "--wait", "--watch"}
from contract import (AUTOSCALE_METRIC, COORD_HTTP_PORT, GRPC_PORT, HEALTH_SERVICE,  # noqa: E402
                      NAMESPACE, WORKER_DRAIN_S, WORKER_HTTP_PORT)

problems = []


def bad(msg):
    problems.append(msg)


checked = []


def check_args(where, argv):
    """argv: the arguments after `cubefleet` (may contain ${VAR} placeholders)."""
    checked.append(where)
    if not argv or argv[0] in ("--help", "-h", "--version", "help"):
        return
    key = tuple(argv[:2]) if argv[0] == "tables" else (argv[0],)
    if key not in FLAGS:
        bad(f"{where}: unknown subcommand `cubefleet {' '.join(key)}`")
        return
    rest = argv[len(key):]
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("$"):           # systemd "$EXTRA_ARGS": free-form by design
            i += 1
            continue
        if a.startswith("--"):
            flag = a.split("=")[0]
            if flag not in FLAGS[key]:
                bad(f"{where}: `cubefleet {' '.join(key)}` has no flag {flag}")
            if flag not in BOOLEAN and "=" not in a:
                if i + 1 >= len(rest) or rest[i + 1].startswith("--"):
                    bad(f"{where}: {flag} needs a value")
                i += 1
        i += 1


def cubefleet_calls(words):
    """Split a shell word list at && || ; | and yield the args of each command that runs
    cubefleet: `cubefleet ...`, `.../cubefleet ...`, also after `sudo`, `exec`, `flock FILE` or
    VAR=value assignments."""
    cmd = []
    for w in words + ["&&"]:
        if w not in ("&&", "||", ";", "|"):
            cmd.append(w)
            continue
        while cmd and (cmd[0] in ("sudo", "exec") or re.match(r"^[A-Z_]+=", cmd[0])):
            cmd = cmd[1:]
        if cmd[:1] == ["flock"]:
            cmd = cmd[2:]
        if cmd and (cmd[0] == "cubefleet" or cmd[0].endswith("/cubefleet")):
            yield cmd[1:]
        cmd = []


# --- Dockerfile ------------------------------------------------------------------------------
def check_dockerfile(d):
    text = open(os.path.join(d, "Dockerfile"), encoding="utf-8").read()
    for needle, what in [
        ('ENTRYPOINT ["cubefleet"]', "entrypoint cubefleet"),
        ("ENV CUBEFLEET_TABLES=/tables", "CUBEFLEET_TABLES=/tables"),
        ('VOLUME ["/tables", "/var/lib/cubefleet"]', "the two volumes"),
        ("rust:1.95-bookworm", "rust:1.95-bookworm builder"),
        ("debian:bookworm-slim", "debian:bookworm-slim runtime"),
        ("cargo build --profile dist --locked -p cubefleet", "the workspace build command"),
    ]:
        if needle not in text:
            bad(f"Dockerfile: missing {what} ({needle})")
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    if not users or users[-1].split(":")[0] in ("root", "0"):
        bad("Dockerfile: the final USER must be non-root")


# --- compose ---------------------------------------------------------------------------------
def check_compose(d):
    c = yaml.safe_load(open(os.path.join(d, "compose.yaml"), encoding="utf-8"))
    svcs = c["services"]
    for name, s in svcs.items():
        if "prometheus" in name:
            continue
        cmd = s.get("command")
        if not isinstance(cmd, list):
            bad(f"compose {name}: command must be a list")
            continue
        check_args(f"compose {name}", [re.sub(r"\$\{[^}]*\}", "2", x) for x in cmd])
    w = svcs["worker"]
    if "ports" in w:
        bad("compose worker: publishes host ports, so --scale worker=N would collide")
    if "container_name" in w:
        bad("compose worker: container_name prevents scaling")
    if "--no-build" not in w["command"]:
        bad("compose worker: must run with --no-build")
    ro = [v for v in w.get("volumes", []) if isinstance(v, dict) and v.get("target") == "/tables"]
    if not ro or not ro[0].get("read_only"):
        bad("compose worker: the tables volume must be mounted read-only at /tables")
    for svc in ("worker", "coordinator"):
        dep = svcs[svc].get("depends_on", {}).get("tables", {})
        if dep.get("condition") != "service_completed_successfully":
            bad(f"compose {svc}: must wait for the tables service to complete")
    if svcs["tables"]["command"][:2] != ["tables", "build"]:
        bad("compose tables: must run `tables build`")
    vols = svcs["coordinator"].get("volumes", [])
    if not any(str(v).split(":")[0] in c.get("volumes", {}) and str(v).endswith(":/var/lib/cubefleet")
               for v in vols):
        bad("compose coordinator: sled must live in a named volume at /var/lib/cubefleet")
    # compose.tls.yaml: compose.yaml's coordinator command plus the TLS flags, nothing else
    tls = yaml.safe_load(open(os.path.join(d, "compose.tls.yaml"), encoding="utf-8"))["services"]
    tls_cmd = tls["coordinator"]["command"]
    check_args("compose.tls.yaml coordinator", [re.sub(r"\$\{[^}]*\}", "2", x) for x in tls_cmd])
    if tls_cmd != svcs["coordinator"]["command"] + ["--tls-cert", "/tls/cert.pem", "--tls-key", "/tls/key.pem"]:
        bad("compose.tls.yaml: the coordinator's command is not compose.yaml's plus --tls-cert/--tls-key")
    if set(tls) - {"coordinator", "worker"} or "command" in tls.get("worker", {}):
        bad("compose.tls.yaml: may only add TLS to the coordinator and environment/volumes to workers")
    grace = svcs["worker"].get("stop_grace_period", "10s")
    if int(grace.rstrip("s")) <= WORKER_DRAIN_S:
        bad(f"compose worker: stop_grace_period {grace} does not cover the {WORKER_DRAIN_S} s drain")
    prom = yaml.safe_load(open(os.path.join(d, "prometheus.yml"), encoding="utf-8"))
    seen = set()
    for job in prom["scrape_configs"]:
        for sc in job.get("static_configs", []):
            for t in sc["targets"]:
                host, port = t.split(":")
                seen.add((host, int(port)))
        for sd in job.get("dns_sd_configs", []):
            for n in sd["names"]:
                seen.add((n, int(sd["port"])))
    if seen != {("coordinator", COORD_HTTP_PORT), ("worker", WORKER_HTTP_PORT)}:
        bad(f"prometheus.yml: targets {sorted(seen)} are not coordinator:{COORD_HTTP_PORT} + worker:{WORKER_HTTP_PORT}")
    for host, _ in seen:
        if host not in svcs:
            bad(f"prometheus.yml: {host} is no compose service")


# --- Kubernetes ------------------------------------------------------------------------------
def pod_specs(docs):
    for d in docs:
        if d["kind"] in ("Deployment", "StatefulSet"):
            yield d, d["spec"]["template"]


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def check_k8s(docs, where, overlay):
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
        meta = d["metadata"]
        ns = meta["name"] if d["kind"] == "Namespace" else meta.get("namespace")
        if ns != NAMESPACE:
            bad(f"{where}: {d['kind']}/{meta['name']} is in namespace {ns}")
        labels = meta.get("labels", {})
        if labels.get("app.kubernetes.io/part-of") != "cubefleet":
            bad(f"{where}: {d['kind']}/{meta['name']} lacks app.kubernetes.io/part-of=cubefleet")
    pods = list(pod_specs(docs))
    ports = {}
    secrets = {s["metadata"]["name"] for s in by_kind.get("Secret", [])}
    for wl, tpl in pods:
        name = f"{wl['kind']}/{wl['metadata']['name']}"
        sel = wl["spec"]["selector"]["matchLabels"]
        if not matches(sel, tpl["metadata"]["labels"]):
            bad(f"{where}: {name}: selector does not match its pod labels")
        comp = tpl["metadata"]["labels"].get("app.kubernetes.io/component")
        spec = tpl["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            for p in c.get("ports", []):
                ports[(comp, p["name"])] = p["containerPort"]
            if c.get("command"):
                argv = c["command"] + c.get("args", [])
                if argv[0].endswith("sh") and argv[1:2] == ["-c"]:
                    argv = shlex.split(argv[2].replace("&&", " && "))
                calls = list(cubefleet_calls(argv))
                if not calls:
                    bad(f"{where} {name}/{c['name']}: command runs no cubefleet")
                for call in calls:
                    check_args(f"{where} {name}/{c['name']}", call)
            else:
                check_args(f"{where} {name}/{c['name']}", c.get("args", []))
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref and overlay and ref["name"] not in secrets:
                    bad(f"{where}: {name}/{c['name']} uses Secret {ref['name']}, which is not generated")
        grace = spec.get("terminationGracePeriodSeconds", 30)
        if comp == "worker":
            if grace <= WORKER_DRAIN_S:
                bad(f"{where}: {name}: terminationGracePeriodSeconds {grace} does not cover the drain")
            c = spec["containers"][0]
            if "--no-build" not in c["args"]:
                bad(f"{where}: {name}: workers must not build tables (--no-build)")
            if not any(m["mountPath"] == "/tables" and m.get("readOnly") for m in c["volumeMounts"]):
                bad(f"{where}: {name}: /tables must be mounted read-only")
            res = c.get("resources", {})
            threads = int(c["args"][c["args"].index("--threads") + 1])
            mem = res.get("requests", {}).get("memory", "0Mi")
            mib = int(mem[:-2]) * (1024 if mem.endswith("Gi") else 1)
            # the standard tables are ~960 MB, mapped (and charged to the pod that reads them first)
            if mib < 1000 + 50 * threads:
                bad(f"{where}: {name}: memory request {mem} < 1000 MB + 50 MB x {threads} threads")
            if "limits" not in res or "memory" not in res["limits"]:
                bad(f"{where}: {name}: no memory limit")
        if comp == "coordinator":
            c = spec["containers"][0]
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                g = c.get(probe, {}).get("grpc")
                if not g or g.get("port") != GRPC_PORT or g.get("service") != HEALTH_SERVICE:
                    bad(f"{where}: {name}: {probe} must be gRPC on {GRPC_PORT}, service {HEALTH_SERVICE}")
            if not wl["spec"].get("volumeClaimTemplates"):
                bad(f"{where}: {name}: no PVC for sled")
            if wl["spec"].get("replicas") != 1:
                bad(f"{where}: {name}: the coordinator must have exactly one replica")
    pod_labels = [tpl["metadata"]["labels"] for _, tpl in pods]
    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    for s in services.values():
        sel = s["spec"].get("selector", {})
        hit = [lab for lab in pod_labels if matches(sel, lab)]
        if not hit:
            bad(f"{where}: Service/{s['metadata']['name']} selects no pod")
            continue
        comp = hit[0].get("app.kubernetes.io/component")
        for p in s["spec"]["ports"]:
            if isinstance(p["targetPort"], str) and (comp, p["targetPort"]) not in ports:
                bad(f"{where}: Service/{s['metadata']['name']}: no container port named {p['targetPort']}")
    for sts in by_kind.get("StatefulSet", []):
        gov = services.get(sts["spec"]["serviceName"])
        if not gov or gov["spec"].get("clusterIP") != "None":
            bad(f"{where}: StatefulSet/{sts['metadata']['name']}: serviceName is not a headless Service")
    for np in by_kind.get("NetworkPolicy", []):
        sel = np["spec"]["podSelector"]["matchLabels"]
        hit = [lab for lab in pod_labels if matches(sel, lab)]
        if not hit:
            bad(f"{where}: NetworkPolicy/{np['metadata']['name']} selects no pod")
            continue
        comp = hit[0].get("app.kubernetes.io/component")
        for rule in np["spec"].get("ingress", []):
            for p in rule.get("ports", []):
                if p["port"] not in {v for (k, _), v in ports.items() if k == comp}:
                    bad(f"{where}: NetworkPolicy/{np['metadata']['name']}: port {p['port']} is not a {comp} port")
    allowed = {(np["metadata"]["name"], p["port"]) for np in by_kind.get("NetworkPolicy", [])
               for r in np["spec"].get("ingress", []) for p in r.get("ports", [])}
    for need in [("cubefleet-coordinator", GRPC_PORT), ("cubefleet-coordinator", COORD_HTTP_PORT),
                 ("cubefleet-worker", WORKER_HTTP_PORT)]:
        if need not in allowed:
            bad(f"{where}: no NetworkPolicy admits traffic to {need[0]} port {need[1]}")
    deployments = {d["metadata"]["name"] for d in by_kind.get("Deployment", [])}
    for so in by_kind.get("ScaledObject", []):
        if so["spec"]["scaleTargetRef"]["name"] not in deployments:
            bad(f"{where}: ScaledObject/{so['metadata']['name']} targets a missing Deployment")
        for t in so["spec"]["triggers"]:
            if t["type"] == "prometheus" and AUTOSCALE_METRIC not in t["metadata"]["query"]:
                bad(f"{where}: ScaledObject trigger does not use {AUTOSCALE_METRIC}")
    if not overlay and not by_kind.get("ScaledObject") and not by_kind.get("HorizontalPodAutoscaler"):
        bad(f"{where}: no autoscaler in the base")
    if overlay and not secrets:
        bad(f"{where}: the overlay generates no Secret")


# --- systemd ---------------------------------------------------------------------------------
def check_systemd(d):
    sd = os.path.join(d, "systemd")
    for f in sorted(os.listdir(sd)):
        if not f.endswith(".service"):
            continue
        text = open(os.path.join(sd, f), encoding="utf-8").read()
        for line in text.splitlines():
            m = re.match(r"^Exec\w*=(.*)$", line)
            if m:
                words = shlex.split(m.group(1).replace("%i", "7781"))
                words = [re.sub(r"\$\{[^}]*\}", "X", w) for w in words]
                for call in cubefleet_calls(words):
                    check_args(f"systemd/{f}", call)
        if f != "cubefleet-tables.service":
            if "KillSignal=SIGTERM" not in text:
                bad(f"systemd/{f}: no KillSignal=SIGTERM")
            m = re.search(r"^TimeoutStopSec=(\d+)$", text, re.M)
            need = WORKER_DRAIN_S + 1 if "worker" in f else 10
            if not m or int(m.group(1)) < need:
                bad(f"systemd/{f}: TimeoutStopSec must be at least {need} s")
        for opt in ("NoNewPrivileges=yes", "ProtectSystem=strict", "DynamicUser=yes"):
            if opt not in text:
                bad(f"systemd/{f}: missing {opt}")


# --- README ----------------------------------------------------------------------------------
def check_readme(d):
    text = open(os.path.join(d, "README.md"), encoding="utf-8").read()
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.S):
        for raw in block.replace("\\\n", " ").splitlines():
            line = raw.split(" #")[0].strip()
            if not line or line.startswith("#"):
                continue
            try:
                words = shlex.split(line)
            except ValueError as e:
                bad(f"README: cannot parse `{line}`: {e}")
                continue
            words = [w for w in words if w]
            for call in cubefleet_calls(words):
                check_args(f"README `{line}`", call)
            # `docker compose run ... worker ARGS`: ARGS go to the cubefleet entrypoint
            # (`docker-compose` as well, and -f FILE options before `run`)
            compose = 2 if words[:2] == ["docker", "compose"] else 1 if words[:1] == ["docker-compose"] else 0
            if compose and "run" in words and "worker" in words[words.index("run"):]:
                check_args(f"README `{line}`", words[words.index("worker", words.index("run")) + 1:])
            # `kubectl run ... --image=...cubefleet... -- ARGS`: ARGS go to the entrypoint
            if words[:1] == ["kubectl"] and "run" in words and "--" in words:
                check_args(f"README `{line}`", words[words.index("--") + 1:])
            if words[:2] == ["kubectl", "apply"] and "-k" in words:
                path = words[words.index("-k") + 1]
                if not os.path.isfile(os.path.join(d, "..", path, "kustomization.yaml")):
                    bad(f"README `{line}`: no kustomization at {path}")
    # paths the README tells the operator to create
    created = ("deploy/.env", "deploy/k8s/overlays/prod", "deploy/tls")
    for ref in re.findall(r"\bdeploy/[\w./@-]+", text):
        ref = ref.rstrip(".")
        if ref.startswith(created):
            continue
        if not os.path.exists(os.path.join(d, "..", ref)):
            bad(f"README: {ref} does not exist")


def main():
    d, base, overlays = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not overlays:
        bad("no Kubernetes overlay rendered")
    check_dockerfile(d)
    check_compose(d)
    check_k8s([x for x in yaml.safe_load_all(open(base, encoding="utf-8")) if x], "k8s base", False)
    for overlay in overlays:
        docs = [x for x in yaml.safe_load_all(open(overlay, encoding="utf-8")) if x]
        check_k8s(docs, f"k8s {os.path.basename(overlay)}", True)
    check_systemd(d)
    check_readme(d)
    for p in problems:
        print("consistency:", p)
    if problems:
        sys.exit(1)
    print(f"consistency: ok ({len(checked)} cubefleet command lines checked against the CLI contract)")


if __name__ == "__main__":
    main()
