"""Submissions to the public archives end to end: the whole stack (the real writer, archiver
and web processes, NATS, SeaweedFS) with WAYBACK_SUBMIT and ARCHIVE_TODAY_SUBMIT on, against
stand-ins of SPN2 and archive.today (testkit/public_archives.py). Three pages: one each
service archives after one pending poll; one each answers 429 (Retry-After: 1) and later
archives; one each refuses. The link JSON and page show the snapshot URL and time, or the
service's words; every link stays archived; the SPN2 keys are sent to SPN2 only: no file of
the data directory (the database, the logs, the stored objects) holds them. With both
settings off, an archived link is submitted nowhere."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from testkit.httpserver import FixtureServer, Reply
from testkit.public_archives import Kind, PublicArchive, public_archive
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration

ACCESS, SECRET = "e2e-fictional-access-51b7", "e2e-fictional-secret-c09e"
PAGES = ("ok", "limited", "refused")


@contextmanager
def scripted(kind: Kind) -> Iterator[PublicArchive]:
    """A stand-in that answers 429 to limited.html's first submission, refuses refused.html
    and archives the rest after one pending poll."""
    with public_archive(kind) as service:
        service.script["/limited.html"] = ["429", "ok"]
        service.script["/refused.html"] = ["blocked"]
        yield service


@pytest.fixture
def spn2() -> Iterator[PublicArchive]:
    with scripted("wayback") as s:
        yield s


@pytest.fixture
def archive_today() -> Iterator[PublicArchive]:
    with scripted("archive_today") as s:
        yield s


@pytest.fixture
def extra_env(spn2: PublicArchive, archive_today: PublicArchive) -> dict[str, str]:
    """Both submissions on, to the stand-ins (off, the default, is checked by test_spine)."""
    return {
        "WAYBACK_SUBMIT": "true", "ARCHIVE_TODAY_SUBMIT": "true",
        "WAYBACK_ACCESS_KEY": ACCESS, "WAYBACK_SECRET_KEY": SECRET,
        "WAYBACK_URL": spn2.base, "ARCHIVE_TODAY_URL": archive_today.base,
        "EXTERNAL_ARCHIVE_POLL_SECONDS": "0.2", "EXTERNAL_ARCHIVE_RETRY_SECONDS": "2",
        "EXTERNAL_ARCHIVE_TIMEOUT_SECONDS": "5",
    }  # fmt: skip


def link_json(running: Running, link_id: int) -> dict[str, Any]:
    data: dict[str, Any] = running.http.get(f"{running.web}/links/{link_id}.json", timeout=5).json()
    return data


def settled(running: Running, link_id: int) -> dict[str, dict[str, Any]] | None:
    """Each service's submission of the link once none is pending."""
    subs = {x["service"]: x for x in link_json(running, link_id)["external_archives"]}
    if set(subs) != {"wayback", "archive_today"}:
        return None
    return None if any(x["status"] == "pending" for x in subs.values()) else subs


def test_links_are_submitted_and_their_public_snapshots_shown(
    forum: Forum, outside_web: FixtureServer, running: Running, spn2: PublicArchive,
    archive_today: PublicArchive,
) -> None:  # fmt: skip
    for name in PAGES:
        outside_web.routes[f"/{name}.html"] = Reply(
            f"<!doctype html><title>{name}</title><p>The {name} page.</p>".encode()
        )
    forum.add(401, " ".join(f'<a href="{outside_web.base}/{n}.html">{n}</a>' for n in PAGES))
    ids: dict[str, int] = {}
    for n in PAGES:
        link = running.wait_for(partial(running.archived, f"/{n}.html"), 120, f"{n} archived")
        ids[n] = link["id"]
    subs = {
        n: running.wait_for(partial(settled, running, i), 60, f"{n} submissions settled")
        for n, i in ids.items()
    }

    for n in ("ok", "limited"):
        original = f"{outside_web.base}/{n}.html"
        wb, at = subs[n]["wayback"], subs[n]["archive_today"]
        assert wb["status"] == "archived", wb
        assert wb["url"] == f"{spn2.base}/web/20261129083015/{original}"
        assert wb["captured_at"].startswith("2026-11-29T08:30:15")
        assert at["status"] == "archived", at
        assert at["url"].startswith(f"{archive_today.base}/F")
        assert at["captured_at"].startswith("2026-11-29T08:30:15")
        page = running.http.get(f"{running.web}/links/{ids[n]}", timeout=5).text
        assert f'href="{wb["url"]}"' in page and f'href="{at["url"]}"' in page
        assert "Snapshot in the Wayback Machine" in page
        assert "Snapshot in archive.today" in page
    # the first submission of limited.html got 429 (Retry-After: 1): asked again later, archived
    assert len(spn2.submissions("/limited.html")) >= 2
    assert len(archive_today.submissions("/limited.html")) >= 2

    wb, at = subs["refused"]["wayback"], subs["refused"]["archive_today"]
    assert (wb["status"], wb["url"]) == ("failed", None)
    words = "the Wayback Machine said: This URL is in the Save Page Now service block list."
    assert wb["last_error"] == words
    assert (at["status"], at["last_error"]) == (
        "failed", "archive.today gave no snapshot (HTTP 200)"
    )  # fmt: skip
    refused = link_json(running, ids["refused"])
    assert refused["status"] == "archived", "a refusal never touches our own capture"
    page = running.http.get(f"{running.web}/links/{ids['refused']}", timeout=5).text
    assert "This URL is in the Save Page Now service block list." in page
    assert "not in the Wayback Machine" in page and "not in archive.today" in page

    # the keys went to SPN2, in its header, and nowhere else
    assert {r.authorization for r in spn2.requests} == {f"LOW {ACCESS}:{SECRET}"}
    assert {r.authorization for r in archive_today.requests} == {None}
    leaks = [p for p in files(running.stack.data_dir) if holds(p, ACCESS, SECRET)]
    assert leaks == []
    assert (running.stack.data_dir / "archive.sqlite3").is_file()
    assert any((running.stack.data_dir / "logs").glob("*.log"))


def files(root: Path) -> Iterator[Path]:
    return (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def holds(path: Path, *secrets: str) -> bool:
    """Whether the file's bytes hold any of the secrets (read in overlapping chunks)."""
    needles = [s.encode() for s in secrets]
    tail = b""
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            data = tail + chunk
            if any(n in data for n in needles):
                return True
            tail = data[-64:]
    return False
