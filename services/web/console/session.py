"""The console's login session and CSRF tokens: signed, stateless, never the token itself.

A session is the cookie ``dla_admin`` = ``v1.<name>.<expires>.<nonce>.<mac>``: the admin
token's *name* (base64url), when it expires (Unix seconds, `SESSION_SECONDS` after the
login), a random nonce, and an HMAC-SHA256 over them keyed by a key derived from that
token's secret. So every web worker process checks it alike with nothing shared, a restart
keeps people logged in until expiry, and changing or removing a token ends its sessions at
once. The secret never leaves the server: the cookie cannot be turned back into it.

The cookie is HttpOnly, SameSite=Strict, Path=/admin, Secure when the request came over
https; logging out deletes it from the browser (a copy taken before stays valid until it
expires: tokens are rotated to end every session).

A form's CSRF token is an HMAC of the session's nonce under the same key: bound to one
session, checked on every POST, useless to anyone who cannot read the session's pages.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

COOKIE = "dla_admin"
PATH = "/admin"
SESSION_SECONDS = 8 * 3600
"""How long a console login lasts."""
_VERSION = "v1"
_KEY_LABEL = b"dla admin console session v1"


@dataclass(frozen=True)
class Session:
    """A valid console session: whose token, until when, its nonce."""

    name: str
    expires: int
    nonce: str


def _key(secret: str) -> bytes:
    return hmac.new(secret.encode(), _KEY_LABEL, hashlib.sha256).digest()


def _mac(secret: str, payload: str) -> str:
    digest = hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def issue(name: str, secret: str, now: float) -> str:
    """A new session cookie value for the token `name` (whose secret is `secret`)."""
    payload = f"{_VERSION}.{_b64(name)}.{int(now) + SESSION_SECONDS}.{secrets.token_urlsafe(16)}"
    return f"{payload}.{_mac(secret, payload)}"


def verify(value: str, tokens: Mapping[str, str], now: float) -> Session | None:
    """The session a cookie value stands for, if it is intact, unexpired and its token
    still exists; else None."""
    parts = value.split(".")
    if len(parts) != 5 or parts[0] != _VERSION or not parts[2].isdigit():
        return None
    try:
        name = _unb64(parts[1])
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    secret = tokens.get(name)
    if secret is None:
        return None
    payload = ".".join(parts[:4])
    if not hmac.compare_digest(_mac(secret, payload), parts[4]):
        return None
    if int(parts[2]) <= now:
        return None
    return Session(name=name, expires=int(parts[2]), nonce=parts[3])


def csrf_token(session: Session, tokens: Mapping[str, str]) -> str:
    """The CSRF token of the session's forms."""
    return _mac(tokens[session.name], f"csrf.{session.nonce}")


def csrf_ok(session: Session, tokens: Mapping[str, str], given: str) -> bool:
    """True when `given` is the session's CSRF token."""
    return hmac.compare_digest(csrf_token(session, tokens), given)
