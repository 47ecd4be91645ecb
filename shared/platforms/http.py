"""The requests of platform steps: every one through `shared.fetching` (the target policy
on every hop, connects to the checked address, timeouts, stall rules, byte caps), every
exchange into the hook's WARC; and what an HTTP answer says by itself (`judge`).

Each fetch streams its body into a folder of its own (never the hook's folder, whose files
are uploaded), so steps and image downloads may run side by side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from shared.content.no_archive import declined_by_answer
from shared.content.walls import is_login_url, wall_in_html
from shared.cookies import CookieSet
from shared.fetching import retry_after as retry_wait
from shared.fetching.exchange import Fetch, FetchLimits
from shared.fetching.warc import WarcLog
from shared.platforms.outcome import StepOutcome, gone, unknown
from shared.targets import checked_url


@dataclass(frozen=True)
class Answer:
    """One response, read whole or cut at the cap (never raises for what a server does)."""

    url: str
    final_url: str
    status: int | None
    error: str | None
    """A fetch error kind (TIMEOUT, STALLED, REFUSED, DNS, TOO_LARGE, NOT_HTML ...)."""
    message: str
    body: bytes
    content_type: str
    """The type the bytes are (shared.fetching.sniffing), else as declared."""
    headers: tuple[tuple[str, str], ...] = ()
    """The response's headers, as received."""

    @property
    def declined(self) -> str | None:
        """Why the answer asks not to be archived (X-No-Archive header or meta), or None."""
        return declined_by_answer(self.headers, self.body, self.content_type)

    @property
    def text(self) -> str:
        """The body as text (UTF-8, bad bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Download:
    """One media file fetched to disk."""

    url: str
    path: Path | None
    """The file, when kept (an image or video, read whole within the cap)."""
    status: int | None
    content_type: str
    bytes: int
    error: str | None
    """Why it was not kept (too_large, not_media, http_404, timeout ...)."""


class Client:
    """GETs of one hook (or one check) through shared.fetching."""

    def __init__(
        self,
        limits: FetchLimits,
        *,
        user_agent: str,
        allow_private: bool,
        warc: WarcLog | None = None,
        media_max_bytes: int = 50 * 1024 * 1024,
        resolve: Any = checked_url,
        cookies: CookieSet | None = None,
    ) -> None:
        self.limits, self.user_agent, self.allow_private = limits, user_agent, allow_private
        self.warc, self.resolve, self.cookies = warc, resolve, cookies
        self.media_limits = replace(limits, max_bytes=media_max_bytes, store_not_html=True)
        self._scratch = Path(tempfile.mkdtemp(prefix="dla-platform-"))
        self._count = 0

    def close(self) -> None:
        """Delete the scratch folder."""
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _workdir(self) -> Path:
        self._count += 1
        path = self._scratch / str(self._count)
        path.mkdir()
        return path

    async def _run(
        self, url: str, limits: FetchLimits, headers: dict[str, str] | None
    ) -> tuple[Any, Path]:
        workdir = self._workdir()
        fetch = Fetch(
            limits,
            user_agent=self.user_agent,
            allow_private=self.allow_private,
            workdir=workdir,
            warc=self.warc,
            resolve=self.resolve,
            cookies=self.cookies.jar() if self.cookies else None,
        )
        if headers:
            fetch.headers.update(headers)
        return await fetch.run(url), workdir

    async def get(self, url: str, headers: dict[str, str] | None = None) -> Answer:
        """GET `url`; the body in memory (at most the cap's bytes)."""
        res, workdir = await self._run(url, self.limits, headers)
        try:
            body = res.body.read_bytes() if res.body is not None else b""
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        declared = dict((k.lower(), v) for k, v in res.response.headers) if res.response else {}
        kind = res.sniffed.effective if res.sniffed else declared.get("content-type", "")
        return Answer(
            url=url,
            final_url=res.final_url,
            status=res.response.status if res.response else None,
            error=res.error,
            message=res.message,
            body=body,
            content_type=kind,
            headers=tuple((k, v) for k, v in res.response.headers) if res.response else (),
        )

    async def download(self, url: str, dest: Path) -> Download:
        """Fetch a media file to `dest`: kept only when whole, within the media cap, and an
        image, video or sound by its bytes (a login page served instead is not an image)."""
        res, workdir = await self._run(url, self.media_limits, None)
        try:
            status = res.response.status if res.response else None
            kind = res.sniffed.effective if res.sniffed else ""
            error = None
            if res.error == "TOO_LARGE" or res.truncated:  # an image is NOT_HTML first
                error = "too_large"
            elif res.error not in (None, "NOT_HTML"):
                error = res.error.lower()
            elif status is None or not 200 <= status < 300:
                error = f"http_{status}"
            elif not kind.startswith(("image/", "video/", "audio/")):
                error = f"not_media ({kind or 'unknown type'})"
            if error is not None or res.body is None:
                return Download(url, None, status, kind, res.body_bytes, error or "no body")
            size = await asyncio.to_thread(_move, res.body, dest)
            return Download(url, dest, status, kind, size, None)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    async def gather_downloads(
        self, jobs: list[tuple[str, Path]], at_once: int = 4
    ) -> list[Download]:
        """Several downloads, `at_once` at a time, in the order given."""
        gate = asyncio.Semaphore(at_once)

        async def one(url: str, dest: Path) -> Download:
            async with gate:
                return await self.download(url, dest)

        return list(await asyncio.gather(*(one(u, d) for u, d in jobs)))


def _move(source: Path, dest: Path) -> int:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(source, dest)
    return dest.stat().st_size


def judge(step: str, answer: Answer) -> StepOutcome | None:
    """The outcome an answer decides by itself, else None (a usable 2xx body): a fetch
    error (unknown), 404/410 (gone, not_found), 429 (rate_limited), 5xx, a login redirect or
    login page (login_wall), another 4xx (unknown, with its status)."""
    status = answer.status
    if answer.error == "TOO_LARGE":
        return unknown(step, answer.url, status, "too_large", answer.message)
    if answer.error not in (None, "NOT_HTML"):
        return unknown(step, answer.url, status, str(answer.error).lower(), answer.message)
    if status in (404, 410):
        return gone(step, answer.url, status, "not_found", f"HTTP {status}")
    if status == 429:
        wait = retry_wait.of_headers(answer.headers)
        return unknown(step, answer.url, status, "rate_limited", answer.text[:300], wait)
    if status is not None and status >= 500:
        return unknown(step, answer.url, status, "http_5xx", answer.text[:300])
    if is_login_url(answer.final_url) and answer.final_url != answer.url:
        return unknown(step, answer.url, status, "login_wall", f"redirected to {answer.final_url}")
    if answer.content_type in ("text/html", "application/xhtml+xml"):
        wall = wall_in_html(answer.final_url, answer.text)
        if wall is not None:
            return unknown(step, answer.url, status, wall.reason, wall.why)
    if status is None or status >= 400 or status < 200:
        return unknown(
            step, answer.url, status, "http_4xx" if status else "no_answer", answer.text[:300]
        )
    return None


def parse_json(step: str, answer: Answer) -> Any | StepOutcome:
    """The JSON of a 2xx answer, or the unknown outcome saying why there is none: HTML where
    JSON was expected (a login wall says so), malformed JSON, or JSON cut at the cap."""
    body = answer.body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body[:1] == b"<" or answer.content_type in ("text/html", "application/xhtml+xml"):
        wall = wall_in_html(answer.final_url, answer.text)
        if wall is not None:
            return unknown(step, answer.url, answer.status, wall.reason, wall.why)
        return unknown(
            step,
            answer.url,
            answer.status,
            "bad_answer",
            "HTML where JSON was expected: " + answer.text[:200],
        )
    try:
        return json.loads(body)
    except ValueError as exc:
        return unknown(step, answer.url, answer.status, "bad_answer", f"malformed JSON: {exc}")


async def get_json(client: Client, step: str, url: str) -> tuple[Answer, Any | StepOutcome]:
    """GET an API answer: (the answer, its JSON or the outcome that ends the step)."""
    answer = await client.get(url, {"Accept": "application/json"})
    judged = judge(step, answer)
    return answer, (judged if judged is not None else parse_json(step, answer))


@contextlib.contextmanager
def warc_log(path: Path, software: str) -> Any:
    """A WARC for the hook's exchanges, deleted again when nothing was written into it."""
    log = WarcLog(path, software)
    try:
        yield log
    finally:
        log.close()
        if not log.exchanges:
            path.unlink(missing_ok=True)
