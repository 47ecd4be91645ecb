"""One fetch of a capture target, ending with an honest outcome.

Follows redirects by hand (each hop's target is checked, then connected to by its checked
address), and ends every fetch with either a kept body or an error kind from
`shared.hooks.error_codes` (the part after `E_FETCH_`):

- TIMEOUT: the total timeout passed, the connect timed out, or the response headers were
  not complete within the header timeout (a server dripping its headers);
- STALLED: no byte for the idle timeout, or fewer than `min_bytes_per_second * idle`
  bytes within any idle-timeout window of the body (a body dripping a byte a second);
- TRUNCATED: the connection ended before the body did (short of its Content-Length, a
  cut chunked or gzip stream);
- TOO_LARGE: the decoded body passed the byte cap: the first `max_bytes` are kept and the
  result is partial, marked truncated;
- BOMB: the compressed body expands more than `max_ratio` times: nothing kept;
- NOT_HTML: the bytes (or, lacking a signature, the type) say it is not a page: reading
  stops at once, type and size are recorded, nothing kept unless `store_not_html`;
- REFUSED, DNS, REDIRECTS, FAILED: target not allowed, name lookup failed for now, too many
  hops, network error.

The body is streamed to disk (never held whole in memory) and decoded with the bounded
decoder (`shared.fetching.decoding`: gzip, deflate, br, zstd; it asks for gzip and deflate).
Each exchange whose response was read in full (or cut at the cap) goes to the WARC.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urljoin, urlsplit

import httpx

from shared.errors import NoSuchHost, TargetRefused, TargetUnresolved
from shared.fetching.decoding import (
    ASKED,
    BoundedDecoder,
    CompressionBomb,
    CorruptEncoding,
    UnsupportedEncoding,
)
from shared.fetching.pinning import pinned_transport
from shared.fetching.sniffing import SNIFF_BYTES, Sniffed, sniff
from shared.fetching.warc import Exchange, WarcLog
from shared.hooks.error_codes import What
from shared.links.urlparts import strip_credentials
from shared.targets import checked_url

ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
REDIRECT_BODY_CAP = 64 * 1024
"""Bytes of a redirect response's body kept (for the WARC)."""
BODY_PART = ".body.part"
RAW_PART = ".raw.part"


@dataclass(frozen=True)
class FetchLimits:
    """Every bound of one fetch."""

    total_timeout: float = 60.0
    header_timeout: float = 20.0
    idle_timeout: float = 15.0
    connect_timeout: float = 10.0
    min_bytes_per_second: float = 256.0
    max_bytes: int = 100 * 1024 * 1024
    max_ratio: float = 100.0
    max_redirects: int = 10
    store_not_html: bool = False

    @classmethod
    def of_settings(cls, settings: Mapping[str, Any], total: float | None = None) -> FetchLimits:
        """The bounds the fetch plugin's settings give (`FETCH_*`, its config.json declares
        every one a default), within `total` seconds (default `FETCH_TIMEOUT`): the raw
        fetch of a capture and a liveness check of the page fetch alike."""

        def num(name: str) -> float:
            return float(settings[name])

        total = num("FETCH_TIMEOUT") if total is None else total
        return cls(
            total_timeout=total,
            header_timeout=min(total, num("FETCH_HEADER_TIMEOUT")),
            idle_timeout=min(total, num("FETCH_IDLE_TIMEOUT")),
            connect_timeout=min(total, num("FETCH_CONNECT_TIMEOUT")),
            min_bytes_per_second=num("FETCH_MIN_BYTES_PER_SECOND"),
            max_bytes=int(settings["FETCH_MAX_BYTES"]),
            max_ratio=num("FETCH_MAX_DECOMPRESSION_RATIO"),
            max_redirects=int(settings["FETCH_MAX_REDIRECTS"]),
            store_not_html=bool(settings["FETCH_STORE_NOT_HTML"]),
        )


@dataclass
class Hop:
    """One response (a redirect or the final one)."""

    url: str
    ip: str | None
    status: int
    reason: str
    http_version: str
    headers: list[tuple[str, str]]
    request_headers: list[tuple[str, str]]


@dataclass
class FetchResult:
    """How the fetch ended."""

    url: str
    """The URL asked for, credentials removed."""
    final_url: str
    redirects: list[Hop] = field(default_factory=list)
    response: Hop | None = None
    """The final response (None when none arrived)."""
    error: What | None = None
    """Error kind (TIMEOUT, STALLED, ...), None when the body was read whole."""
    message: str = ""
    body: Path | None = None
    """The decoded body file when kept (whole, or cut at the cap), else None."""
    body_bytes: int = 0
    raw_bytes: int = 0
    declared_length: int | None = None
    truncated: bool = False
    sniffed: Sniffed | None = None
    warc_exchanges: int = 0

    def fail(self, error: What, message: str) -> None:
        """Record the first error (later ones are consequences)."""
        if self.error is None:
            self.error, self.message = error, message


Resolver = Callable[..., Awaitable[list[str]]]
"""(url, *, allow_private) -> its checked addresses (shared.targets.checked_url)."""


