"""A strict, normalising URL parser for http(s) links.

``parse`` turns a string into ``UrlParts`` whose ``unsplit()`` is the normalised form, or
raises ``UrlRejected`` with a short reason. The rules (WHATWG URL behaviour where it
matters, RFC 3986 normalisation otherwise):

- leading/trailing C0 controls and spaces are stripped, tabs and newlines removed;
- only ``http`` and ``https``; ``\\`` counts as ``/`` before the query (as in browsers);
- host: lower-cased, IDN labels to punycode (``idna``, UTS #46, non-transitional),
  one trailing dot dropped, IPv4/IPv6 literals in their standard text form;
- default ports dropped; userinfo (``user:pass@``) always dropped: credentials are never
  captured, stored or shown (``strip_credentials`` does the same to any string);
- percent-encoding: hex digits upper-cased, unreserved characters decoded, characters
  browsers would escape (controls, space, ``" < > ` { }``, non-ASCII) encoded as UTF-8;
  a ``%`` not followed by two hex digits is rejected (``bad-percent-encoding``);
- path: dot segments removed; an empty path becomes ``/``. That is the *only*
  trailing-slash rule applied to every site: ``/a`` and ``/a/`` stay distinct because
  servers may serve different things (site rules in ``sites.py`` add more);
- query: order kept (some sites read parameters positionally, and sorting would make
  the canonical URL differ from what people shared), empty ``&&`` pieces dropped, a bare
  ``?`` dropped, ``+`` kept as written;
- fragment: kept separately; ``canonical.py`` decides whether it survives.
"""

from __future__ import annotations

import ipaddress
import re
import string
from dataclasses import dataclass, replace
from functools import lru_cache

import idna

MAX_URL_LENGTH = 4096
"""Longer inputs (and results) are rejected as ``too-long``. Browsers accept more, but
no link worth archiving is longer and such strings are usually pasted blobs."""

DEFAULT_PORTS = {"http": 80, "https": 443}
SUPPORTED_SCHEMES = frozenset(DEFAULT_PORTS)
"""The one scheme rule: the schemes we capture, follow and link to. Everything that asks
"is this a web URL" asks `supported_scheme` (or this set, or SCHEME_PREFIXES)."""
SCHEME_PREFIXES = tuple(f"{scheme}://" for scheme in sorted(SUPPORTED_SCHEMES))
"""`http://`, `https://`: how an absolute web URL starts."""

Query = tuple[tuple[str, str | None], ...]


class UrlRejected(ValueError):
    """The string is not a URL we can archive; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def scheme_of(url: str) -> str:
    """The scheme a URL string starts with, lower-case ('' for a relative or empty one)."""
    m = _SCHEME_START.match(url)
    return m.group(1).lower() if m else ""


def supported_scheme(url: str) -> bool:
    """True when the URL's scheme is one of SUPPORTED_SCHEMES (http, https)."""
    return scheme_of(url) in SUPPORTED_SCHEMES


@dataclass(frozen=True, slots=True)
class UrlParts:
    """A parsed, normalised http(s) URL."""

    scheme: str
    userinfo: str
    host: str
    port: int | None
    path: str
    query: Query
    fragment: str | None

    def origin(self) -> str:
        """``scheme://host/`` (what host-only rules look at)."""
        return f"{self.scheme}://{self.host}/"

    def query_string(self) -> str:
        """The query as written, a `#` encoded (`%23`): a parsed query never holds one (it
        starts the fragment), one a site rule put there from elsewhere must not end it."""
        text = "&".join(k if v is None else f"{k}={v}" for k, v in self.query)
        return text.replace("#", "%23")

    def without_fragment(self) -> str:
        out = f"{self.scheme}://"
        if self.userinfo:
            out += self.userinfo + "@"
        out += self.host
        if self.port is not None:
            out += f":{self.port}"
        out += self.path
        if self.query:
            out += "?" + self.query_string()
        return out

    def unsplit(self) -> str:
        out = self.without_fragment()
        if self.fragment:
            out += "#" + self.fragment
        return out

    def get(self, name: str) -> str | None:
        """First value of query parameter ``name`` (``""`` for a bare name)."""
        for k, v in self.query:
            if k == name:
                return "" if v is None else v
        return None

    def replace(self, **changes: object) -> UrlParts:
        return replace(self, **changes)  # type: ignore[arg-type]


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SCHEME_START = re.compile(r"[\x00-\x20]*([A-Za-z][A-Za-z0-9+.\-]*):")
_STRIP = "".join(chr(i) for i in range(0x21))
_TAB_NL = re.compile(r"[\t\n\r]")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_BAD_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TO_ENCODE = re.compile('[\x00-\x20"<>`{}\x7f-\U0010ffff]')
_HOST_OK = re.compile(r"[a-z0-9_\-.]+")
_IPV4ISH = re.compile(r"[0-9.]+")


