#!/usr/bin/env python3
"""Hook: fetch the URL over plain HTTP and keep the raw response body and headers.

Writes `body.<ext>` (the bytes as received, decompressed) and `headers.json` (status, headers,
final URL, redirect chain, timings). Every redirect hop is checked against the target
policy. 4xx and refused targets are soft failures (exit 0, status failed); network errors,
a DNS lookup that failed for now, timeouts and 5xx are hard failures (exit 1, retried later).
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urljoin

import httpx

from shared.errors import TargetRefused, TargetUnresolved
from shared.hooks.records import ArchiveResultRecord, SnapshotRecord, emit
from shared.targets import check_target

BODY_EXTENSIONS = {"text/html": ".html", "text/plain": ".txt", "application/json": ".json"}


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def fail(output: str, code: str, *, hard: bool) -> int:
    print(f"fetch: {output}", file=sys.stderr)
    emit(ArchiveResultRecord(status="failed", output_str=output, error_code=code))
    return 1 if hard else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--snapshot-id", default="")
    parser.add_argument("--timeout", type=float, default=None)
    args, _ = parser.parse_known_args()

    timeout = args.timeout or float(os.environ.get("FETCH_TIMEOUT", os.environ.get("TIMEOUT", 60)))
    max_bytes = int(os.environ.get("FETCH_MAX_BYTES", 100 * 1024 * 1024))
    max_redirects = int(os.environ.get("FETCH_MAX_REDIRECTS", 10))
    allow_private = env_bool("ALLOW_PRIVATE_TARGETS", False)
    headers = {"User-Agent": os.environ.get("USER_AGENT", "DiscourseLinkArchiver/1.0")}

    url = args.url
    chain: list[dict[str, object]] = []
    started = time.monotonic()
    deadline = started + timeout
    with httpx.Client(headers=headers, follow_redirects=False, timeout=timeout) as client:
        for _hop in range(max_redirects + 1):
            try:
                check_target(url, allow_private=allow_private)
            except TargetRefused as exc:
                return fail(f"refused target {url}: {exc}", "E_FETCH_REFUSED", hard=False)
            except TargetUnresolved as exc:  # DNS failed for now: retried with backoff
                return fail(str(exc), "E_FETCH_DNS", hard=True)
            try:
                with client.stream("GET", url, timeout=max(1.0, deadline - time.monotonic())) as r:
                    if r.is_redirect and "location" in r.headers:
                        chain.append({"url": url, "status": r.status_code})
                        url = urljoin(url, r.headers["location"])
                        continue
                    body = bytearray()
                    truncated = False
                    for chunk in r.iter_bytes():
                        body.extend(chunk)
                        if len(body) > max_bytes:
                            del body[max_bytes:]
                            truncated = True
                            break
                    response = r
                    break
            except httpx.TimeoutException as exc:
                return fail(f"timeout fetching {url}: {exc}", "E_FETCH_TIMEOUT", hard=True)
            except httpx.HTTPError as exc:
                return fail(f"fetching {url} failed: {exc}", "E_FETCH_FAILED", hard=True)
        else:
            return fail(f"more than {max_redirects} redirects", "E_FETCH_REDIRECTS", hard=False)

    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    body_name = "body" + (BODY_EXTENSIONS.get(ctype) or mimetypes.guess_extension(ctype) or ".bin")
    Path(body_name).write_bytes(bytes(body))
    meta = {
        "url": args.url,
        "final_url": url,
        "status": response.status_code,
        "reason": response.reason_phrase,
        "http_version": response.http_version,
        "headers": [[k, v] for k, v in response.headers.multi_items()],
        "content_type": response.headers.get("content-type", ""),
        "body_file": body_name,
        "bytes": len(body),
        "truncated": truncated,
        "redirects": chain,
        "fetched_at": datetime.now(UTC).isoformat(),
        "elapsed_s": round(time.monotonic() - started, 3),
    }
    Path("headers.json").write_text(json.dumps(meta, indent=1))
    emit(SnapshotRecord(final_url=url))
    status = response.status_code
    if status >= 500:
        return fail(f"HTTP {status} from {url}", "E_FETCH_HTTP_5XX", hard=True)
    if status >= 400:
        return fail(f"HTTP {status} from {url}", f"E_FETCH_HTTP_{status}", hard=False)
    summary = f"HTTP {status}, {len(body)} bytes" + (" (truncated)" if truncated else "")
    emit(ArchiveResultRecord(status="succeeded", output_str=summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
