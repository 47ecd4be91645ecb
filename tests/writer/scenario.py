"""A run of every message type, in the order a real run produces them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    BinaryRecord,
    MediaRecord,
    MetadataRecord,
    PostRecord,
    ProgressRecord,
    SnapshotRecord,
    TagRecord,
    TextRecord,
)
from shared.messages import (
    CheckCommand,
    EvidenceReport,
    ExcludeCommand,
    ExternalAnswer,
    ExternalArchiveResult,
    FeedGap,
    IncludeCommand,
    LivenessCheck,
    LivenessResult,
    Message,
    RearchiveCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
    TimestampOutcome,
    TimestampResult,
)
from shared.platforms.post import Post
from testkit.writer_harness import T0, TSA, done, event, occ, post, report_ids

JobLookup = Callable[[int], dict]


def feed_messages() -> list[Message]:
    """Posts (one edited), a gap and requests: everything that arrives before any capture."""
    return [
        post("g1", occ("https://redd.it/abc"), occ("https://x.com/u/status/1", in_quote=True)),
        post(
            "g2",
            occ("https://old.reddit.com/r/x/comments/abc/t/"),
            occ("https://skipped.example/a"),
        ),
        post("g1", occ("https://redd.it/abc"), content="edited"),
        FeedGap(
            feed_url="https://forum.test/posts.rss", detected_at=T0, backfilled_posts=2, closed=True
        ),
        SubmitCommand(
            url="https://www.tiktok.com/@a/video/1?utm_source=x", request_id="s1", requested_at=T0
        ),
        SubmitCommand(url="javascript:void(0)", request_id="s2", requested_at=T0),
        RearchiveCommand(link_id=2, request_id="r1", requested_at=T0),
    ]


def capture_messages(job: dict) -> list[Message]:
    """Every record type for one running job, then its end."""
    hook = "on_Snapshot__41_fetch.py"
    return [
        event(job, 0, ArchiveResultRecord(status="started", plugin="fetch", hook=hook)),
        event(
            job,
            1,
            ArtifactRecord(
                plugin="fetch",
                kind="raw_response",
                path="body",
                s3_key=f"archives/{job['link_id']}/{job['snapshot_id']}/body",
                content_type="text/html",
                bytes=5,
                sha256="1" * 64,
            ),
        ),
        event(job, 2, MetadataRecord(title="Owls", description="About owls", language="en")),
        event(job, 3, TextRecord(text="Barn owls hunt at dusk.")),
        event(job, 4, TagRecord(name="birds")),
        event(job, 5, BinaryRecord(name="curl", abspath="/usr/bin/curl", version="8")),
        event(
            job,
            6,
            SnapshotRecord(title="Owls!", final_url="https://www.reddit.com/r/x/comments/abc/t/"),
        ),
        event(job, 7, ProgressRecord(downloaded_bytes=10, total_bytes=20, percent=50.0)),
        event(
            job,
            8,
            MediaRecord(
                platform="reddit", video_id="abc", title="Owl video", transcript="hoot hoot"
            ),
        ),
        event(
            job,
            9,
            ArchiveResultRecord(
                status="failed",
                plugin="media",
                hook="on_Snapshot__63_media.bg.py",
                error_code="E_MEDIA_RATE_LIMITED",
            ),
        ),
        event(
            job,
            10,
            ArchiveResultRecord(
                status="succeeded", plugin="fetch", hook=hook, output_str="HTTP 200", exit_code=0
            ),
        ),
        event(
            job,
            11,
            PostRecord(
                plugin="reddit",
                post=Post(
                    platform="reddit",
                    post_id="abc",
                    url="https://www.reddit.com/r/o/comments/abc/",
                    title="Owls",
                    text="Barn owls",
                    source="thread-json",
                ),
            ),
        ),
        event(
            job,
            12,
            ArtifactRecord(
                plugin="readable",
                kind="text",
                path="text.txt",
                s3_key=f"archives/{job['link_id']}/{job['snapshot_id']}/readable/text.txt",
                content_type="text/plain",
                bytes=23,
                sha256="2" * 64,
            ),
        ),
        done(job, records=13),
    ]


def evidence_messages(job: dict) -> list[Message]:
    """The capture's manifest is stored, then an authority grants its timestamp."""
    prefix = f"archives/{job['link_id']}/{job['snapshot_id']}/evidence"
    fp = "a" * 64

    def stored(path: str, kind: str) -> ArtifactRecord:
        key = f"{prefix}/{path}"
        return ArtifactRecord(plugin="evidence", kind=kind, path=path, s3_key=key,
                              content_type="text/plain", bytes=3, sha256="b" * 64)  # fmt: skip

    return [
        EvidenceReport(
            **report_ids(job, None, 1),
            manifest_key=f"{prefix}/manifest.json",
            fingerprint=fp,
            wacz_key=f"{prefix}/capture.wacz",
            verdict="verified",
            detail="3 checks passed",
            checked_at=T0,
        ),
        TimestampResult(
            link_id=job["link_id"],
            snapshot_id=job["snapshot_id"],
            fingerprint=fp,
            round=1,
            worker="host-a:1",
            checked_at=T0,
            verdict="verified",
            detail="1 granted",
            outcomes=[
                TimestampOutcome(
                    authority=TSA,
                    granted=True,
                    time=T0,
                    token=stored("timestamps/t.tsr", "timestamp"),
                    chain=stored("timestamps/t.pem", "timestamp"),
                )
            ],
        ),
    ]


def external_messages(job: dict) -> list[Message]:
    """The captured link's public snapshot in the Wayback Machine (WAYBACK_SUBMIT on)."""
    answer = ExternalAnswer(
        outcome="archived", captured_at=T0,
        snapshot_url="https://web.archive.test/web/20260101120000/https://example.test/a",
    )  # fmt: skip
    return [
        ExternalArchiveResult(
            link_id=job["link_id"],
            service="wayback",
            round=1,
            worker="host-a:1",
            answer=answer,
            checked_at=T0,
        )
    ]


def liveness_messages(check: LivenessCheck, at: datetime) -> list[Message]:
    """A check finding the original changed (a capture follows), and one asked for now."""
    return [
        LivenessResult(
            link_id=check.link_id,
            seq=check.seq,
            checked_at=at,
            answer="present",
            status=200,
            via="http",
            reason="ok",
            changed=True,
            worker="host-a:1",
        ),
        CheckCommand(link_id=check.link_id, request_id="c1", requested_at=at),
    ]


def recapture_messages(job: dict) -> list[Message]:
    """The capture a change asked for: a new text, the old one kept as history."""
    return [event(job, 0, TextRecord(text="Barn owls now hunt at noon.")), done(job, records=1)]


def admin_messages(link_id: int) -> list[Message]:
    """An admin's decisions: take one link down, exclude a domain, lift an exclusion no admin
    made (refused: the excluded domain stays), retry failures."""
    return [
        TakedownCommand(
            link_id=link_id,
            reason="asked by author",
            admin="alice",
            request_id="t1",
            requested_at=T0,
        ),
        ExcludeCommand(
            domain="blog.example", reason="spam", admin="alice", request_id="e1", requested_at=T0
        ),
        IncludeCommand(domain="other.example", admin="alice", request_id="i1", requested_at=T0),
        RetryCommand(admin="alice", request_id="y1", requested_at=T0),
    ]
