"""An archive whose originals were checked again, built through the writer's real apply path
(time given by the harness), for the web's tests of source statuses, badges, comparisons,
older captures in search and /gone.xml.

Links (ids in order of creation):
  1 a news page captured twice: its text edited between (May -> June), a check saw the
    change; two screenshots, two texts
  2 a page that answered 404 for four days: gone (deleted at source)
  3 a Reddit thread its moderators removed: gone by the platform's tombstone
  4 a post on X whose account was suspended (fictional account)
  5 a page answering 429 for a day: could not tell
  6 a page never checked
  7 a page whose capture failed for good (its name does not exist): never watched
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from services.writer.db import open_db
from services.writer.liveness.rules import LivenessRules
from services.writer.liveness.schedule import parse_schedule
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, HookRecord, TextRecord
from shared.messages import CheckCommand, LivenessCheck
from testkit.writer_harness import T0, Harness, done, event, occ, post
from tests.web.archive import page_png

NEWS = "https://news.example/2026/bridge"
MISSING = "https://blog.example/old-post"
REDDIT = "https://old.reddit.com/r/example/comments/abc123/a_title/"
X_POST = "https://x.com/ada_example/status/1790000000000000020"
BUSY = "https://busy.example/page"
NEW = "https://quiet.example/never-checked"
NO_HOST = "https://no-such-host.example/page"
OLD_TEXT = "The mayor said the new bridge will open in May.\n\nTraffic will be diverted."
NEW_TEXT = "The mayor said the new bridge will open in June.\n\nTraffic will be diverted."
SHOTS = [page_png(640, 400, (200, 60, 60)), page_png(640, 400, (60, 90, 200))]
H = timedelta(hours=1)
D = timedelta(days=1)


@dataclass(frozen=True)
class Stored:
    """An artifact's bytes, for the tests that put them in a real bucket."""

    s3_key: str
    data: bytes
    content_type: str


STORED: list[Stored] = []


def _art(link: int, snap: str, plugin: str, kind: str, path: str, data: bytes,
         ctype: str) -> ArtifactRecord:  # fmt: skip
    key = f"archives/{link}/{snap}/{plugin}/{path}"
    STORED.append(Stored(key, data, ctype))
    return ArtifactRecord(plugin=plugin, kind=kind, path=path, s3_key=key, content_type=ctype,
                          bytes=len(data), sha256=hashlib.sha256(data).hexdigest())  # fmt: skip


def capture(h: Harness, link: int, text: str | None, shot: bytes | None) -> str:
    """One capture of the link (its queued job dispatched and ended): its snapshot id."""
    h.dispatch()
    (row,) = h.rows("SELECT * FROM archive_jobs WHERE link_id = ? AND status = 'running'", link)
    snap = str(row["snapshot_id"])
    records: list[HookRecord] = []
    if shot is not None:
        records.append(_art(link, snap, "screenshot", "screenshot", "screenshot.png", shot,
                            "image/png"))  # fmt: skip
    if text is not None:
        records.append(TextRecord(text=text))
        records.append(_art(link, snap, "readable", "text", "text.txt", text.encode(),
                            "text/plain"))  # fmt: skip
    records.append(ArchiveResultRecord(status="succeeded", plugin="fetch",
                                       hook="on_Snapshot__41_fetch.py"))  # fmt: skip
    h.apply(*(event(row, n, r) for n, r in enumerate(records)), done(row, records=len(records)))
    return snap


class Checks:
    """Checks asked for now and answered (others dispatched meanwhile wait their turn)."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.out: dict[int, LivenessCheck] = {}

    def __call__(self, link: int, answer: str, **fields: Any) -> None:
        h = self.h
        h.apply(CheckCommand(link_id=link, request_id=uuid.uuid4().hex, requested_at=h.now))
        self.out |= {c.link_id: c for c in h.checks()}
        h.apply(h.answer(self.out.pop(link), answer, **fields))


def build(path: Path) -> Harness:
    """The archive (its clock ends at T0 + 5 days)."""
    STORED.clear()
    h = Harness(open_db(path))
    # checks happen when asked only (the schedule's first age is far off)
    h.policy = replace(h.policy, liveness=LivenessRules(ages=parse_schedule("300d")))
    h.apply(post("p1", *(occ(u) for u in (NEWS, MISSING, REDDIT, X_POST, BUSY, NEW))))
    for link in range(1, 7):
        capture(h, link, OLD_TEXT if link == 1 else f"Words of link {link}.", SHOTS[0])
    check = Checks(h)
    h.now = T0 + 2 * H
    check(1, "present", status=200, changed=True)
    capture(h, 1, NEW_TEXT, SHOTS[1])
    for at in (2 * H, D, 4 * D):
        h.now = T0 + at
        check(2, "gone", status=404, reason="not_found")
    removed = {"tombstone": True, "reason": "removed", "words": "removed (moderator)",
               "via": "reddit:thread-json", "status": 200}  # fmt: skip
    suspended = {"tombstone": True, "reason": "suspended", "words": "Suspended",
                 "via": "x:syndication", "status": 200}  # fmt: skip
    for at in (D, D + 2 * H):
        h.now = T0 + at
        check(3, "gone", **removed)
        check(4, "gone", **suspended)
    for at in (4 * D, 4 * D + H, 4 * D + 3 * H):
        h.now = T0 + at
        check(5, "unknown", status=429, reason="rate_limited", words="slow down")
    h.apply(post("p2", occ(NO_HOST)))
    h.dispatch()
    (row,) = h.rows("SELECT * FROM archive_jobs WHERE link_id = 7 AND status = 'running'")
    failed = ArchiveResultRecord(status="failed", plugin="fetch", hook="on_Snapshot__41_fetch.py",
                                 error_code="E_FETCH_NO_HOST")  # fmt: skip
    h.apply(event(row, 0, failed), done(row, records=1))
    h.now = T0 + 5 * D
    return h
