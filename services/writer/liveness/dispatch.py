"""The liveness schedule (`liveness_schedule`, written here only): which link is checked when,
and the dispatch of due checks as `LivenessCheck` jobs on `job.check`.

A link is watched from its first archive (`watch`); its checks fall at the ages of
LIVENESS_SCHEDULE (`schedule.next_due`), sooner while a `gone` awaits confirmation or after
answers that could not tell (`schedule.next_check`). A dispatch is recorded before it is
published, as for capture jobs: the row takes check number `seq + 1`, state 1 (dispatched)
and `due` = its deadline; state 2 once JetStream stored it. A row dispatched but not
published (a crash, NATS away) is published again with the same number, so the same
`Nats-Msg-Id`; a check whose result never came is dispatched again at its deadline as the
next number; a result only moves the row on when it is the result of the check out (`seq`).
So a restart loses no check and fires none twice.

Limits: LIVENESS_CONCURRENCY checks in flight, PER_DOMAIN_CONCURRENCY per registrable domain,
LIVENESS_HOST_CHECKS_PER_HOUR per domain (`budget.py`), nothing to a domain backing off
after a rate-limit answer (`scheduler.backed_off`). A due link its domain cannot take now is
moved on (to when its budget frees, spread over the following hour by the link's own jitter;
or a little later when the domain is busy), so one domain with a hundred thousand overdue
links never holds up the others: checks due at once after a long outage leave in order,
spread out, within the limits.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta

from services.writer.clock import iso
from services.writer.db import transaction
from services.writer.liveness.budget import HOUR, HostBudget
from services.writer.liveness.rules import LivenessRules
from services.writer.liveness.schedule import next_check, next_due
from services.writer.liveness.verdict import LivenessVerdict
from services.writer.scheduler import backed_off
from shared.links.domains import registrable_domain
from shared.links.urlparts import supported_scheme
from shared.liveness.compare import post_digest
from shared.messages import LivenessCheck

log = logging.getLogger(__name__)

IDLE, DISPATCHED, PUBLISHED = 0, 1, 2
BUSY_DEFER = timedelta(seconds=30)
"""A due check of a domain with PER_DOMAIN_CONCURRENCY checks out waits this long."""
SCAN = 4
"""Due rows read per free slot in one run (the rest wait for the next run)."""
DUE = (
    "SELECT s.link_id, l.domain, l.canonical_url, l.taken_down_at FROM liveness_schedule s"
    " JOIN links l ON l.id = s.link_id WHERE s.due <= ?"
    " AND s.link_id NOT IN (SELECT link_id FROM takedown_holds)"
    " ORDER BY s.due LIMIT ?"
)
"""The due checks, soonest first: a range of the `due` index (the benchmark's query). A link
taken down whose undo window is open keeps its schedule untouched (an undo resumes it)."""


def epoch(t: datetime) -> int:
    """A time as stored: whole Unix seconds."""
    return int(t.timestamp())


def epoch_due(t: datetime) -> int:
    """A due time as stored: the whole second at or after it (never before the age it is
    the time of, so the check made then counts as that age's)."""
    return math.ceil(t.timestamp())


def at(seconds: int) -> datetime:
    """A stored time back as an aware datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def _spread(link_id: int) -> int:
    """A fixed offset within an hour for a link (Knuth's multiplicative hash)."""
    return (link_id * 2654435761) % 2**32 % int(HOUR)


def watch(conn: sqlite3.Connection, link_id: int, rules: LivenessRules, now: datetime) -> None:
    """A capture of the link succeeded: watch it from now, unless it is watched already."""
    due = next_due(rules.ages, now, None, link_id)
    conn.execute(
        "INSERT INTO liveness_schedule (link_id, base, due) VALUES (?, ?, ?)"
        " ON CONFLICT (link_id) DO NOTHING",
        (link_id, epoch(now), epoch_due(due)),
    )


def ask_now(conn: sqlite3.Connection, link_id: int, now: datetime) -> None:
    """Check the link at the next run (`dla check`), unless a check of it is out already."""
    t = epoch(now)
    conn.execute(
        "INSERT INTO liveness_schedule (link_id, base, due) VALUES (?, ?, ?)"
        " ON CONFLICT (link_id) DO UPDATE SET due = min(due, excluded.due) WHERE state = 0",
        (link_id, t, t),
    )


def after_check(
    conn: sqlite3.Connection,
    link_id: int,
    seq: int,
    rules: LivenessRules,
    found: LivenessVerdict,
    unknowns_in_a_row: int,
) -> datetime | None:
    """The result of check `seq` came: schedule the next check (None when `seq` is not the
    check out: a late result of a check dispatched again is an observation, nothing more)."""
    row = conn.execute(
        "SELECT base FROM liveness_schedule WHERE link_id = ? AND seq = ? AND state > 0",
        (link_id, seq),
    ).fetchone()
    if row is None or found.last_checked_at is None:
        return None
    due = next_check(
        rules.ages,
        at(int(row[0])),
        found.last_checked_at,
        link_id,
        confirming_until=found.confirming_until,
        unknowns_in_a_row=unknowns_in_a_row,
    )
    conn.execute(
        "UPDATE liveness_schedule SET state = 0, due = ? WHERE link_id = ? AND seq = ?",
        (epoch_due(due), link_id, seq),
    )
    return due


def plan(
    conn: sqlite3.Connection, rules: LivenessRules, budget: HostBudget, now: datetime
) -> list[LivenessCheck]:
    """Record this run's dispatches (when LIVENESS_ENABLED) and return every check still to
    be published."""
    with transaction(conn):
        if rules.enabled:
            _dispatch_due(conn, rules, budget, now)
        rows = conn.execute(
            "SELECT s.link_id, s.seq, s.due, l.canonical_url FROM liveness_schedule s"
            " JOIN links l ON l.id = s.link_id WHERE s.state = ? AND s.state > 0"
            " ORDER BY +s.due",  # the few checks out, by the partial index, then sorted: the
            # due index would walk every watched link to save that sort (1.1 s at 1,000,000)
            (DISPATCHED,),
        ).fetchall()
        return [_message(conn, r[0], r[1], r[2], r[3]) for r in rows]


def mark_published(conn: sqlite3.Connection, checks: list[LivenessCheck]) -> None:
    """Remember that JetStream stored these checks."""
    if not checks:
        return
    with transaction(conn):
        conn.executemany(
            "UPDATE liveness_schedule SET state = ? WHERE link_id = ? AND seq = ? AND state = ?",
            [(PUBLISHED, c.link_id, c.seq, DISPATCHED) for c in checks],
        )


def _dispatch_due(
    conn: sqlite3.Connection, rules: LivenessRules, budget: HostBudget, now: datetime
) -> None:
    t = epoch(now)
    out = conn.execute(
        "SELECT l.domain, count(*) FROM liveness_schedule s JOIN links l ON l.id = s.link_id"
        " WHERE s.state > 0 AND s.due > ? GROUP BY l.domain",
        (t,),
    ).fetchall()
    per_site: Counter[str] = Counter()
    for domain, n in out:
        per_site[registrable_domain(domain)] += n
    free = rules.concurrency - sum(n for _, n in out)
    if free <= 0:
        return
    backing_off = backed_off(conn, iso(now))
    due = conn.execute(DUE, (t, free * SCAN + 16)).fetchall()
    for link_id, domain, url, taken_down in due:
        if free <= 0:
            break
        if taken_down or not supported_scheme(url):
            forget(conn, link_id)
            continue
        site = registrable_domain(domain)
        if site in backing_off or per_site[site] >= rules.per_domain:
            _move_on(conn, link_id, t + int(BUSY_DEFER.total_seconds()))
            continue
        if not budget.allows(site, t):
            _move_on(conn, link_id, int(budget.free_at(site, t)) + _spread(link_id))
            continue
        conn.execute(
            "UPDATE liveness_schedule SET seq = seq + 1, state = ?, due = ? WHERE link_id = ?",
            (DISPATCHED, t + int(rules.deadline.total_seconds()), link_id),
        )
        budget.take(site, t)
        per_site[site] += 1
        free -= 1


def _move_on(conn: sqlite3.Connection, link_id: int, due: int) -> None:
    """A due link whose domain cannot take a check now: due later (a check out that is past
    its deadline keeps its number; it is dispatched again as the next one then)."""
    conn.execute("UPDATE liveness_schedule SET due = ? WHERE link_id = ?", (due, link_id))


def _message(
    conn: sqlite3.Connection, link_id: int, seq: int, deadline: int, url: str
) -> LivenessCheck:
    """The check job: the link and what its newest capture kept to compare with."""
    raw = conn.execute(
        "SELECT snapshot_id, s3_key, sha256 FROM archive_artifacts WHERE link_id = ?"
        " AND kind = 'raw_response' ORDER BY id DESC LIMIT 1",
        (link_id,),
    ).fetchone()
    headers = None
    if raw is not None:
        found = conn.execute(
            "SELECT s3_key FROM archive_artifacts WHERE snapshot_id = ? AND kind = 'headers'"
            " ORDER BY id DESC LIMIT 1",
            (raw[0],),
        ).fetchone()
        headers = found[0] if found else None
    post = conn.execute("SELECT post_json FROM link_posts WHERE link_id = ?", (link_id,))
    stored = post.fetchone()
    digest = None
    if stored is not None:
        kept = json.loads(stored[0])
        digest = post_digest(kept.get("title"), kept.get("text"))
    return LivenessCheck(
        link_id=link_id,
        seq=seq,
        url=url,
        snapshot_id=raw[0] if raw else None,
        headers_key=headers,
        raw_key=raw[1] if raw else None,
        raw_sha256=raw[2] if raw else None,
        post_sha256=digest,
        deadline=at(deadline),
    )


def forget(conn: sqlite3.Connection, link_id: int) -> None:
    """Stop watching the link (taken down, or it can never be checked)."""
    conn.execute("DELETE FROM liveness_schedule WHERE link_id = ?", (link_id,))


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: the survivor keeps its own schedule (or takes
    the loser's, when it had none)."""
    conn.execute(
        "UPDATE OR IGNORE liveness_schedule SET link_id = ? WHERE link_id = ?", (survivor, loser)
    )
    forget(conn, loser)
