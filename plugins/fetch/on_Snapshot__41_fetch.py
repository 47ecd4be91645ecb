#!/usr/bin/env python3
"""Hook: fetch the URL over plain HTTP; keep the body, the headers and a WARC of the exchange.

Writes `body.<ext>` (the decoded body of a 2xx page, at most FETCH_MAX_BYTES), `headers.json`
(status, headers, final URL, redirect chain, sniffed type, sizes, the outcome) and
`fetch.warc.gz` (request + response records of every hop, raw bytes as received). Every
attempt ends with an outcome (shared/fetching/exchange.py; codes in
shared/hooks/error_codes.py, documented in plugins/README.md):

  2xx page, read whole                 succeeded
  body cut at the byte cap             partial, E_FETCH_TOO_LARGE, body.* marked truncated
  not a web page (type or bytes)       failed, E_FETCH_NOT_HTML (kept only if FETCH_STORE_NOT_HTML)
  4xx / 5xx                            failed, E_FETCH_HTTP_<status> / E_FETCH_HTTP_5XX; the
                                       error page is in the WARC, never stored as body.*
  timeout, stalled, short body, ...    failed, E_FETCH_<KIND>
  the page opts out (X-No-Archive)     failed, E_FETCH_DECLINED, nothing kept (unless
                                       FETCH_RESPECT_NO_ARCHIVE=false)

Failures a retry can fix exit 1 (the runner schedules the retry); the others exit 0.
Credentials in the URL are dropped before anything is sent or written.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from shared.content.no_archive import HEAD_BYTES, declined_by_headers, declined_by_html
from shared.fetching import retry_after as retry_wait
from shared.fetching.exchange import Fetch, FetchLimits, FetchResult
from shared.fetching.warc import WarcLog
from shared.hooks.config import hook_settings
from shared.hooks.error_codes import code, http_code, kind_of
from shared.hooks.records import ArchiveResultRecord, FileRecord, SnapshotRecord, emit
from shared.links.urlparts import strip_credentials

BODY_EXTENSIONS = {"text/html": ".html", "text/plain": ".txt", "application/json": ".json"}
WARC_NAME = "fetch.warc.gz"
SOFTWARE = "discourse-link-archiver fetch plugin (warcio)"


def body_name(effective_type: str) -> str:
    ext = BODY_EXTENSIONS.get(effective_type) or mimetypes.guess_extension(effective_type)
    return "body" + (ext or ".bin")


def error_code(res: FetchResult) -> str | None:
    """E_FETCH_<kind>, or the HTTP status code for an error page, None for a good page."""
    if res.error is not None:
        return code("FETCH", res.error)
    status = res.response.status if res.response else 0
    return http_code("FETCH", status) if status >= 400 else None


def declined(res: FetchResult) -> str | None:
    """Why the page asked not to be archived (X-No-Archive header or meta), or None."""
    if res.response is None:
        return None
    why = declined_by_headers(res.response.headers)
    if why is not None or res.body is None or not res.sniffed:
        return why
    if "html" not in res.sniffed.effective:
        return None
    with res.body.open("rb") as fh:
        return declined_by_html(fh.read(HEAD_BYTES))


def decline(res: FetchResult, why: str) -> int:
    """Keep nothing of a page that opted out; say so."""
    if res.body is not None:
        res.body.unlink(missing_ok=True)
    Path(WARC_NAME).unlink(missing_ok=True)
    output = f"declined: the page asks not to be archived ({why})"
    print(f"fetch: {output}", file=sys.stderr)
    emit(ArchiveResultRecord(status="failed", output_str=output, error_code="E_FETCH_DECLINED"))
    return 0


def write_headers(
    res: FetchResult, code: str | None, body_file: str | None, elapsed: float
) -> None:
    r = res.response
    meta = {
        "url": res.url,
        "final_url": res.final_url,
        "status": r.status if r else None,
        "reason": r.reason if r else None,
        "http_version": r.http_version if r else None,
        "ip": r.ip if r else None,
        "headers": [[k, v] for k, v in r.headers] if r else [],
        "content_type": next((v for k, v in r.headers if k.lower() == "content-type"), "")
        if r
        else "",
        "sniffed_type": res.sniffed.detected if res.sniffed else None,
        "effective_type": res.sniffed.effective if res.sniffed else None,
        "body_file": body_file,
        "bytes": res.body_bytes,
        "raw_bytes": res.raw_bytes,
        "declared_length": res.declared_length,
        "truncated": res.truncated,
        "error_code": code,
        "error": res.message or None,
        "redirects": [{"url": h.url, "status": h.status} for h in res.redirects],
        "fetched_at": datetime.now(UTC).isoformat(),
        "elapsed_s": round(elapsed, 3),
    }
    Path("headers.json").write_text(json.dumps(meta, indent=1))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--snapshot-id", default="")
    parser.add_argument("--timeout", type=float, default=None)
    args, _ = parser.parse_known_args()

    settings = hook_settings(__file__)
    hook_timeout = args.timeout or float(settings["FETCH_TIMEOUT"])
    # end (and say why) before the runner's own timeout would kill the hook
    limits = FetchLimits.of_settings(
        settings, max(1.0, hook_timeout - min(5.0, hook_timeout * 0.1))
    )
    warc = WarcLog(Path(WARC_NAME), SOFTWARE)
    fetch = Fetch(
        limits,
        user_agent=str(settings["USER_AGENT"]),
        allow_private=bool(settings["ALLOW_PRIVATE_TARGETS"]),
        workdir=Path("."),
        warc=warc,
    )
    started = time.monotonic()
    res = asyncio.run(fetch.run(strip_credentials(args.url)))
    warc.close()
    if not res.warc_exchanges:
        Path(WARC_NAME).unlink(missing_ok=True)
    why = declined(res) if settings["FETCH_RESPECT_NO_ARCHIVE"] else None
    if why is not None:
        return decline(res, why)
    code = error_code(res)
    status = res.response.status if res.response else None
    kept: str | None = None
    if res.body is not None and status is not None and status < 400 and res.sniffed:
        kept = body_name(res.sniffed.effective)
        res.body.rename(kept)
    elif res.body is not None:
        res.body.unlink(missing_ok=True)
    write_headers(res, code, kept, time.monotonic() - started)
    if kept is not None:
        emit(FileRecord(path=kept, kind="raw_response", truncated=res.truncated))
    if res.warc_exchanges:
        emit(FileRecord(path=WARC_NAME, kind="warc", content_type="application/warc"))
    if res.response is not None:
        emit(SnapshotRecord(final_url=res.final_url))
    return finish(res, code, status, kept)


def finish(res: FetchResult, code: str | None, status: int | None, kept: str | None) -> int:
    """Print the outcome; exit 1 when a retry can help (the runner schedules it)."""
    if code is None:
        output = f"HTTP {status}, {res.body_bytes} bytes"
        emit(ArchiveResultRecord(status="succeeded", output_str=output))
        return 0
    kind = kind_of(code)
    if code == "E_FETCH_TOO_LARGE" and kept is not None:
        output = f"HTTP {status}, first {res.body_bytes} bytes kept (truncated): {res.message}"
        emit(ArchiveResultRecord(status="partial", output_str=output, error_code=code))
        return 0
    output = res.message or f"HTTP {status} from {res.final_url}"
    wait = None
    if res.response is not None and status in retry_wait.WAITING_STATUSES:
        wait = retry_wait.of_headers(res.response.headers)
    if wait is not None:
        output += f"; it asks to wait {wait:.0f} s"
    print(f"fetch: {output}", file=sys.stderr)
    emit(ArchiveResultRecord(status="failed", output_str=output, error_code=code,
                             retry_after_s=wait))  # fmt: skip
    return 1 if kind is None or kind.retry else 0


if __name__ == "__main__":
    sys.exit(main())
