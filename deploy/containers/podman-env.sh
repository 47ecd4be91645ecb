# Sourced by build-local.sh and compose.sh: podman with this folder's containers.conf, its
# Docker-compatible API on a socket of our own (started here when DOCKER_HOST is not set;
# stopped by the caller's trap), and the Compose v2 binary (COMPOSE, else the venv's).
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$HERE/containers.conf}"
export DOCKER_BUILDKIT=0 COMPOSE_BAKE=false

need=""
command -v podman >/dev/null 2>&1 || need="$need podman"
command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
command -v iptables >/dev/null 2>&1 || need="$need iptables"
if [ -n "$need" ]; then
  echo "installing:$need"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $need netavark aardvark-dns runc uidmap >/dev/null
fi

if [ -z "${COMPOSE:-}" ]; then
  COMPOSE=$("$REPO/.venv/bin/python" -c \
    'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')
fi

PODMAN_SERVICE_PID=""
if [ -z "${DOCKER_HOST:-}" ]; then
  sock_dir=$(mktemp -d /tmp/dla-podman.XXXXXX)
  podman system service --time=0 "unix://$sock_dir/podman.sock" >"$sock_dir/service.log" 2>&1 &
  PODMAN_SERVICE_PID=$!
  export DOCKER_HOST="unix://$sock_dir/podman.sock"
  i=0
  until [ -S "$sock_dir/podman.sock" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
fi

stop_podman_service() {
  if [ -n "$PODMAN_SERVICE_PID" ]; then
    kill "$PODMAN_SERVICE_PID" 2>/dev/null || true
    wait "$PODMAN_SERVICE_PID" 2>/dev/null || true
  fi
}

local_compose() {
  "$COMPOSE" --project-directory "$REPO" -f "$REPO/docker-compose.yml" \
    -f "$REPO/docker-compose.local.yml" "$@"
}
