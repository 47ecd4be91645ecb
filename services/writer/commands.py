"""Applying people's requests: submit a URL, re-archive a link (see job_policy.py for the rules)."""

from __future__ import annotations

import logging

from services.writer import linkstore, media, scheduler, transitions
from services.writer.clock import iso
from services.writer.context import ApplyContext
from services.writer.job_policy import Decision, decide
from services.writer.linkstore import UrlForms
from shared.links.canonical import CanonicalUrl
from shared.links.domains import registrable_domain
from shared.links.submission import check_submission
from shared.messages import RearchiveCommand, SubmitCommand

log = logging.getLogger(__name__)


def _seen(ctx: ApplyContext, request_id: str) -> bool:
    """A request is decided once, even if its message comes back after its id was pruned."""
    row = ctx.conn.execute("SELECT 1 FROM submissions WHERE request_id = ?", (request_id,))
    return row.fetchone() is not None


def apply_submit(ctx: ApplyContext, cmd: SubmitCommand) -> None:
    """Canonicalize, upsert the link, record the decision (the allowlist is bypassed; the
    exclude list and the cache window are not)."""
    if _seen(ctx, cmd.request_id):
        return
    url = check_submission(cmd.url, ctx.policy.domains)
    if not isinstance(url, CanonicalUrl):
        _record(
            ctx,
            "submit",
            cmd.request_id,
            iso(cmd.requested_at),
            cmd.url[:2000],
            None,
            None,
            "rejected",
            url.reason,
        )
        return
    link_id = linkstore.upsert_link(
        ctx.conn, UrlForms.of(url), ctx.now_iso, ctx.policy.takedown_key
    )
    state = transitions.link_state(ctx.conn, link_id)
    decision = decide(state, source="submit", now=ctx.now, policy=ctx.policy)
    job_id = media.capture_decided(ctx.conn, link_id, decision, ctx.policy, ctx.now_iso, state)
    _record(
        ctx,
        "submit",
        cmd.request_id,
        iso(cmd.requested_at),
        url.canonical,
        link_id,
        job_id,
        decision.status,
        decision.reason + _site_asked_to_wait(ctx, link_id, decision),
    )


def apply_rearchive(ctx: ApplyContext, cmd: RearchiveCommand) -> None:
    """A new job now, whatever the cache window, unless one is queued or running; a queued
    one waiting for its retry time is made due now."""
    if _seen(ctx, cmd.request_id):
        return
    link_id = linkstore.resolve_link_id(ctx.conn, cmd.link_id)
    if link_id is None:
        _record(
            ctx,
            "rearchive",
            cmd.request_id,
            iso(cmd.requested_at),
            None,
            cmd.link_id,
            None,
            "rejected",
            "unknown link",
        )
        return
    state = transitions.link_state(ctx.conn, link_id)
    decision = decide(state, source="rearchive", now=ctx.now, policy=ctx.policy)
    job_id = media.capture_decided(ctx.conn, link_id, decision, ctx.policy, ctx.now_iso, state)
    _record(
        ctx,
        "rearchive",
        cmd.request_id,
        iso(cmd.requested_at),
        None,
        link_id,
        job_id,
        decision.status,
        decision.reason + _site_asked_to_wait(ctx, link_id, decision),
    )


def _site_asked_to_wait(ctx: ApplyContext, link_id: int, decision: Decision) -> str:
    """For a request whose capture is queued (by it, or already): when its site backs off,
    until when (so "queued" is not read as "now"); else nothing."""
    if decision.status != "queued" and decision.code != "in_flight":
        return ""
    host = ctx.conn.execute("SELECT domain FROM links WHERE id = ?", (link_id,)).fetchone()
    site = registrable_domain(str(host[0])) if host else ""
    until = scheduler.backing_off_until(ctx.conn, site, ctx.now_iso)
    return f"; {site} asked us to slow down: not before {until}" if until else ""


def _record(
    ctx: ApplyContext,
    kind: str,
    request_id: str,
    requested_at: str,
    url: str | None,
    link_id: int | None,
    job_id: int | None,
    decision: str,
    reason: str,
) -> None:
    """What became of a request, for the web to show by request id."""
    log.info("%s %s: %s (%s)", kind, request_id, decision, reason)
    ctx.conn.execute(
        "INSERT INTO submissions (request_id, kind, url, link_id, job_id, requested_at,"
        " decided_at, decision, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (request_id) DO NOTHING",
        (request_id, kind, url, link_id, job_id, requested_at, ctx.now_iso, decision, reason),
    )
