"""Redirect-aware dedup: links with the same final canonical URL become one, with aliases."""

from __future__ import annotations

from services.writer import linkstore
from shared.hooks.records import (
    ArtifactRecord,
    MetadataRecord,
    SnapshotRecord,
    TagRecord,
    TextRecord,
)
from shared.messages import RearchiveCommand
from testkit.writer_harness import T0, Harness, done, event, occ, post

SHORT = "https://redd.it/abc"
LONG = "https://old.reddit.com/r/x/comments/abc/title/"
FINAL = "https://www.reddit.com/r/x/comments/abc/title/?utm_source=share"


def test_a_short_link_merges_into_the_link_its_redirect_reaches(h: Harness) -> None:
    h.apply(post("g1", occ(SHORT)))  # link 1
    h.apply(post("g2", occ(LONG, in_quote=True)))  # link 2
    h.apply(post("g3", occ(SHORT), occ(LONG)))  # both in one post
    h.dispatch()
    short_job = h.job(1)
    assert short_job["link_id"] == 1
    art = ArtifactRecord(
        plugin="fetch",
        kind="raw_response",
        path="body",
        s3_key="k/1",
        content_type="text/html",
        bytes=1,
        sha256="0" * 64,
    )
    h.apply(
        event(short_job, 0, art),
        event(short_job, 1, TagRecord(name="thread")),
        event(short_job, 2, MetadataRecord(description="from the short link")),
        event(short_job, 3, TextRecord(text="owls everywhere")),
        event(short_job, 4, SnapshotRecord(final_url=FINAL)),
    )
    assert h.tuples("SELECT id FROM links") == [(2,)]
    link = h.rows("SELECT * FROM links")[0]
    assert link["final_url"] is None and link["canonical_url"] == LONG
    assert link["first_seen_at"] == "2026-01-01T12:00:00.000000Z"
    # Everything moved to the survivor.
    assert h.tuples("SELECT DISTINCT link_id FROM archive_jobs") == [(2,)]
    assert h.tuples("SELECT DISTINCT link_id FROM snapshots") == [(2,)]
    assert h.tuples("SELECT link_id FROM archive_artifacts") == [(2,)]
    assert h.tuples("SELECT link_id, name FROM link_tags") == [(2, "thread")]
    assert h.one("SELECT description FROM link_metadata WHERE link_id = 2") == "from the short link"
    assert h.tuples("SELECT rowid FROM link_text_fts WHERE link_text_fts MATCH 'owls'") == [(2,)]
    assert h.one("SELECT count(*) FROM link_text_fts") == 1
    occurrences = h.tuples(
        "SELECT p.guid, o.link_id, o.in_quote, o.original_url FROM link_occurrences o"
        " JOIN discourse_posts p ON p.id = o.discourse_post_id ORDER BY p.guid, o.original_url"
    )
    assert occurrences == [
        ("g1", 2, 0, SHORT),
        ("g2", 2, 1, LONG),
        ("g3", 2, 0, LONG),  # the two occurrences of g3 are one now (same post, link, quote)
    ]
    # Every original resolves to the survivor: the short URL, and the merged link's id.
    assert linkstore.find_link(h.conn, SHORT, SHORT) == (2, "alias")
    assert linkstore.resolve_link_id(h.conn, 1) == 2
    assert h.one("SELECT reason FROM link_aliases WHERE url = ?", SHORT) == "merged"
    # The merged link's job still finishes, on the survivor.
    h.apply(done(h.job(1)))
    assert h.one("SELECT status FROM links") == "archived"
    # A post with the short link again finds the survivor (no new link).
    h.advance(hours=2)
    h.apply(post("g4", occ(SHORT)))
    assert h.one("SELECT count(*) FROM links") == 1
    # A re-archive request for the merged id reaches the survivor.
    h.apply(RearchiveCommand(link_id=1, request_id="r", requested_at=T0))
    assert h.jobs()[-1]["link_id"] == 2


def test_a_redirect_to_a_new_url_becomes_an_alias(h: Harness) -> None:
    h.apply(post("g1", occ(SHORT)))
    h.dispatch()
    h.apply(event(h.job(1), 0, SnapshotRecord(final_url=FINAL)))
    assert h.one("SELECT final_url FROM links") == LONG
    assert h.tuples("SELECT url, reason FROM link_aliases") == [(LONG, "redirect")]
    h.apply(post("g2", occ(LONG)))
    assert h.tuples("SELECT id FROM links") == [(1,)]
    assert h.tuples("SELECT DISTINCT link_id FROM link_occurrences") == [(1,)]


def test_a_final_url_equal_to_its_own_canonical_changes_nothing(h: Harness) -> None:
    h.apply(post("g1", occ(LONG)))
    h.dispatch()
    h.apply(event(h.job(1), 0, SnapshotRecord(final_url=LONG + "?utm_medium=x")))
    assert h.one("SELECT count(*) FROM link_aliases") == 0
    assert h.one("SELECT final_url FROM links") == LONG
