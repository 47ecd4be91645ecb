# The API image: web, writer and poller. No browser, no ffmpeg (see Dockerfile.worker).
FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data PLUGINS_DIR=/app/plugins
WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
COPY plugins ./plugins
RUN pip install --no-cache-dir . \
 && useradd --system --uid 10001 --home-dir /data dla \
 && mkdir -p /data && chown dla:dla /data
USER 10001
VOLUME ["/data"]
CMD ["python", "-m", "services.web"]
