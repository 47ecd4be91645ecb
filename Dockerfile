# One image for every service; the command picks the service (python -m services.<name>).
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ffmpeg fonts-liberation ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
COPY plugins ./plugins
RUN pip install --no-cache-dir .
ENV DATA_DIR=/data PLUGINS_DIR=/app/plugins PYTHONUNBUFFERED=1
VOLUME /data
CMD ["python", "-m", "services.web"]
