#!/bin/sh
# Builds every image docker-compose.yml names on this machine, with podman, where no container
# registry is reachable: a Debian bookworm base from Debian's packages (debootstrap), the
# project's two images on it (BASE build argument), and the engines (NATS, SeaweedFS,
# Prometheus, Alertmanager) from the packages the embedded stack runs. The public image names
# stay in docker-compose.yml; docker-compose.local.yml points the engines at these.
# Usage: deploy/containers/build-local.sh   (then deploy/containers/compose.sh up -d)
set -eu
. "$(cd "$(dirname "$0")" && pwd)/podman-env.sh"
trap stop_podman_service EXIT

if ! podman image exists localhost/dla-base:bookworm; then
  rootfs=$(mktemp -d /tmp/dla-rootfs.XXXXXX)
  echo "debootstrap: a bookworm root filesystem in $rootfs"
  bootstrap() {
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,wget \
      bookworm "$rootfs" >"$rootfs.log" 2>&1
  }
  bootstrap || { echo "debootstrap failed; once more"; rm -rf "$rootfs"; mkdir "$rootfs"; bootstrap; } \
    || { tail -20 "$rootfs.log"; exit 1; }
  # the same package sources as this machine (security updates: a current Chromium), and
  # the certificate authorities it trusts beyond Debian's (a TLS-inspecting proxy's)
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
    rm -f "$rootfs/etc/apt/sources.list"
  fi
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  fi
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  tar -C "$rootfs" -c . | podman import - localhost/dla-rootfs:bookworm >/dev/null
  rm -rf "$rootfs" "$rootfs.log"
  podman build -q -t localhost/dla-base:bookworm -f "$HERE/base.Containerfile" "$HERE"
fi
# one service per image: compose builds an image once for each service that names it; a
# second try when a package download failed (layers already built are reused)
build="writer archiver nats s3 prometheus alertmanager"
# shellcheck disable=SC2086
local_compose build $build || { echo "build failed; once more"; local_compose build $build; }
