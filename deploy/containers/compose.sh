#!/bin/sh
# Compose v2 with docker-compose.local.yml (the locally built engine images), against podman:
#   deploy/containers/compose.sh up -d --scale archiver=2
set -eu
. "$(cd "$(dirname "$0")" && pwd)/podman-env.sh"
trap stop_podman_service EXIT
local_compose "$@"
