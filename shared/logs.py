"""Logging set-up shared by every service: one line per event, secrets redacted."""

from __future__ import annotations

import logging
import os
import re

from shared.settings import SECRET_ENV_VARS

_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


class RedactSecrets(logging.Filter):
    """Replaces secret values (from the environment) and URL passwords in log records."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets = [v for k in sorted(SECRET_ENV_VARS) if len(v := os.environ.get(k, "")) >= 4]

    def clean(self, text: str) -> str:
        """`text` with URL passwords and secret values masked."""
        clean = _URL_PASSWORD.sub(r"\1***@", text)
        for secret in self._secrets:
            clean = clean.replace(secret, "***")
        return clean

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = self.clean(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


def redact(text: str) -> str:
    """`text` as a log line would show it: URL passwords and the environment's secrets
    masked (for what a service shows outside its logs, e.g. a feed's URL in /healthz)."""
    return RedactSecrets().clean(text)


def setup_logging(level: str, service: str) -> None:
    """Configure the root logger for a service process."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter(f"%(asctime)s {service} %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("botocore", "aiobotocore", "urllib3", "httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
