#!/bin/sh
# Installs the Debian packages the project needs when missing: chromium-headless-shell (the
# capture workers' browser), chromium (the full browser: the web UI's browser tests, and
# BROWSER_EXECUTABLE's other choice), ffmpeg (capture workers), prometheus (promtool and a real
# Prometheus for the dashboard and alert tests) and prometheus-alertmanager (`make up` sends the
# alerts through it when ALERT_* is set), and fonts for the scripts screenshots and PDFs must
# draw (services/archiver/fonts.py: without one, a page in that script is drawn as boxes).
set -eu
missing=""
command -v chromium-headless-shell >/dev/null 2>&1 || missing="$missing chromium-headless-shell"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v ffmpeg >/dev/null 2>&1 || missing="$missing ffmpeg"
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
command -v prometheus-alertmanager >/dev/null 2>&1 || missing="$missing prometheus-alertmanager"
command -v fc-list >/dev/null 2>&1 || missing="$missing fontconfig"
has_font() { [ -n "$(fc-list "$1" family 2>/dev/null)" ]; }
has_font :lang=ja || missing="$missing fonts-noto-cjk"
has_font :lang=hi || missing="$missing fonts-noto-core"
has_font :charset=1f600 || missing="$missing fonts-noto-color-emoji"
has_font :lang=en || missing="$missing fonts-liberation"
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "need root to install:$missing (apt-get install$missing)" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing fonts-liberation >/dev/null
