"""Every attempt that ends leaves on its link what it did and what happens next (issue 16):
never a bare `pending` after an attempt; partial captures say so; retries carry retry_at."""

from __future__ import annotations

from typing import Any

from services.writer.clock import iso
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.hooks.retry import BACKOFF
from testkit.writer_harness import Harness, done, event, occ, post

URL = "https://example.org/article"
FETCH = "on_Snapshot__41_fetch.py"
META = "on_Snapshot__81_metadata.py"


def start(h: Harness) -> Any:
    h.apply(post("g1", occ(URL)))
    h.dispatch()
    return h.job(1)


def res(hook: str, status: str, code: str | None = None, out: str = "") -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(
        status=status, plugin=plugin, hook=hook, error_code=code, output_str=out
    )  # type: ignore[arg-type]


def link(h: Harness) -> Any:
    return h.rows("SELECT * FROM links")[0]


def assert_failed_for_good(h: Harness, code: str) -> None:
    """The link failed with `code`, no retry is scheduled, and the job is over."""
    row = link(h)
    assert (row["status"], row["last_error_code"], row["retry_at"]) == ("failed", code, None)
    assert h.job(1)["status"] == "failed"


def test_stalled_fetch_leaves_failed_with_code_and_retry_at(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res(FETCH, "failed", "E_FETCH_STALLED", "no byte for 15s")),
        event(job, 1, res(META, "skipped", "E_METADATA_DEPENDENCY")),
        done(job, records=2, retry=[FETCH]),
    )
    row = link(h)
    assert row["status"] == "failed", "never a bare pending after an attempt ended"
    assert (row["last_outcome"], row["last_error_code"]) == ("failed", "E_FETCH_STALLED")
    assert "no byte for 15s" in row["last_error"]
    assert row["retry_at"] == iso(h.now + BACKOFF[0]) and row["last_attempt_at"] == iso(h.now)
    assert h.one("SELECT outcome FROM snapshots") == "failed"
    h.now += BACKOFF[0]
    h.dispatch()
    assert link(h)["status"] == "failed", "still failed (with its retry_at) while retrying"
    again = h.job(1)
    h.apply(event(again, 0, res(FETCH, "succeeded")), event(again, 1, res(META, "succeeded")))
    h.apply(done(again, records=2))
    row = link(h)
    assert (row["status"], row["last_outcome"], row["retry_at"]) == ("archived", "succeeded", None)
    assert row["last_error_code"] is None


def test_capped_body_is_partial_with_its_reason(h: Harness) -> None:
    job = start(h)
    art = ArtifactRecord(
        plugin="fetch", kind="raw_response", path="body.html", s3_key="k/body.html",
        content_type="text/html", bytes=100, sha256="0" * 64, truncated=True,
    )  # fmt: skip
    h.apply(
        event(job, 0, res(FETCH, "partial", "E_FETCH_TOO_LARGE", "first 104857600 bytes kept")),
        event(job, 1, art),
        event(job, 2, res(META, "succeeded")),
        done(job, records=3),
    )
    row = link(h)
    assert (row["status"], row["last_outcome"]) == ("partial", "partial")
    assert row["last_error_code"] == "E_FETCH_TOO_LARGE" and row["retry_at"] is None
    assert h.one("SELECT outcome FROM snapshots") == "partial"
    assert h.one("SELECT truncated FROM archive_artifacts") == 1
    assert h.job(1)["status"] == "succeeded"


def test_not_html_is_a_final_failure_with_its_code(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res(FETCH, "failed", "E_FETCH_NOT_HTML", "application/zip, 5 bytes")),
        done(job, records=1),
    )
    assert_failed_for_good(h, "E_FETCH_NOT_HTML")


def test_a_failed_recapture_keeps_an_archived_link_archived_but_says_so(h: Harness) -> None:
    job = start(h)
    h.apply(event(job, 0, res(FETCH, "succeeded")), done(job, records=1))
    assert link(h)["status"] == "archived"
    h.now += BACKOFF[-1]
    h.apply(post("g2", occ(URL)))
    h.dispatch()
    again = h.job(2)
    h.apply(event(again, 0, res(FETCH, "failed", "E_FETCH_HTTP_5XX")), done(again, records=1))
    row = link(h)
    assert (row["status"], row["last_outcome"], row["last_error_code"]) == (
        "archived",
        "failed",
        "E_FETCH_HTTP_5XX",
    )


def test_the_link_shows_the_telling_error_not_the_browsers_timeout(h: Harness) -> None:
    """A dripping server: the browser's navigate times out first (step 2), the fetch (step 6)
    names the stall; the reader sees `stalled`, and the navigate row keeps its own code."""
    nav = "on_Snapshot__21_navigate.py"
    job = start(h)
    h.apply(
        event(job, 0, res(nav, "failed", "E_NAVIGATE_TIMEOUT", "Timeout 30000ms exceeded")),
        event(job, 1, res(FETCH, "failed", "E_FETCH_STALLED", "no byte for 15s")),
        event(job, 2, res(META, "skipped", "E_METADATA_DEPENDENCY")),
        done(job, records=3, retry=[nav, FETCH]),
    )
    row = link(h)
    assert (row["last_outcome"], row["last_error_code"]) == ("failed", "E_FETCH_STALLED")
    assert row["last_error"].startswith(FETCH)
    codes = h.tuples("SELECT hook, error_code FROM archive_results ORDER BY id")
    assert (nav, "E_NAVIGATE_TIMEOUT") in codes


def test_a_final_telling_error_is_not_retried_for_the_browsers_timeout(h: Harness) -> None:
    """A zip served as text/html: the fetch says not_html (not retried), the browser times
    out on it (retryable): the reader sees not_html and no retry is scheduled."""
    nav = "on_Snapshot__21_navigate.py"
    job = start(h)
    h.apply(
        event(job, 0, res(nav, "failed", "E_NAVIGATE_TIMEOUT", "Timeout 30000ms exceeded")),
        event(job, 1, res(FETCH, "failed", "E_FETCH_NOT_HTML", "application/zip, 64 MB")),
        done(job, records=2, retry=[nav]),
    )
    assert_failed_for_good(h, "E_FETCH_NOT_HTML")


def test_a_vague_error_alone_is_still_shown(h: Harness) -> None:
    nav = "on_Snapshot__21_navigate.py"
    job = start(h)
    h.apply(
        event(job, 0, res(nav, "failed", "E_NAVIGATE_TIMEOUT", "Timeout")),
        event(job, 1, res(FETCH, "succeeded")),
        done(job, records=2, retry=[nav]),
    )
    row = link(h)
    assert (row["status"], row["last_error_code"]) == ("partial", "E_NAVIGATE_TIMEOUT")
