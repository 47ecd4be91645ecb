"""Which origin replays run on: ``REPLAY_ORIGIN``, checked, or the loopback default.

Browsers keep cookies per host name, not per port, so the replay origin must differ from the
UI's in its host name: a replayed page's scripts then see none of the UI's cookies
(``document.cookie``), and reach none of its routes with them. On one machine the default is
``http://replay.localhost:<WEB_PORT>`` (browsers resolve every ``*.localhost`` name to the
loopback address themselves, and treat it as a secure context, which service workers need);
anywhere else the operator names an HTTPS origin of its own, best on another registrable
domain (docs/operations.md, "Replay").
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

OFF = "off"
LOOPBACK_REPLAY_HOST = "replay.localhost"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class ReplayOriginError(ValueError):
    """REPLAY_ORIGIN is not an origin the replay can run on."""


def parse(value: str) -> str:
    """``scheme://host[:port]`` lower-cased, without a default port; raises otherwise."""
    parts = urlsplit(value.strip())
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ReplayOriginError(f"REPLAY_ORIGIN must be http(s)://host[:port], not {value!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ReplayOriginError(f"REPLAY_ORIGIN is an origin only (no path): {value!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise ReplayOriginError(f"REPLAY_ORIGIN has a bad port: {value!r}") from exc
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    shown = "" if port in (None, _DEFAULT_PORTS[parts.scheme]) else f":{port}"
    return f"{parts.scheme}://{host}{shown}"


def host_of(origin: str) -> str:
    """The ``Host`` header browsers send to this origin (``host[:port]``)."""
    return origin.split("://", 1)[1]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def effective(setting: str, web_host: str, web_port: int) -> str | None:
    """The replay origin for these settings, or None (no replay).

    ``off``: none. Empty: ``http://replay.localhost:<port>`` when the UI listens on a loopback
    address (one machine), else none. Anything else must parse and must not name the UI's own
    host (the UI's host name would then serve replays, and replayed scripts its cookies)."""
    setting = setting.strip()
    if setting.lower() == OFF:
        return None
    if not setting:
        if _is_loopback(web_host) and web_port > 0:
            return f"http://{LOOPBACK_REPLAY_HOST}:{web_port}"
        return None
    origin = parse(setting)
    host = (urlsplit(origin).hostname or "").lower()
    if host == web_host.lower():
        raise ReplayOriginError(
            f"REPLAY_ORIGIN {origin} shares a host name with the UI: browsers would give "
            "replayed pages the UI's cookies (use another host name, e.g. replay.localhost)"
        )
    return origin
