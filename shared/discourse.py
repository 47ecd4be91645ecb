"""Discourse facts the poller, the writer, the web and `dla` share: which forum a URL is on,
and which topic a pasted topic URL names. Pure, no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.links.urlparts import SUPPORTED_SCHEMES

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TOPIC = re.compile(r"^(?P<prefix>.*?)/t/(?P<rest>[^?#]*)$")


def forum_of(url: str) -> str:
    """The forum a post or feed URL is on: its host in lower case, with the port when it is
    not the scheme's default (two forums on one host are two forums); "" when none."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return ""
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host


class NotATopic(ValueError):
    """The URL names no Discourse topic (the message says why)."""


@dataclass(frozen=True)
class TopicRef:
    """A topic as a person pasted it: where its forum answers and its id."""

    base: str
    """scheme://host[:port][/subfolder] of the forum (no trailing slash)."""
    topic_id: int

    @property
    def forum(self) -> str:
        """The forum (``forum_of``)."""
        return forum_of(self.base)

    @property
    def url(self) -> str:
        """The topic's plain URL."""
        return f"{self.base}/t/{self.topic_id}"


def parse_topic_url(url: str) -> TopicRef:
    """The topic of a URL as people paste them: ``https://forum/t/slug/123``,
    ``/t/slug/123/45`` (a post in it), ``/t/123``, ``/t/123/45`` (Discourse reads two
    numbers as topic and post), with or without ``.json``, a query or a fragment.

    Raises NotATopic for anything else."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError as exc:
        raise NotATopic(f"{text[:200]!r} is not a URL ({exc})") from None
    if parts.scheme.lower() not in SUPPORTED_SCHEMES or not host:
        raise NotATopic(f"{text[:200]!r} is not an http(s) URL of a forum topic")
    match = _TOPIC.match(parts.path)
    segments = [s for s in match["rest"].removesuffix(".json").split("/") if s] if match else []
    numbers = [s.isdigit() for s in segments]
    if numbers in ([True], [True, True]):
        topic = segments[0]
    elif len(segments) in (2, 3) and numbers[1] and all(numbers[2:]):
        topic = segments[1]
    else:
        raise NotATopic(
            f"{text[:200]!r} is not a topic URL (expected /t/<slug>/<id>, /t/<slug>/<id>/<post>"
            " or /t/<id>)"
        )
    assert match is not None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return TopicRef(f"{parts.scheme.lower()}://{netloc}{match['prefix']}", int(topic))
