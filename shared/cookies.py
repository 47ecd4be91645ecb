"""An operator's logins for a site: Netscape `cookies.txt` files, one per registrable domain,
in COOKIES_DIR (`COOKIES_DIR/x.com.txt`, `COOKIES_DIR/instagram.com.txt`).

A link's cookies are those of the file named after its registrable domain, and of that
file only the cookies of that domain (a line for another site in it is ignored). The
archiver gives them to the link's browser context (so the browser sends them to that
site's requests and no other), a platform hook to yt-dlp for that site and to its HTTP steps
(`jar`: each request of the site's hosts only), the media hook to yt-dlp. Their values are
secrets: `CookieSet` never shows them (repr, logs), `scrub` removes them from anything
about to be written, and the file handed to yt-dlp lives outside every folder that is
uploaded and is deleted after use.
"""

from __future__ import annotations

import contextlib
import copy
import http.cookiejar
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shared.links.domains import registrable_domain

log = logging.getLogger(__name__)

REDACTED = "[redacted]"
HTTPONLY = "HTTPOnly"
"""The attribute http.cookiejar gives a cookie read from a `#HttpOnly_` line."""
MIN_SECRET_CHARS = 6
"""Values shorter than this are not scrubbed from text (a `1` or `en` is no secret, and
replacing it everywhere would garble what is written)."""


@dataclass(frozen=True)
class CookieSet:
    """The cookies of one site, for one link."""

    site: str
    """The registrable domain (`x.com`)."""
    cookies: tuple[http.cookiejar.Cookie, ...] = field(repr=False)

    def __repr__(self) -> str:
        return f"CookieSet(site={self.site!r}, count={len(self.cookies)})"

    def __bool__(self) -> bool:
        return bool(self.cookies)

    def values(self) -> list[str]:
        """The secret values (to scrub from what is written)."""
        return [c.value for c in self.cookies if c.value and len(c.value) >= MIN_SECRET_CHARS]

    def for_playwright(self) -> list[dict[str, Any]]:
        """The cookies as Playwright's `BrowserContext.add_cookies` takes them: a domain
        cookie by its domain, a host-only one by its URL (so it goes to that host alone)."""
        out = []
        for c in self.cookies:
            item: dict[str, Any] = {"name": c.name, "value": c.value or ""}
            host = c.domain.lstrip(".")
            if c.domain_initial_dot or (c.domain_specified and c.domain.startswith(".")):
                item.update(domain=c.domain, path=c.path or "/")
            else:
                scheme = "https" if c.secure else "http"
                item["url"] = f"{scheme}://{host}{c.path or '/'}"
            if c.expires:
                item["expires"] = float(c.expires)
            item["secure"] = bool(c.secure)
            item["httpOnly"] = c.has_nonstandard_attr(HTTPONLY)
            out.append(item)
        return out

    def scrub(self, text: str) -> str:
        """`text` with every cookie value replaced by `[redacted]`."""
        for value in sorted(self.values(), key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def scrub_data(self, data: Any) -> Any:
        """A JSON-like value (dicts, lists, strings) with every cookie value scrubbed."""
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, dict):
            return {k: self.scrub_data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub_data(v) for v in data]
        return data

    def jar(self) -> http.cookiejar.CookieJar:
        """The cookies in a jar of their own: an HTTP client given it sends each cookie only
        to the hosts and paths it matches, at every redirect hop (shared.fetching)."""
        jar = http.cookiejar.CookieJar()
        for c in self.cookies:
            kept = copy.copy(c)
            if not kept.expires:  # 0: a session cookie in exported files, "expired" to the jar
                kept.expires, kept.discard = None, True
            jar.set_cookie(kept)
        return jar

    @contextlib.contextmanager
    def netscape_file(self) -> Iterator[Path]:
        """The cookies in a Netscape file of their own (mode 0600, in a private temporary
        folder, deleted on exit): what yt-dlp reads, and may write back to, without touching
        the operator's file or any uploaded folder."""
        folder = Path(tempfile.mkdtemp(prefix="dla-cookies-"))
        path = folder / "cookies.txt"
        try:
            jar = http.cookiejar.MozillaCookieJar(str(path))
            for c in self.cookies:
                jar.set_cookie(c)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.close(fd)
            jar.save(ignore_discard=True, ignore_expires=True)
            yield path
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def site_of(url: str) -> str:
    """The registrable domain a link's cookies are filed under."""
    return registrable_domain((urlsplit(url).hostname or "").lower())


def _belongs(cookie_domain: str, site: str) -> bool:
    domain = cookie_domain.lstrip(".").lower()
    return domain == site or domain.endswith("." + site)


EXAMPLE = "reddit.com.txt for Reddit"
"""How a cookies file is named, in the words that say so."""


def folder_notes(cookies_dir: str | None) -> list[str]:
    """What in COOKIES_DIR gives no capture its cookies, a sentence each saying what to do: a
    folder that is not there, a file named for no site (`www.reddit.com.txt`: the site is
    `reddit.com`), a file not ending `.txt`, one that is no Netscape cookies.txt (its first
    line only is read). Empty when all is well or none is set."""
    if not cookies_dir:
        return []
    folder = Path(cookies_dir)
    if not folder.is_dir():
        return [f"COOKIES_DIR={cookies_dir!r} is not a folder: no capture gets cookies"]
    notes = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        if path.suffix != ".txt":
            notes.append(f"{path.name} in COOKIES_DIR is never read: only <site>.txt files are")
            continue
        site = registrable_domain(path.stem.lower())
        if site != path.stem or "." not in site:
            named = f"name it {site}.txt" if "." in site else f"name it for its site ({EXAMPLE})"
            notes.append(f"{path.name} in COOKIES_DIR is named for no site: {named}")
        elif not _netscape(path):
            notes.append(f"{path.name} in COOKIES_DIR is no Netscape cookies.txt: its first"
                         f" line must be '# Netscape HTTP Cookie File'")  # fmt: skip
    return notes


def _netscape(path: Path) -> bool:
    """Whether the file starts as http.cookiejar.MozillaCookieJar reads it (its first line
    only is read; nothing of it is ever shown)."""
    try:
        with path.open("rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf")
    except OSError:
        return False
    return re.match(rb"#( Netscape)? HTTP Cookie File", head) is not None


def load(cookies_dir: str | Path | None, url: str) -> CookieSet:
    """The cookies for a link: `<cookies_dir>/<registrable domain>.txt`, that domain's
    unexpired cookies only. Empty when there is no folder or file; a file that cannot be
    read is logged (its name, never its content) and counts as none."""
    site = site_of(url)
    if not cookies_dir or not site or "/" in site or site.startswith("."):
        return CookieSet(site, ())
    path = Path(cookies_dir) / f"{site}.txt"
    if not path.is_file():
        return CookieSet(site, ())
    jar = http.cookiejar.MozillaCookieJar()
    try:
        jar.load(str(path), ignore_discard=True, ignore_expires=True)
    except (OSError, http.cookiejar.LoadError) as exc:
        log.warning("cookies file %s cannot be read: %s", path, type(exc).__name__)
        return CookieSet(site, ())
    now = time.time()
    # expiry 0 is a session cookie in the files browsers' exporters write
    kept = tuple(c for c in jar if _belongs(c.domain, site) and not (c.expires and c.expires < now))
    ignored = len(jar) - len(kept)
    if ignored:
        log.info("cookies file %s: %d cookies of other sites ignored", path.name, ignored)
    return CookieSet(site, kept)
