#!/usr/bin/env python3
"""Hook (step 6, background): download the link's video(s) with yt-dlp, used as a library.

The site's cookies (COOKIES_DIR, shared.cookies), when the operator gave some, go to yt-dlp
in a private file of their own (a video behind the login is downloaded too); their values
are scrubbed from what yt-dlp writes. yt-dlp's parameters shared with the platform steps
are built in one place (shared.platforms.ytdlp.params).

Keeps, in its folder: the best video+audio merged by ffmpeg (`<id>.mp4`, else `.mkv`),
thumbnails, subtitles (manual and automatic, MEDIA_SUBTITLE_LANGS), `<id>.info.json` and
`<id>.description`. Prints a Progress record every MEDIA_PROGRESS_INTERVAL seconds while
downloading, one Media record per video (platform, id, title, description, uploader and a
transcript made from the subtitles) and the ArchiveResult.

A page that opts out (X-No-Archive header, or the meta tag: shared.content.no_archive) is
asked for its first bytes before yt-dlp runs, and declined: E_MEDIA_DECLINED, nothing
downloaded (MEDIA_RESPECT_NO_ARCHIVE=false downloads it anyway).

yt-dlp finds a page's `<video>`, `og:video` and the players it knows, never its links: a
page on which it finds no video but which links to media files (`<a href>` naming a .mp4,
.m3u8, ...: what gave its link this job, shared.content.video_hint) has those files
downloaded instead (at most MEDIA_MAX_ITEMS, each asked first whether it opts out).

Outcomes: no video here, private, removed, geo-blocked, login required and refused targets
are soft failures (exit 0, status failed, own error code: not retried). A download larger
than MAX_BYTES_HARD_LIMIT stops with E_MEDIA_TOO_LARGE (soft) keeping the metadata.
Network errors, stalls, 5xx and rate limits (E_MEDIA_RATE_LIMITED) are hard failures
(exit 1: retried with backoff). On every failure, on SIGTERM and when the worker reading
its output is gone, partial files are deleted so that nothing half-downloaded is uploaded
and the retry starts clean.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import media_transcript
from yt_dlp import YoutubeDL
from yt_dlp.utils import DownloadCancelled

from shared.content.no_archive import HEAD_BYTES
from shared.content.video_hint import media_links
from shared.cookies import CookieSet
from shared.cookies import load as load_cookies
from shared.errors import NoSuchHost, TargetRefused
from shared.fetching import socket_guard
from shared.fetching.exchange import FetchLimits
from shared.hooks.config import hook_settings
from shared.hooks.error_codes import retry_worthy
from shared.hooks.records import ArchiveResultRecord, MediaRecord, ProgressRecord, emit
from shared.platforms import ytdlp
from shared.platforms.http import Answer, Client
from shared.platforms.ytdlp import YtdlpOptions
from shared.platforms.ytdlp_errors import classify
from shared.targets import check_target

METADATA_SUFFIXES = (".info.json", ".description", ".vtt", ".srt", ".ass", ".ttml")
THUMB_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
LOG_SUFFIX = ".stderr.log"
PAGE_BYTES = 5 * 1024 * 1024
"""How much of a page is read for its links to media files (linked_files)."""


class TooLarge(DownloadCancelled):  # type: ignore[misc]
    """The download passed MAX_BYTES_HARD_LIMIT."""


class Stopped(DownloadCancelled):  # type: ignore[misc]
    """SIGTERM (timeout or shutdown), or nobody reads our output any more."""


class Progress:
    """yt-dlp progress hook: Progress records, the byte cap, and the stop flag."""

    def __init__(self, limit: int, interval: float) -> None:
        self.limit, self.interval = limit, interval
        self.finished_bytes = 0
        self.current = 0
        self.last_emit = 0.0
        self.stop_reason: str | None = None
        self.finished_files: set[str] = set()

    @property
    def total_done(self) -> int:
        return self.finished_bytes + self.current

    def __call__(self, d: dict[str, Any]) -> None:
        if self.stop_reason:
            raise Stopped(self.stop_reason)
        status = d.get("status")
        downloaded = int(d.get("downloaded_bytes") or 0)
        total = d.get("total_bytes") or d.get("total_bytes_estimate")
        if status == "finished":
            self.finished_bytes += int(d.get("total_bytes") or downloaded)
            self.current = 0
            if d.get("filename"):
                self.finished_files.add(Path(d["filename"]).name)
        elif status == "downloading":
            self.current = downloaded
        if self.limit:
            expected = self.finished_bytes + int(total or 0)
            if self.total_done > self.limit or (status == "downloading" and expected > self.limit):
                size = max(self.total_done, expected)
                raise TooLarge(f"too_large: {size} bytes > MAX_BYTES_HARD_LIMIT {self.limit}")
        now = time.monotonic()
        if status == "finished" or now - self.last_emit >= self.interval:
            self.last_emit = now
            grand_total = (
                self.finished_bytes + int(total) if total and status != "finished" else None
            )
            percent = None
            if grand_total:
                percent = round(min(100.0, 100.0 * self.total_done / grand_total), 1)
            self.send(
                ProgressRecord(
                    downloaded_bytes=self.total_done,
                    total_bytes=grand_total,
                    percent=percent,
                    file=Path(d.get("filename") or "").name or None,
                )
            )

    def send(self, record: ProgressRecord) -> None:
        try:
            emit(record)
        except (BrokenPipeError, ValueError):
            self.stop_reason = "the worker reading this hook's output is gone"


def watch_reader(progress: Progress, cwd: Path) -> None:
    """Stop (deleting partial files) as soon as nobody reads stdout: the worker died.

    Without this a download would go on as an orphan after its worker was SIGKILLed."""
    poller = select.poll()
    poller.register(sys.stdout.fileno(), select.POLLERR | select.POLLHUP)
    while True:
        if poller.poll(1000):
            progress.stop_reason = "the worker reading this hook's output is gone"
            time.sleep(2)  # give the main thread a chance to stop cleanly
            delete_partial(cwd, progress.finished_files, keep_media=False)
            os.killpg(os.getpgrp(), signal.SIGKILL)


def is_metadata(name: str) -> bool:
    return name.endswith(METADATA_SUFFIXES + THUMB_SUFFIXES) and ".part" not in name


def delete_partial(cwd: Path, finished: set[str], *, keep_media: bool) -> list[str]:
    """Delete every file that is not metadata or (keep_media) a finished download."""
    deleted = []
    for path in cwd.iterdir():
        name = path.name
        if not path.is_file() or name.endswith((LOG_SUFFIX, ".pid")) or is_metadata(name):
            continue
        if keep_media and name in finished:
            continue
        path.unlink(missing_ok=True)
        deleted.append(name)
    return deleted


def media_records(cwd: Path, *, downloaded: bool) -> list[MediaRecord]:
    """One Media record per info JSON yt-dlp wrote (playlist info files are skipped)."""
    records = []
    for info_path in sorted(cwd.glob("*.info.json")):
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if info.get("_type") == "playlist" or not info.get("id"):
            continue
        stem = info_path.name[: -len(".info.json")]
        manual = set(info.get("subtitles") or {})
        subs = [
            p
            for p in cwd.iterdir()
            if p.name.startswith(f"{stem}.") and p.suffix in (".vtt", ".srt")
        ]
        files = sorted(
            subs, key=lambda p: (p.name[len(stem) + 1 :].rsplit(".", 1)[0] not in manual, p.name)
        )
        duration = info.get("duration")
        records.append(
            MediaRecord(
                platform=str(
                    info.get("extractor_key") or info.get("extractor") or "generic"
                ).lower(),
                video_id=str(info["id"]),
                media_url=info.get("webpage_url") or info.get("url"),
                title=info.get("title") or info.get("fulltitle"),
                description=str(info.get("description") or "")[:100_000] or None,
                uploader=info.get("uploader") or info.get("channel") or info.get("uploader_id"),
                duration_s=float(duration) if isinstance(duration, (int, float)) else None,
                transcript=media_transcript.transcript(files),
                downloaded=downloaded,
            )
        )
    return records


def final_files(info: dict[str, Any] | None) -> set[str]:
    """Names of the finished media files of a download (after merging), playlists included."""
    names: set[str] = set()
    stack = [info] if info else []
    while stack:
        item = stack.pop()
        stack.extend(e for e in item.get("entries") or [] if isinstance(e, dict))
        for dl in item.get("requested_downloads") or []:
            if dl.get("filepath"):
                names.add(Path(dl["filepath"]).name)
        if item.get("filepath"):
            names.add(Path(item["filepath"]).name)
    return names


def ydl_options(
    settings: dict[str, Any], progress: Progress, cookiefile: str | None
) -> dict[str, Any]:
    """yt-dlp's parameters: the ones every use shares (shared.platforms.ytdlp.params: the
    User-Agent, timeouts, retries, the site's cookies), and the download's own."""
    langs = [s.strip() for s in str(settings["MEDIA_SUBTITLE_LANGS"]).split(",") if s.strip()]
    shared = YtdlpOptions(
        user_agent=str(settings["USER_AGENT"]),
        socket_timeout=float(settings["MEDIA_SOCKET_TIMEOUT"]),
        max_items=int(settings["MEDIA_MAX_ITEMS"]),
        retries=int(settings["MEDIA_RETRIES"]),
    )
    return ytdlp.params(shared, cookiefile) | {
        "format": str(settings["MEDIA_FORMAT"]),
        "merge_output_format": str(settings["MEDIA_MERGE_FORMAT"]),
        "outtmpl": {"default": "%(id).80B.%(ext)s", "pl_infojson": "%(id).80B.playlist.%(ext)s"},
        "restrictfilenames": True,
        "windowsfilenames": True,
        "writeinfojson": True,
        "writedescription": True,
        "writethumbnail": True,
        "writesubtitles": True,
        "writeautomaticsub": True,
        "subtitleslangs": langs or ["en.*"],
        "fragment_retries": shared.retries,
        "file_access_retries": 1,
        "continuedl": False,
        "hls_prefer_native": True,
        "progress_hooks": [progress],
        "ffmpeg_location": os.environ.get("FFMPEG_BINARY") or None,
        "noplaylist": False,
    }


def scrub_written(cwd: Path, cookies: CookieSet) -> None:
    """The cookie values out of every metadata file yt-dlp wrote (its info JSON lists the
    cookies each format is fetched with)."""
    if not cookies:
        return
    for path in cwd.iterdir():
        if path.is_file() and is_metadata(path.name) and not path.name.endswith(THUMB_SUFFIXES):
            text = path.read_text(encoding="utf-8", errors="replace")
            scrubbed = cookies.scrub(text)
            if scrubbed != text:
                path.write_text(scrubbed, encoding="utf-8")


def read_page(url: str, settings: dict[str, Any], max_bytes: int, *, rounds: int = 1) -> Answer:
    """The page's headers and first `max_bytes`, asked through shared.fetching within
    `rounds` times MEDIA_SOCKET_TIMEOUT in all."""
    each = float(settings["MEDIA_SOCKET_TIMEOUT"])
    limits = FetchLimits(total_timeout=rounds * each, header_timeout=each, idle_timeout=each,
                         connect_timeout=each, max_bytes=max_bytes, max_redirects=5)  # fmt: skip

    async def ask() -> Answer:
        with Client(limits, user_agent=str(settings["USER_AGENT"]),
                     allow_private=bool(settings["ALLOW_PRIVATE_TARGETS"])) as client:  # fmt: skip
            return await client.get(url)

    return asyncio.run(ask())


def page_declines(url: str, settings: dict[str, Any]) -> str | None:
    """Why the link's page asks not to be archived (X-No-Archive), from its headers and
    first bytes; None when it does not or cannot tell."""
    return read_page(url, settings, HEAD_BYTES).declined


def linked_files(url: str, error: Exception, settings: dict[str, Any]) -> list[str]:
    """When yt-dlp found no video on a page (it reads `<video>`, `og:video` and the players
    it knows, not `<a href>`), the media files the page links to, which gave its link this
    job (shared.content.video_hint): at most MEDIA_MAX_ITEMS, read from the page's first
    PAGE_BYTES through shared.fetching. Empty for any other failure."""
    if classify(error).code("MEDIA") != "E_MEDIA_NO_VIDEO":
        return []
    try:
        answer = read_page(url, settings, PAGE_BYTES, rounds=4)
    except Exception as exc:  # the page could not be read again: the first failure stands
        print(f"media: the page's links could not be read: {exc}", file=sys.stderr)
        return []
    if answer.status is None or not 200 <= answer.status < 300:
        return []
    links = media_links(answer.text, answer.final_url)[: int(settings["MEDIA_MAX_ITEMS"])]
    if settings["MEDIA_RESPECT_NO_ARCHIVE"]:  # each file may opt out as a page does
        links = [link for link in links if page_declines(link, settings) is None]
    return links


def fail(code: str, message: str, *, soft: bool, wait_s: float | None = None) -> int:
    """The failed result (`wait_s`: what a rate limit asked for, its Retry-After)."""
    print(f"media: {code}: {message}", file=sys.stderr)
    emit(ArchiveResultRecord(status="failed", output_str=message[:2000], error_code=code,
                             retry_after_s=wait_s))  # fmt: skip
    return 0 if soft else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    cwd = Path.cwd()
    settings = hook_settings(__file__)
    allow_private = bool(settings["ALLOW_PRIVATE_TARGETS"])
    try:
        check_target(args.url, allow_private=allow_private)
    except NoSuchHost as exc:
        return fail("E_MEDIA_NO_HOST", str(exc), soft=True)
    except TargetRefused as exc:
        return fail("E_MEDIA_REFUSED", f"refused target {args.url}: {exc}", soft=True)
    why = page_declines(args.url, settings) if settings["MEDIA_RESPECT_NO_ARCHIVE"] else None
    if why is not None:
        return fail("E_MEDIA_DECLINED", f"declined: the page asks not to be archived ({why})",
                    soft=True)  # fmt: skip
    if not allow_private:
        socket_guard.install()

    progress = Progress(
        limit=int(settings["MAX_BYTES_HARD_LIMIT"]),
        interval=float(settings["MEDIA_PROGRESS_INTERVAL"]),
    )

    def on_term(signum: int, _frame: FrameType | None) -> None:
        progress.stop_reason = f"stopped by signal {signum}"
        raise Stopped(progress.stop_reason)

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=watch_reader, args=(progress, cwd), daemon=True).start()

    cookies = load_cookies(str(settings["COOKIES_DIR"]) or None, args.url)

    def download(urls: list[str]) -> list[dict[str, Any]]:
        """Each URL's download; of several (a page's linked files), one that fails does not
        stop the others: its error is raised only when none was downloaded."""
        infos: list[dict[str, Any]] = []
        failure: Exception | None = None
        with (
            ytdlp.cookie_file(cookies) as cookiefile,
            YoutubeDL(ydl_options(settings, progress, cookiefile)) as ydl,
        ):
            for url in urls:
                try:
                    infos.append(ydl.extract_info(url, download=True) or {})
                except DownloadCancelled:
                    raise
                except Exception as exc:
                    if len(urls) == 1:
                        raise
                    print(f"media: {url}: {exc}", file=sys.stderr)
                    failure = exc
        if not infos and failure is not None:
            raise failure
        return infos

    try:
        links: list[str] = []
        try:
            infos = download([args.url])
        except DownloadCancelled:
            raise
        except Exception as exc:
            links = linked_files(args.url, exc, settings)
            if not links:
                raise
        if links:  # out of the handler: the files' own failure is theirs, not chained to it
            print(f"media: no video on the page itself; it links to {links}", file=sys.stderr)
            infos = download(links)
    except TooLarge as exc:
        delete_partial(cwd, progress.finished_files, keep_media=False)
        scrub_written(cwd, cookies)
        for rec in media_records(cwd, downloaded=False):
            emit(rec)
        return fail("E_MEDIA_TOO_LARGE", str(exc), soft=True)
    except Stopped as exc:
        delete_partial(cwd, progress.finished_files, keep_media=False)
        return fail("E_MEDIA_STOPPED", str(exc), soft=False)
    except Exception as exc:  # yt-dlp's DownloadError and whatever it wraps
        delete_partial(cwd, progress.finished_files, keep_media=False)
        refused = socket_guard.refused_error(exc)
        if refused is not None:
            return fail("E_MEDIA_REFUSED", str(refused), soft=True)
        failure = classify(exc)
        code = failure.code("MEDIA")
        return fail(code, failure.message, soft=not retry_worthy(code), wait_s=failure.wait_s)

    finished = set().union(*(final_files(info) for info in infos))
    delete_partial(cwd, progress.finished_files | finished, keep_media=True)
    scrub_written(cwd, cookies)
    records = media_records(cwd, downloaded=True)
    for rec in records:
        emit(rec)
    files = [p for p in cwd.iterdir() if p.is_file() and not p.name.endswith(LOG_SUFFIX)]
    if not records:
        return fail("E_MEDIA_NO_VIDEO", "yt-dlp found no video", soft=True)
    total = sum(p.stat().st_size for p in files)
    summary = f"{len(records)} video(s), {len(files)} files, {total} bytes"
    emit(ArchiveResultRecord(status="succeeded", output_str=summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
