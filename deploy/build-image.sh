#!/usr/bin/env bash
# Builds the cubefleet image with no container registry: a Debian bookworm base made by debootstrap
# from Debian's packages and `docker import`ed, and the binary built on this host copied in through
# deploy/Dockerfile's target `prebuilt` (the Dockerfile's own Rust build stage is not used).
#
#   bash deploy/build-image.sh                      # -> cubefleet:local
#   bash deploy/build-image.sh --tag cubefleet:next # another tag (the fleet suite's rolling upgrade)
#
# Options (or environment):
#   --tag TAG        image to build (CUBEFLEET_IMAGE, default cubefleet:local)
#   --binary FILE    use this cubefleet binary instead of `cargo build --profile dist --locked -p cubefleet`
#                    (the fastest code: thin LTO, one codegen unit; BENCHMARKS.md has what it buys)
#                    (CUBEFLEET_BINARY)
#   --version TEXT   the image's org.opencontainers.image.version label (default: git describe)
#   --base IMAGE     the base image, made here when missing (CUBEFLEET_BASE_IMAGE,
#                    default cubefleet-base:bookworm); --rebuild-base makes it again
#   --base-only      make the base image when missing, and stop (CI makes it while the tests run)
# The mirror is CUBEFLEET_DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Needs: root (debootstrap), debootstrap (installed with apt-get when missing), Docker with BuildKit.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="${CUBEFLEET_IMAGE:-cubefleet:local}"
binary="${CUBEFLEET_BINARY:-}"
base="${CUBEFLEET_BASE_IMAGE:-cubefleet-base:bookworm}"
mirror="${CUBEFLEET_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
version=""
rebuild_base=false
base_only=false
while (($#)); do
    case "$1" in
        --tag) tag="$2"; shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        --version) version="$2"; shift 2 ;;
        --base) base="$2"; shift 2 ;;
        --rebuild-base) rebuild_base=true; shift ;;
        --base-only) base_only=true; shift ;;
        -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "build-image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [[ -z "$version" ]]; then
    version="$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
fi

as_root() {
    if [[ "$(id -u)" == 0 ]]; then "$@"; else sudo "$@"; fi
}

work="$(mktemp -d)"
cleanup() { as_root rm -rf "$work"; }
trap cleanup EXIT

# --- 1. the base: Debian bookworm from Debian's archive -----------------------------------------
if "$rebuild_base" || ! docker image inspect "$base" >/dev/null 2>&1; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        as_root apt-get update
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
    fi
    echo "build-image.sh: debootstrap bookworm from $mirror (1-3 min)"
    # minbase: essential + apt; ca-certificates for TLS to coordinators with public certificates
    as_root debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || {
        tail -n 40 "$work/debootstrap.log" >&2
        exit 1
    }
    as_root rm -rf "$work/rootfs/var/lib/apt/lists"/* "$work/rootfs/var/cache/apt/archives"/*.deb
    as_root tar -C "$work/rootfs" --numeric-owner -c . |
        docker import --message "debootstrap --variant=minbase bookworm" - "$base"
fi

# --- 2. the binary, built on this host ---------------------------------------------------------
if "$base_only"; then
    echo "build-image.sh: base image $base ready"
    exit 0
fi

if [[ -z "$binary" ]]; then
    (cd "$root" && cargo build --profile dist --locked -p cubefleet)
    binary="$root/target/dist/cubefleet"
fi
mkdir -p "$work/context"
install -m 0755 "$binary" "$work/context/cubefleet"

# --- 3. the image: deploy/Dockerfile's target `prebuilt` over the base, with the host's binary ---
# BuildKit when the client has it (buildx), else the classic builder: either builds only the stages
# up to `prebuilt`, none of which needs a registry.
if docker buildx version >/dev/null 2>&1; then
    export DOCKER_BUILDKIT=1
else
    export DOCKER_BUILDKIT=0
fi
docker build --file "$root/deploy/Dockerfile" --target prebuilt \
    --build-arg RUNTIME_IMAGE="$base" --build-arg VERSION="$version" \
    --tag "$tag" "$work/context"
echo "build-image.sh: built $tag ($version) on $base"