_USERINFO = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.\-]*:[/\\]+)[^/?#\\]*@")


def strip_credentials(url: str) -> str:
    """``url`` without its userinfo (``https://user:pass@host/`` -> ``https://host/``); any
    other string is returned unchanged. Never raises."""
    return _USERINFO.sub(r"\1", url, count=1)


_EMBEDDED_USERINFO = re.compile(
    r"(?i)\b([a-z][a-z0-9+.\-]*:(?:/|\\|%2f|%5c){2})[^\s/?#\\@\"'<>`]*?"
    r"(?:@|&#0*64;|&#x0*40;|&commat;)"  # "@", also as an HTML character reference
)


def scrub_credentials(text: str) -> str:
    """``text`` (a post's HTML, a snippet) with the userinfo of every URL in it removed:
    ``see https://bob:hunter2@host/x`` -> ``see https://host/x``. An address that is not a
    URL's userinfo (``bob@example.com``, ``mailto:bob@example.com``) is left alone; an "@"
    written as an HTML character reference (``&#64;``) counts, as a browser would read it."""
    while True:  # "https://a:b@c@host/": the userinfo runs to the last "@"
        text, n = _EMBEDDED_USERINFO.subn(r"\1", text)
        if not n:
            return text


def _pct_fix(m: re.Match[str]) -> str:
    h = m.group(1)
    c = chr(int(h, 16))
    return c if c in _UNRESERVED else "%" + h.upper()


def _pct_encode(m: re.Match[str]) -> str:
    try:
        data = m.group().encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UrlRejected("bad-unicode") from exc
    return "".join(f"%{b:02X}" for b in data)


def norm_component(s: str) -> str:
    """Normalise the percent-encoding of one path/query/fragment/userinfo component."""
    if "%" in s:
        if _BAD_PCT.search(s):
            raise UrlRejected("bad-percent-encoding")
        s = _PCT.sub(_pct_fix, s)
    if _TO_ENCODE.search(s):
        s = _TO_ENCODE.sub(_pct_encode, s)
    return s


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on an absolute path (``/a/./b/../c`` -> ``/a/c``)."""
    segments = path.split("/")[1:]
    if "." not in segments and ".." not in segments:
        return path
    out: list[str] = []
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if seg == "..":
            if out:
                out.pop()
            if i == last:
                out.append("")
        elif seg == ".":
            if i == last:
                out.append("")
        else:
            out.append(seg)
    return "/" + "/".join(out)


@lru_cache(maxsize=16384)
def normalize_host(raw: str) -> str:
    """The ASCII, lower-case form of a host; raises ``UrlRejected``."""
    host = raw
    if not host:
        raise UrlRejected("no-host")
    if host.startswith("["):
        if not host.endswith("]"):
            raise UrlRejected("bad-ipv6")
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError as exc:
            raise UrlRejected("bad-ipv6") from exc
    if "%" in host:
        if _BAD_PCT.search(host):
            raise UrlRejected("bad-percent-encoding")
        try:
            host = _PCT.sub(lambda m: bytes([int(m.group(1), 16)]).decode("latin-1"), host)
            host = host.encode("latin-1").decode("utf-8")
        except (UnicodeDecodeError, UnicodeEncodeError) as exc:
            raise UrlRejected("bad-host") from exc
    if host.isascii():
        host = host.lower()
    else:
        try:
            mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
            host = ".".join(
                label.lower() if label.isascii() else idna.alabel(label).decode("ascii")
                for label in mapped.split(".")
            )
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            raise UrlRejected("bad-idn") from exc
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise UrlRejected("no-host")
    if not _HOST_OK.fullmatch(host) or len(host) > 253:
        raise UrlRejected("bad-host")
    labels = host.split(".")
    for label in labels:
        if not label or len(label) > 63:
            raise UrlRejected("bad-host")
        if label.startswith("xn--"):
            try:
                idna.ulabel(label)
            except (idna.IDNAError, UnicodeError, ValueError) as exc:
                raise UrlRejected("bad-idn") from exc
    if labels[-1].isdigit() or _IPV4ISH.fullmatch(host):
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError as exc:
            raise UrlRejected("bad-ipv4") from exc
    return host


def _split_query(query: str) -> Query:
    pairs: list[tuple[str, str | None]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        key, eq, value = piece.partition("=")
        pairs.append((norm_component(key), norm_component(value) if eq else None))
    return tuple(pairs)


def parse(url: str) -> UrlParts:
    """Parse and normalise an absolute http(s) URL; raises ``UrlRejected``."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRejected("too-long")
    s = url.strip(_STRIP)
    if "\t" in s or "\n" in s or "\r" in s:
        s = _TAB_NL.sub("", s)
    if not s:
        raise UrlRejected("empty")
    m = _SCHEME.match(s)
    if not m:
        raise UrlRejected("relative-url")
    scheme = m.group(1).lower()
    if scheme not in SUPPORTED_SCHEMES:
        raise UrlRejected(f"unsupported-scheme:{scheme[:20]}")
    rest = s[m.end() :]
    rest, hash_, fragment = rest.partition("#")
    rest, qmark, query = rest.partition("?")
    rest = rest.replace("\\", "/").lstrip("/")
    authority, slash, path = rest.partition("/")
    path = slash + path
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        userinfo = ""
    if hostport.startswith("[") and "]" not in hostport:
        raise UrlRejected("bad-ipv6")
    if hostport.startswith("["):
        close = hostport.index("]")
        host, port_text = hostport[: close + 1], hostport[close + 1 :]
        if port_text and not port_text.startswith(":"):
            raise UrlRejected("bad-host")
        port_text = port_text[1:]
    else:
        host, _, port_text = hostport.partition(":")
    port: int | None = None
    if port_text:
        digits = port_text.lstrip("0") or "0"
        if not port_text.isdigit() or not port_text.isascii() or len(digits) > 5:
            raise UrlRejected("bad-port")
        port = int(digits)
        if port > 65535:
            raise UrlRejected("bad-port")
        if port == DEFAULT_PORTS[scheme]:
            port = None
    host = normalize_host(host)
    userinfo = ""  # credentials are never kept (see strip_credentials)
    path = remove_dot_segments(norm_component(path)) if path else "/"
    return UrlParts(
        scheme=scheme,
        userinfo=userinfo,
        host=host,
        port=port,
        path=path,
        query=_split_query(query) if qmark and query else (),
        fragment=norm_component(fragment) if hash_ and fragment else None,
    )
