"""FeedPost: posts, occurrences, links and one recorded decision per link (spec §3)."""

from __future__ import annotations

from dataclasses import replace

from shared.links.policy import DomainPolicy
from shared.messages import FeedGap, LinkOccurrence
from testkit.writer_harness import T0, Harness, occ, post

REDDIT = "https://www.reddit.com/r/x/comments/abc/title/?utm_source=share"
TIKTOK = "https://www.tiktok.com/@a/video/1"


def test_a_new_post_records_post_links_occurrences_and_jobs(h: Harness) -> None:
    h.apply(
        post(
            "g1",
            occ(REDDIT),
            occ(TIKTOK, in_quote=True),
            occ("https://skipped.example/a"),
        )
    )
    assert h.one("SELECT count(*) FROM discourse_posts") == 1
    links = h.rows("SELECT * FROM links ORDER BY id")
    assert [link["canonical_url"] for link in links] == [
        "https://old.reddit.com/r/x/comments/abc/title/",
        "https://www.tiktok.com/@a/video/1",
        "https://skipped.example/a",
    ]
    assert links[0]["original_url"] == REDDIT
    assert links[0]["normalized_url"] == "https://www.reddit.com/r/x/comments/abc/title/"
    assert [
        (o["link_id"], o["in_quote"]) for o in h.rows("SELECT * FROM link_occurrences ORDER BY id")
    ] == [(1, 0), (2, 1), (3, 0)]
    # A quote-only link that was never archived is archived; the policy-skipped one is not.
    assert [(j["link_id"], j["status"], j["reason"]) for j in h.jobs()] == [
        (1, "queued", "mode:all"),
        (2, "queued", "mode:all"),
        (3, "skipped_policy", "excluded:skipped.example"),
    ]
    assert [link["status"] for link in links] == ["pending", "pending", "skipped"]
    # A snapshot is made when a job is first dispatched.
    assert h.jobs()[0]["snapshot_id"] is None and h.one("SELECT count(*) FROM snapshots") == 0
    h.dispatch()
    snap = h.rows("SELECT * FROM snapshots WHERE id = ?", h.jobs()[0]["snapshot_id"])[0]
    assert (snap["link_id"], snap["job_id"], snap["status"]) == (1, 1, "queued")
    assert snap["url"] == "https://old.reddit.com/r/x/comments/abc/title/"
    assert h.one("SELECT url FROM link_text_fts WHERE link_text_fts MATCH 'reddit'") == (
        "https://old.reddit.com/r/x/comments/abc/title/"
    )


def test_unchanged_content_changes_nothing_but_last_seen(h: Harness) -> None:
    h.apply(post("g1", occ(REDDIT)))
    h.now = T0.replace(hour=15)
    h.apply(
        post("g1", occ(REDDIT), seen_at=T0.replace(hour=14)).model_copy(
            update={"content_hash": post("g1", occ(REDDIT)).content_hash}
        )
    )
    assert len(h.jobs()) == 1
    assert h.one("SELECT last_seen_at FROM discourse_posts") == "2026-01-01T12:00:00.000000Z"
    # (same guid + hash = same msg id: the redelivery is a duplicate and changes nothing)


def test_an_edit_re_records_occurrences_and_decides_again(h: Harness) -> None:
    h.apply(post("g1", occ(REDDIT), occ(TIKTOK)))
    h.advance(minutes=10)
    h.apply(post("g1", occ(REDDIT), occ("https://x.com/u/status/9"), content="edited"))
    occurrences = h.rows(
        "SELECT l.canonical_url FROM link_occurrences o JOIN links l ON l.id = o.link_id"
        " ORDER BY o.id"
    )
    assert [o[0] for o in occurrences] == [
        "https://old.reddit.com/r/x/comments/abc/title/",
        "https://x.com/u/status/9",
    ]
    assert h.one("SELECT content_html FROM discourse_posts") == "edited"
    statuses = [(j["link_id"], j["status"]) for j in h.jobs()]
    assert statuses == [(1, "queued"), (2, "queued"), (1, "skipped_cached"), (3, "queued")]
    assert h.jobs()[2]["reason"].startswith("in flight: job 1")


