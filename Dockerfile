# The API image: web, writer and poller. No browser, no ffmpeg (see Dockerfile.worker).
# BASE: the public image for the world; deploy/containers/build-local.sh passes a bookworm
# base made from Debian's packages where no container registry is reachable.
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data PLUGINS_DIR=/app/plugins
WORKDIR /app
COPY pyproject.toml README.md ./
# ReplayWeb.page for "View as it was": the npm package at its pinned version, its sha512
# checked, into /app/.cache (services/web/replay/bundle.py; standard library only)
COPY services/web/replay/bundle.py /tmp/replay_bundle.py
RUN python /tmp/replay_bundle.py /app/.cache && rm /tmp/replay_bundle.py
# the dependencies first, in a layer of their own (from pyproject.toml, with empty packages):
# a change to the code rebuilds only the layers below
RUN mkdir shared services && touch shared/__init__.py services/__init__.py \
 && pip install --no-cache-dir . \
 && pip uninstall -y -q discourse-link-archiver && rm -r shared services
COPY shared ./shared
COPY services ./services
COPY plugins ./plugins
RUN pip install --no-cache-dir --no-deps . \
 && useradd --system --uid 10001 --home-dir /data dla \
 && mkdir -p /data && chown dla:dla /data
USER 10001
VOLUME ["/data"]
CMD ["python", "-m", "services.web"]
