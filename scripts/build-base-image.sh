#!/usr/bin/env bash
# Build the devcontainer backend's default base image without any image registry:
#   scripts/build-base-image.sh [IMAGE]      (default localhost/agent-boundary-base:bookworm)
# A minimal Debian bookworm root filesystem (debootstrap --variant=minbase, from
# deb.debian.org) with git, ca-certificates, coreutils and bash, imported into the container
# engine with `podman import` (or `docker import`). Does nothing when the image exists.
# Environment: AGENT_BOUNDARY_CONTAINER_ENGINE (absolute path of podman or docker),
# DEBIAN_MIRROR (default http://deb.debian.org/debian). Needs root (debootstrap).
set -euo pipefail

image=${1:-localhost/agent-boundary-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
say() { printf 'build-base-image: %s\n' "$*" >&2; }

engine=${AGENT_BOUNDARY_CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  engine=$(command -v podman || command -v docker || true)
fi
[ -n "$engine" ] || { say "neither podman nor docker is installed"; exit 1; }
# Flags this machine's podman needs as root (see backends/devcontainer): runc, since crun
# fails on a hybrid cgroup layout, and the cgroupfs manager.
engine_flags=()
case "$(basename "$engine")" in
  podman) engine_flags=(--runtime runc --cgroup-manager cgroupfs) ;;
esac

if "$engine" "${engine_flags[@]}" image exists "$image" 2>/dev/null ||
   "$engine" "${engine_flags[@]}" image inspect "$image" >/dev/null 2>&1; then
  say "$image exists; nothing to do"
  exit 0
fi
[ "$(id -u)" = 0 ] || { say "debootstrap needs root; run as root"; exit 1; }
command -v debootstrap >/dev/null || { say "install debootstrap (apt-get install debootstrap)"; exit 1; }

# Under /var/tmp, not /tmp: a tmpfs /tmp may be small or mounted nodev.
work=$(mktemp -d /var/tmp/agent-boundary-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
say "debootstrap bookworm (minbase) into $rootfs from $mirror"
debootstrap --variant=minbase --include=git,ca-certificates,coreutils,bash \
  bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  say "debootstrap failed (log above)"
  exit 1
}
# Smaller image: package lists and caches are not needed at run time.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
say "importing into $engine as $image"
tar -C "$rootfs" -c . | "$engine" "${engine_flags[@]}" import \
  --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$image" >/dev/null
say "built $image"