def _archive(h: Harness, link_id: int) -> None:
    h.conn.execute("UPDATE archive_jobs SET status = 'succeeded' WHERE link_id = ?", (link_id,))
    h.conn.execute(
        "UPDATE links SET last_archived_at = ? WHERE id = ?",
        (h.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), link_id),
    )


def test_cache_window_on_the_canonical_url(h: Harness) -> None:
    h.apply(post("g1", occ(REDDIT)))
    _archive(h, 1)
    h.advance(minutes=59)
    # Another spelling of the same canonical URL is the same link, inside the window.
    h.apply(post("g2", occ("https://reddit.com/r/x/comments/abc/title/")))
    assert h.one("SELECT count(*) FROM links") == 1
    assert h.jobs()[-1]["status"] == "skipped_cached"
    assert "window 3600s" in h.jobs()[-1]["reason"]
    assert h.one("SELECT url FROM link_aliases") == "https://reddit.com/r/x/comments/abc/title/"
    h.advance(minutes=2)
    h.apply(post("g3", occ(REDDIT)))
    assert h.jobs()[-1]["status"] == "queued"


def test_quote_only_link_archived_before_is_skipped_unless_configured(h: Harness) -> None:
    h.apply(post("g1", occ(REDDIT)))
    _archive(h, 1)
    h.advance(hours=2)
    h.apply(post("g2", occ(REDDIT, in_quote=True)))
    assert h.jobs()[-1]["status"] == "skipped_cached"
    assert h.jobs()[-1]["reason"].startswith("quote-only link")
    # The same link outside a quote in the same post makes it a non-quote link.
    h.apply(post("g3", occ(REDDIT, in_quote=True), occ(REDDIT)))
    assert h.jobs()[-1]["status"] == "queued"
    assert h.tuples(
        "SELECT in_quote FROM link_occurrences o JOIN discourse_posts p"
        " ON p.id = o.discourse_post_id WHERE p.guid = 'g3' ORDER BY o.id"
    ) == [(1,), (0,)]


def test_quote_only_links_setting(h: Harness) -> None:
    h.policy = replace(h.policy, quote_only_links=True)
    h.apply(post("g1", occ(REDDIT)))
    _archive(h, 1)
    h.advance(hours=2)
    h.apply(post("g2", occ(REDDIT, in_quote=True)))
    assert h.jobs()[-1]["status"] == "queued"


def test_feed_gap_is_recorded_once(h: Harness) -> None:
    gap = FeedGap(
        feed_url="https://forum.test/posts.rss", detected_at=T0, backfilled_posts=3, closed=True
    )
    h.apply(gap)
    h.apply(gap)
    assert h.tuples("SELECT feed_url, backfilled_posts, closed FROM feed_gaps") == [
        ("https://forum.test/posts.rss", 3, 1)
    ]


def test_the_writer_decides_with_its_own_domain_policy(h: Harness) -> None:
    """Whether a feed link is archived is the writer's decision, from its own ARCHIVE_MODE,
    DELETABLE_ALLOWLIST and EXCLUDE_DOMAINS (an older poller's own verdict in a message still
    in the stream is dropped when the message is read)."""
    legacy = occ("https://news.example/a").model_dump() | {
        "policy": "skip", "policy_reason": "not-deletable"
    }  # fmt: skip
    h.apply(post("g1", LinkOccurrence.model_validate(legacy)))
    assert [(j["status"], j["reason"]) for j in h.jobs()] == [("queued", "mode:all")]
    h.policy = replace(h.policy, domains=DomainPolicy(mode="deletable"))
    h.apply(post("g2", occ("https://news.example/b"), occ("https://x.com/u/status/1")))
    assert [(j["status"], j["reason"]) for j in h.jobs()][1:] == [
        ("skipped_policy", "not-deletable"),
        ("queued", "allowlist:x.com"),
    ]
