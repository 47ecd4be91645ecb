"""Hook (step 6): a Reddit link's old.reddit page and its permalink's `.json`.

For reddit.com links only (others: `skipped`). The HTML page is asked of REDDIT_OLD_BASE
(old.reddit.com), then of REDDIT_WWW_BASE (www.reddit.com) when the first answer is a block
page, a login wall or the over-18 gate (shared.content.reddit.classify_page); the page that
worked is `page.html`. For thread links the permalink's `.json` (REDDIT_JSON_BASE) is kept
as `thread.json` and turned into `thread.html` (post and comment tree, the readable plugin's
article) and `post.json` (title, author, date, subreddit: the metadata plugin's values).
`reddit.json` records every attempt (URL, status, verdict) and which source succeeded.
Redirects are followed only within the three configured bases.

Outcome: succeeded when the page or the JSON worked (output says which); when neither did,
failed: hard (exit 1, retried) with E_REDDIT_BLOCKED (403/429, a block page) or
E_REDDIT_FAILED (timeout, connection error, 5xx), soft with E_REDDIT_LOGIN_WALL,
E_REDDIT_AGE_GATE or E_REDDIT_NOT_FOUND (retrying cannot help).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from shared.content.reddit import (
    NotAThread,
    classify_page,
    is_reddit,
    on_host,
    parse_thread,
    thread_html,
    thread_metadata,
    thread_path,
)
from shared.hooks.error_codes import retry_worthy
from shared.hooks.records import ArchiveResultRecord, emit

MAX_REDIRECTS = 5


class Fetcher:
    """GETs with redirects kept inside the configured bases and a byte cap."""

    def __init__(self, bases: list[str], timeout: float, max_bytes: int, agent: str) -> None:
        self.origins = {urlsplit(b)[:2] for b in bases}
        self.max_bytes = max_bytes
        self.client = httpx.Client(
            timeout=timeout, follow_redirects=False, headers={"User-Agent": agent}
        )

    def get(self, url: str) -> dict[str, Any]:
        """{url, final_url, status, body (bytes), error}; never raises."""
        attempt: dict[str, Any] = {"url": url, "final_url": url, "status": None, "error": None}
        body = b""
        try:
            for _ in range(MAX_REDIRECTS + 1):
                with self.client.stream("GET", attempt["final_url"]) as response:
                    attempt["status"] = response.status_code
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        target = urljoin(attempt["final_url"], location)
                        if urlsplit(target)[:2] not in self.origins:
                            attempt["error"] = f"redirect outside Reddit: {target}"
                            break
                        attempt["final_url"] = target
                        continue
                    chunks = []
                    size = 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > self.max_bytes:
                            attempt["error"] = f"response over {self.max_bytes} bytes"
                            break
                        chunks.append(chunk)
                    body = b"".join(chunks)
                    break
            else:
                attempt["error"] = "too many redirects"
        except httpx.HTTPError as exc:
            attempt["error"] = f"{type(exc).__name__}: {exc}"
        attempt["body"] = body
        return attempt


def html_page(
    fetcher: Fetcher, url: str, bases: list[tuple[str, str]]
) -> tuple[str | None, list[dict[str, Any]]]:
    """(name of the base whose page worked, attempts); writes page.html."""
    attempts = []
    for name, base in bases:
        got = fetcher.get(on_host(base, url))
        text = got["body"].decode("utf-8", errors="replace")
        verdict = "error" if got["error"] else classify_page(got["status"], got["final_url"], text)
        attempts.append({**{k: v for k, v in got.items() if k != "body"}, "verdict": verdict})
        if verdict == "ok":
            Path("page.html").write_bytes(got["body"])
            return name, attempts
    return None, attempts


def thread_json(fetcher: Fetcher, url: str, base: str) -> tuple[bool, dict[str, Any]]:
    """(worked, attempt); writes thread.json, thread.html and post.json."""
    got = fetcher.get(on_host(base, url, json_suffix=True))
    attempt = {k: v for k, v in got.items() if k != "body"}
    if got["error"] or got["status"] != 200:
        attempt["verdict"] = "error" if got["error"] else classify_page(got["status"], "", "")
        return False, attempt
    try:
        thread = parse_thread(json.loads(got["body"]))
    except (ValueError, NotAThread) as exc:  # a login page or a block page instead of JSON
        attempt.update(verdict="not_json", error=str(exc)[:200])
        return False, attempt
    Path("thread.json").write_bytes(got["body"])
    Path("thread.html").write_text(thread_html(thread), encoding="utf-8")
    meta = thread_metadata(thread).as_dict()
    Path("post.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    attempt["verdict"] = "ok"
    return True, attempt


def outcome(attempts: list[dict[str, Any]]) -> str:
    """The error code when nothing worked (whether it is retried: shared.hooks.error_codes)."""
    verdicts = {a["verdict"] for a in attempts}
    if "blocked" in verdicts:
        return "E_REDDIT_BLOCKED"
    if "error" in verdicts:  # timeouts, refused connections, 5xx, oversized responses
        return "E_REDDIT_FAILED"
    if "login" in verdicts:
        return "E_REDDIT_LOGIN_WALL"
    if "over18" in verdicts:
        return "E_REDDIT_AGE_GATE"
    return "E_REDDIT_NOT_FOUND"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    if not is_reddit(args.url):
        emit(ArchiveResultRecord(status="skipped", output_str="not a Reddit link"))
        return 0
    env = os.environ
    old = env.get("REDDIT_OLD_BASE", "https://old.reddit.com")
    www = env.get("REDDIT_WWW_BASE", "https://www.reddit.com")
    json_base = env.get("REDDIT_JSON_BASE", "https://www.reddit.com")
    fetcher = Fetcher(
        [old, www, json_base],
        float(env.get("REDDIT_REQUEST_TIMEOUT", "15")),
        int(env.get("REDDIT_MAX_BYTES", str(20 * 1024 * 1024))),
        env.get("USER_AGENT", "DiscourseLinkArchiver/1.0"),
    )
    html_source, attempts = html_page(fetcher, args.url, [("old.reddit", old), ("www.reddit", www)])
    json_ok = False
    if thread_path(args.url):
        json_ok, attempt = thread_json(fetcher, args.url, json_base)
        attempts.append(attempt)
    report = {"url": args.url, "html_source": html_source, "json": json_ok, "attempts": attempts}
    Path("reddit.json").write_text(json.dumps(report, indent=1))
    if html_source or json_ok:
        parts = [p for p in (html_source, "json" if json_ok else None) if p]
        why = ", ".join(f"{a['url']}: {a['verdict']}" for a in attempts if a["verdict"] != "ok")
        summary = " + ".join(parts) + (f" ({why})" if why else "")
        emit(ArchiveResultRecord(status="succeeded", output_str=summary[:500]))
        return 0
    code = outcome(attempts)
    why = "; ".join(f"{a['url']}: {a['verdict']} {a['error'] or a['status']}" for a in attempts)
    emit(ArchiveResultRecord(status="failed", output_str=why[:500], error_code=code))
    return 1 if retry_worthy(code) else 0


if __name__ == "__main__":
    sys.exit(main())
