#!/bin/sh
# Host install (Debian/Ubuntu): system packages, a `dla` user, the app in /opt/dla, systemd units.
# NATS and S3 are not installed here: point NATS_URL and S3_* in /etc/dla/dla.env at your cluster.
set -eu
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv chromium ffmpeg fonts-liberation ca-certificates
id dla >/dev/null 2>&1 || useradd --system --home /var/lib/dla --create-home dla
mkdir -p /opt/dla /etc/dla /var/lib/dla
cp -r "$SRC/pyproject.toml" "$SRC/README.md" "$SRC/shared" "$SRC/services" "$SRC/plugins" /opt/dla/
python3 -m venv /opt/dla/.venv
/opt/dla/.venv/bin/pip install -q /opt/dla
[ -f /etc/dla/dla.env ] || cat > /etc/dla/dla.env <<'ENV'
# Settings: see README.md. Secrets live here only (mode 0600).
NATS_URL=nats://127.0.0.1:4222
S3_ENDPOINT=
S3_BUCKET=link-archive
AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=
RSS_URL=https://discuss.criticalfallibilism.com/posts.rss
ENV
chmod 600 /etc/dla/dla.env
chown -R dla:dla /var/lib/dla
cp "$SRC/deploy/systemd/dla@.service" /etc/systemd/system/
systemctl daemon-reload
echo "edit /etc/dla/dla.env, then: systemctl enable --now dla@writer dla@poller dla@archiver dla@media dla@web"
