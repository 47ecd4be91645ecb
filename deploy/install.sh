#!/bin/sh
# Host install without Docker (Debian/Ubuntu): system packages, a `dla` system user, the app in
# /opt/dla, and hardened systemd units for every service, NATS and the S3 store.
#
#   sudo deploy/install.sh            # one machine: NATS, S3 and every service
#   sudo deploy/install.sh worker     # a capture-worker host joining an existing stack
#
# Then edit /etc/dla/dla.env and start the units the script prints (docs/operations.md).
set -eu
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
ROLE=${1:-all}
case "$ROLE" in all|worker|api) ;; *) echo "usage: $0 [all|api|worker]" >&2; exit 2;; esac
SRC=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
PKGS="python3 python3-venv ca-certificates"
# the fonts: what screenshots and PDFs can draw (services/archiver/fonts.py)
[ "$ROLE" = api ] || PKGS="$PKGS chromium-headless-shell ffmpeg fontconfig fonts-liberation \
  fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji"
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $PKGS
id dla >/dev/null 2>&1 || useradd --system --home /var/lib/dla --shell /usr/sbin/nologin dla
mkdir -p /opt/dla /etc/dla /var/lib/dla/nats /var/lib/dla/s3
cp -r "$SRC/pyproject.toml" "$SRC/README.md" "$SRC/shared" "$SRC/services" "$SRC/plugins" "$SRC/docs" /opt/dla/
python3 -m venv /opt/dla/.venv
/opt/dla/.venv/bin/pip install -q /opt/dla
# the web's replay viewer (ReplayWeb.page, pinned, its sha512 checked) from the npm registry
[ "$ROLE" = worker ] || /opt/dla/.venv/bin/python "$SRC/services/web/replay/bundle.py" /opt/dla/.cache
if [ ! -f /etc/dla/dla.env ]; then
  umask 077
  KEY=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cat > /etc/dla/dla.env <<ENV
# Settings: see README.md. Secrets live here only (mode 0600, root and dla).
NATS_URL=nats://127.0.0.1:4222
S3_ENDPOINT=http://127.0.0.1:8333
S3_BUCKET=link-archive
AWS_ACCESS_KEY_ID=$KEY
AWS_SECRET_ACCESS_KEY=$SECRET
RSS_URL=https://discuss.criticalfallibilism.com/posts.rss
ENV
fi
chown root:dla /etc/dla/dla.env
chmod 640 /etc/dla/dla.env
chown -R dla:dla /var/lib/dla
cp "$SRC"/deploy/systemd/*.service /etc/systemd/system/
systemctl daemon-reload
case "$ROLE" in
  all) echo "start: systemctl enable --now dla-nats dla-s3 dla@writer dla@poller dla@web dla@archiver dla@media";;
  api) echo "start: systemctl enable --now dla@writer dla@poller dla@web";;
  worker) echo "point NATS_URL and S3_* in /etc/dla/dla.env at the stack, then: systemctl enable --now dla@archiver dla@media";;
esac
