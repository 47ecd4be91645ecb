"""Stand-ins for the public archives on 127.0.0.x, in their real shapes (fictional data):
the Wayback Machine's Save Page Now 2 (`POST /save` with `Authorization: LOW <access>:
<secret>` answers a job id; `GET /save/status/<job id>` answers `pending` once, then
`success` with the snapshot's timestamp) and archive.today (its front page's `submitid`;
`POST /submit/` answers a Refresh to `/wip/<id>`, which answers 200 once, then redirects to
the snapshot `/<id>` with its Memento-Datetime).

What each submission gets is scripted per submitted URL (`script`, by a suffix of the URL):
a list of answers, one per submission, the last one repeating; with none, success.
  "ok"       the service's job succeeds after one pending poll
  "429"      HTTP 429 with Retry-After: 1
  "daily"    SPN2's "too many captures" for the day (archive.today: a 429 without a time)
  "blocked"  SPN2's job ends in error:blocked-url (archive.today: no snapshot at all)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal
from urllib.parse import parse_qs

from testkit.httpserver import serving_thread

Kind = Literal["wayback", "archive_today"]
Answered = tuple[int, dict[str, str], bytes]
STAMP = "20261129083015"
"""The fictional time of every snapshot: 2026-11-29 08:30:15 UTC."""
MEMENTO = "Sun, 29 Nov 2026 08:30:15 GMT"
SUBMITID = "fictional-submitid-7f3a"


@dataclass
class Request:
    method: str
    path: str
    form: dict[str, str]
    authorization: str | None


@dataclass
class PublicArchive:
    """One stand-in service: what it was asked, what it answers."""

    kind: Kind
    script: dict[str, list[str]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    jobs: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    """job id → (submitted URL, its scripted answer, polls so far)."""
    base: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def submissions(self, suffix: str = "") -> list[Request]:
        """The submissions of URLs ending with `suffix`."""
        with self.lock:
            return [
                r for r in self.requests
                if r.method == "POST" and r.form.get("url", "").endswith(suffix)
            ]  # fmt: skip

    def next_answer(self, url: str) -> str:
        for suffix, answers in self.script.items():
            if url.endswith(suffix):
                return answers.pop(0) if len(answers) > 1 else answers[0]
        return "ok"

    def answer(self, h: BaseHTTPRequestHandler, method: str) -> Answered:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length).decode() if length else ""
        form = {k: v[0] for k, v in parse_qs(raw).items()}
        with self.lock:
            self.requests.append(Request(method, h.path, form, h.headers.get("Authorization")))
            if self.kind == "wayback":
                return self.wayback(method, h.path, form)
            return self.archive_today(method, h.path, form)

    def wayback(self, method: str, path: str, form: dict[str, str]) -> Answered:
        js = {"Content-Type": "application/json"}
        if method == "POST" and path == "/save":
            url = form.get("url", "")
            what = self.next_answer(url)
            if what == "429":
                return 429, {"Retry-After": "1", **js}, b'{"message": "slow down"}'
            if what == "daily":
                body = {
                    "status": "error",
                    "status_ext": "error:too-many-daily-captures",
                    "message": "This URL has been already captured 10 times today.",
                }
                return 200, js, json.dumps(body).encode()
            job = f"spn2-{len(self.jobs) + 1:04d}fictional"
            self.jobs[job] = (url, what, 0)
            return 200, js, json.dumps({"url": url, "job_id": job}).encode()
        if method == "GET" and path.startswith("/save/status/"):
            job = path.removeprefix("/save/status/")
            if job not in self.jobs:
                return 404, js, b'{"status": "error", "status_ext": "error:not-found"}'
            url, what, polls = self.jobs[job]
            self.jobs[job] = (url, what, polls + 1)
            if polls == 0:
                return 200, js, json.dumps({"status": "pending", "job_id": job}).encode()
            if what == "blocked":
                body = {
                    "status": "error",
                    "status_ext": "error:blocked-url",
                    "job_id": job,
                    "message": "This URL is in the Save Page Now service block list.",
                }
                return 200, js, json.dumps(body).encode()
            body = {"status": "success", "job_id": job, "timestamp": STAMP, "original_url": url}
            return 200, js, json.dumps(body).encode()
        return 404, js, b"{}"

    def archive_today(self, method: str, path: str, form: dict[str, str]) -> Answered:
        html = {"Content-Type": "text/html"}
        if method == "GET" and path == "/":
            page = (
                '<form action="/submit/" method="post">'
                f'<input type="hidden" name="submitid" value="{SUBMITID}"></form>'
            )
            return 200, html, page.encode()
        if method == "POST" and path == "/submit/":
            url = form.get("url", "")
            what = self.next_answer(url)
            if form.get("submitid") != SUBMITID:
                return 400, html, b"no submitid"
            if what == "429":
                return 429, {"Retry-After": "1", **html}, b"Too Many Requests"
            if what == "daily":
                return 429, html, b"Too Many Requests"
            if what == "blocked":
                return 200, html, b"<p>Error: the page could not be archived.</p>"
            snap = f"F{len(self.jobs) + 1:04d}x"
            self.jobs[snap] = (url, what, 0)
            return 200, {"Refresh": f"0;url={self.base}/wip/{snap}", **html}, b"<p>in progress</p>"
        if method == "GET" and path.startswith("/wip/"):
            snap = path.removeprefix("/wip/")
            url, what, polls = self.jobs[snap]
            self.jobs[snap] = (url, what, polls + 1)
            if polls == 0:
                return 200, html, b"<p>capturing</p>"
            return 302, {"Location": f"{self.base}/{snap}", "Memento-Datetime": MEMENTO}, b""
        return 404, html, b"not found"


@contextmanager
def public_archive(kind: Kind, host: str = "127.0.0.1") -> Iterator[PublicArchive]:
    """A running stand-in of `kind`."""
    service = PublicArchive(kind)

    class Handler(BaseHTTPRequestHandler):
        def reply(self, method: str) -> None:
            status, headers, body = service.answer(self, method)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self.reply("GET")

        def do_POST(self) -> None:
            self.reply("POST")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    service.base = f"http://{host}:{server.server_address[1]}"
    thread = serving_thread(server)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
