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

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = _URL_PASSWORD.sub(r"\1***@", msg)
        for secret in self._secrets:
            clean = clean.replace(secret, "***")
        if clean != msg:
            record.msg, record.args = clean, None
        return True


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