class Fetch:
    """Runs one fetch; `run()` never raises for anything the target does."""

    def __init__(
        self,
        limits: FetchLimits,
        *,
        user_agent: str,
        allow_private: bool,
        workdir: Path,
        warc: WarcLog | None = None,
        resolve: Resolver = checked_url,
        cookies: http.cookiejar.CookieJar | None = None,
    ) -> None:
        self.limits, self.workdir, self.warc = limits, workdir, warc
        self.allow_private, self.resolve = allow_private, resolve
        self.cookies = cookies
        """Cookies httpx sends to the hosts and paths each matches, hop by hop (the WARC
        leaves their values out: shared.fetching.warc.redacted)."""
        self.headers = {
            "User-Agent": user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ASKED,
        }
        self.pins: dict[str, str] = {}
        self.result = FetchResult(url="", final_url="")

    async def run(self, url: str) -> FetchResult:
        """Fetch `url` (credentials in it are dropped first)."""
        lim = self.limits
        url = strip_credentials(url)
        self.result = FetchResult(url=url, final_url=url)
        timeout = httpx.Timeout(
            connect=min(lim.connect_timeout, lim.header_timeout),
            read=lim.idle_timeout,
            write=lim.idle_timeout,
            pool=lim.idle_timeout,
        )
        client = httpx.AsyncClient(
            transport=pinned_transport(self.pins),
            timeout=timeout,
            follow_redirects=False,
            headers=self.headers,
            cookies=self.cookies,
            trust_env=False,
        )
        try:
            async with client, asyncio.timeout(lim.total_timeout):
                await self._follow(client, url)
        except TimeoutError:
            self.result.fail(
                "TIMEOUT", f"not done within the total timeout ({lim.total_timeout:g}s)"
            )
        finally:
            self._cleanup()
        return self.result

    def _cleanup(self) -> None:
        (self.workdir / RAW_PART).unlink(missing_ok=True)
        keep = self.result.error in (None, "TOO_LARGE") or (
            self.result.error == "NOT_HTML" and self.limits.store_not_html
        )
        if self.result.body is None or not keep:
            (self.workdir / BODY_PART).unlink(missing_ok=True)
            self.result.body = None

    async def _follow(self, client: httpx.AsyncClient, url: str) -> None:
        lim, res = self.limits, self.result
        for _hop in range(lim.max_redirects + 1):
            host = (urlsplit(url).hostname or "").lower()
            try:
                addresses = await self.resolve(url, allow_private=self.allow_private)
            except NoSuchHost as exc:  # the name does not exist: no retry
                res.fail("NO_HOST", str(exc))
                return
            except TargetRefused as exc:
                res.fail("REFUSED", f"refused target {url}: {exc}")
                return
            except TargetUnresolved as exc:  # DNS failed for now: retried with backoff
                res.fail("DNS", str(exc))
                return
            self.pins[host] = addresses[0]
            try:
                request = client.build_request("GET", url)
            except httpx.HTTPError as exc:
                res.fail("REFUSED", f"bad URL {url}: {exc}")
                return
            response = await self._send(client, request)
            if response is None:
                return
            hop = Hop(
                url=url,
                ip=self.pins[host],
                status=response.status_code,
                reason=response.reason_phrase,
                http_version=response.http_version,
                headers=[(k, v) for k, v in response.headers.multi_items()],
                request_headers=[(k, v) for k, v in request.headers.multi_items()],
            )
            try:
                if response.is_redirect and "location" in response.headers:
                    res.redirects.append(hop)
                    body = await self._redirect_body(response)
                    self._to_warc(hop, body, None)
                    url = strip_credentials(urljoin(url, response.headers["location"]))
                    continue
                res.response, res.final_url = hop, url
                await self._body(response, hop)
                return
            finally:
                await response.aclose()
        res.fail("REDIRECTS", f"more than {lim.max_redirects} redirects")

    async def _send(
        self, client: httpx.AsyncClient, request: httpx.Request
    ) -> httpx.Response | None:
        lim, res = self.limits, self.result
        try:
            async with asyncio.timeout(lim.header_timeout) as headers_due:
                return await client.send(request, stream=True)
        except TimeoutError:
            if not headers_due.expired():
                raise
            res.fail("TIMEOUT", f"response headers not complete within {lim.header_timeout:g}s")
        except httpx.ConnectTimeout:
            res.fail("TIMEOUT", f"connect to {request.url.host} timed out")
        except httpx.TimeoutException:
            res.fail("STALLED", f"no byte for {lim.idle_timeout:g}s waiting for the response")
        except httpx.HTTPError as exc:
            res.fail("FAILED", f"fetching {request.url} failed: {exc!r}")
        return None

    async def _redirect_body(self, response: httpx.Response) -> bytes:
        body = bytearray()
        with contextlib.suppress(httpx.HTTPError, TimeoutError):
            async with asyncio.timeout(self.limits.idle_timeout):
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) >= REDIRECT_BODY_CAP:
                        break
        return bytes(body[:REDIRECT_BODY_CAP])

    async def _body(self, response: httpx.Response, hop: Hop) -> None:
        lim, res = self.limits, self.result
        length = response.headers.get("content-length", "")
        res.declared_length = int(length) if length.strip().isdigit() else None
        try:
            decoder = BoundedDecoder(
                response.headers.get("content-encoding", ""), max_ratio=lim.max_ratio
            )
        except UnsupportedEncoding as exc:
            res.fail("FAILED", f"unsupported Content-Encoding {exc}")
            return
        identity = decoder.identity
        body_path = self.workdir / BODY_PART
        res.body = body_path
        with body_path.open("wb") as body, contextlib.ExitStack() as stack:
            raw = None if identity else stack.enter_context((self.workdir / RAW_PART).open("wb"))
            whole = await self._read(response, decoder, body, raw)
        if not whole or res.error not in (None, "TOO_LARGE"):
            return
        payload = body_path if identity else self.workdir / RAW_PART
        self._to_warc(hop, payload, "length" if res.truncated else None)

    async def _read(
        self,
        response: httpx.Response,
        decoder: BoundedDecoder,
        body: BinaryIO,
        raw: BinaryIO | None,
    ) -> bool:
        """Stream the body to disk; False when reading stopped early because it is not a
        page (the result says why), True otherwise (errors are set on the result)."""
        lim, res = self.limits, self.result
        loop = asyncio.get_running_loop()
        head = bytearray()
        window_need = lim.min_bytes_per_second * lim.idle_timeout
        window_bytes = 0
        try:
            async with asyncio.timeout(lim.idle_timeout) as stall:
                async for chunk in response.aiter_raw():
                    res.raw_bytes += len(chunk)
                    window_bytes += len(chunk)
                    if window_bytes >= window_need:
                        window_bytes = 0
                        stall.reschedule(loop.time() + lim.idle_timeout)
                    if raw is not None:
                        raw.write(chunk)
                    for piece in decoder.feed(chunk):
                        if res.sniffed is None:
                            head += piece[: SNIFF_BYTES - len(head)]
                            if len(head) >= SNIFF_BYTES and not self._decide(response, head):
                                return False
                        if not self._write(body, piece):
                            return True
                if res.sniffed is None and not self._decide(response, head):
                    return False
                self._write(body, decoder.flush())
        except TimeoutError:
            if not stall.expired():
                raise
            res.fail(
                "STALLED",
                f"fewer than {window_need:g} bytes in {lim.idle_timeout:g}s after"
                f" {res.raw_bytes} bytes",
            )
        except httpx.TimeoutException:
            res.fail("STALLED", f"no byte for {lim.idle_timeout:g}s after {res.raw_bytes} bytes")
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            res.fail("TRUNCATED", self._short(f"connection ended early ({exc})"))
        except CompressionBomb as exc:
            res.fail("BOMB", f"decompression bomb: {exc}")
        except CorruptEncoding as exc:
            res.fail("TRUNCATED" if not decoder.ended else "FAILED", f"corrupt body: {exc}")
        except httpx.HTTPError as exc:
            res.fail("FAILED", f"reading the body failed: {exc!r}")
        else:
            if not decoder.ended and not res.truncated:
                res.fail("TRUNCATED", self._short("the compressed stream ended early"))
        return True

    def _short(self, why: str) -> str:
        got, want = self.result.raw_bytes, self.result.declared_length
        return f"{why}: {got} of {want if want is not None else '?'} bytes"

    def _decide(self, response: httpx.Response, head: bytes | bytearray) -> bool:
        """Sniff the first bytes; False when reading should stop (not a page, not kept)."""
        res = self.result
        res.sniffed = sniff(response.headers.get("content-type", ""), bytes(head))
        if res.sniffed.is_page:
            return True
        size = (
            f"{res.declared_length} bytes"
            if res.declared_length is not None
            else f"at least {res.raw_bytes} bytes"
        )
        res.fail("NOT_HTML", f"not a web page: {res.sniffed.effective}, {size}")
        return self.limits.store_not_html

    def _write(self, body: BinaryIO, piece: bytes) -> bool:
        """Append within the cap; False once the cap is reached (the result says partial)."""
        res = self.result
        room = self.limits.max_bytes - res.body_bytes
        if len(piece) > room:
            body.write(piece[:room])
            res.body_bytes += room
            res.truncated = True
            res.fail(
                "TOO_LARGE", f"body passed the {self.limits.max_bytes}-byte cap; first part kept"
            )
            return False
        body.write(piece)
        res.body_bytes += len(piece)
        return True

    def _to_warc(self, hop: Hop, payload: Path | bytes, truncated: str | None) -> None:
        if self.warc is None:
            return
        self.warc.write(
            Exchange(
                url=hop.url,
                ip=hop.ip,
                request_headers=hop.request_headers,
                http_version=hop.http_version,
                status=hop.status,
                reason=hop.reason,
                response_headers=hop.headers,
                payload=payload,
                truncated=truncated,
            )
        )
        self.result.warc_exchanges += 1
