"""Named admin tokens: who did an admin action is recorded by the token's name, never its secret.

``ADMIN_TOKENS=alice:s3cret,bob:0ther`` names several; ``ADMIN_TOKEN=s3cret`` is one named
``admin``. With neither set, `dla up` creates one named ``owner`` in DATA_DIR/admin-token
(mode 0600) and passes it to the services; the `dla` command reads it from there.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

TOKEN_FILE = "admin-token"
DEFAULT_NAME = "admin"
"""The name of the single ``ADMIN_TOKEN``."""
OWNER_NAME = "owner"
"""The name of the token `dla up` generates."""


class TokenFormatError(ValueError):
    """ADMIN_TOKENS is not ``name:secret,...``."""


def parse(admin_tokens: str | None, admin_token: str | None) -> dict[str, str]:
    """``{name: secret}`` from the two settings (names unique, secrets at least 8 chars)."""
    tokens: dict[str, str] = {}
    for item in (admin_tokens or "").split(","):
        if not item.strip():
            continue
        name, sep, secret = item.strip().partition(":")
        if not sep or not name or len(secret) < 8:
            raise TokenFormatError(
                "ADMIN_TOKENS must be name:secret,... with secrets of 8+ characters"
            )
        tokens[name] = secret
    if admin_token:
        tokens.setdefault(DEFAULT_NAME, admin_token)
    return tokens


def name_of(tokens: Mapping[str, str], given: str) -> str | None:
    """The name of the token `given` is (constant-time compare), or None."""
    found = None
    for name, secret in tokens.items():
        if hmac.compare_digest(given.encode("utf-8", "replace"), secret.encode()):
            found = name
    return found


def load_or_create(data_dir: Path) -> str:
    """``owner:<secret>`` from DATA_DIR/admin-token, created once (mode 0600)."""
    path = data_dir / TOKEN_FILE
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    value = f"{OWNER_NAME}:{secrets.token_urlsafe(24)}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


def read_file(data_dir: Path) -> str | None:
    """The secret of DATA_DIR/admin-token, if the file exists and is readable."""
    try:
        line = (data_dir / TOKEN_FILE).read_text().strip()
    except OSError:
        return None
    return line.partition(":")[2] or None
