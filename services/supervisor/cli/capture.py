"""`dla add`, `dla retry`, `dla rearchive`: ask the archive to capture; `dla check`: look
at an archived link's original now."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import err, out, print_json, short, table
from services.supervisor.cli.stack_client import StackClient, stack_client


@dataclass
class Submitted:
    """One URL given to `dla add` and what became of it."""

    url: str
    request_id: str | None = None
    outcome: str = "pending"
    """pending, captured or failed."""
    detail: str = ""
    link_id: int | None = None


def read_urls(urls: list[str], from_file: Path | None) -> list[str]:
    """The URLs of the arguments, `-` (stdin) and --from-file, one a line, # comments."""
    lines: list[str] = []
    for u in urls:
        if u == "-":
            lines += sys.stdin.read().splitlines()
        else:
            lines.append(u)
    if from_file is not None:
        try:
            lines += from_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {from_file}: {exc}", Exit.INVALID) from None
    return [s for line in lines if (s := line.strip()) and not s.startswith("#")]


def malformed(url: str) -> str | None:
    """Why the URL cannot be submitted, or None."""
    # here, not at the top: importing shared.links loads its public suffix list and rules
    from shared.links.urlparts import SUPPORTED_SCHEMES

    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        return f"malformed URL ({exc})"
    if parts.scheme not in SUPPORTED_SCHEMES or not host:
        return "not an http(s) URL"
    if len(url) > 4096:
        return "URL longer than 4096 characters"
    return None


def submit_all(client: StackClient, items: list[Submitted]) -> None:
    """POST /admin/submit for each (POST /submit's checks, without its per-client limit);
    refusals become failed outcomes (the stack unreachable or a bad token aborts)."""
    for item in items:
        why = malformed(item.url)
        if why:
            item.outcome, item.detail = "failed", why
            continue
        try:
            body = client.post_json("/admin/submit", {"url": item.url})
        except CliError as exc:
            if exc.code in (Exit.UNREACHABLE, Exit.DENIED):
                raise
            item.outcome, item.detail = "failed", str(exc)
            continue
        item.request_id = str(body.get("request_id") or "") or None
        if item.request_id is None:
            item.outcome, item.detail = "failed", "the web gave no request id"


def poll(client: StackClient, item: Submitted) -> None:
    """Ask what became of one request."""
    assert item.request_id is not None
    r = client.get_json(f"/admin/requests/{item.request_id}.json")
    item.outcome = str(r.get("outcome") or "pending")
    item.link_id = r.get("link_id")
    if item.outcome == "failed":
        if r.get("decision") == "rejected":  # the writer said no: why
            item.detail = f"rejected: {r.get('reason') or ''}"
        elif r.get("decision") == "skipped_policy":  # an exclusion or takedown: which
            item.detail = str(r.get("reason") or "skipped by policy")
        else:  # its capture failed: what the link shows ('failed · HTTP 404')
            item.detail = str(r.get("status_label") or r.get("last_error") or "failed")
    elif item.outcome == "captured":
        item.detail = str(r.get("link_status") or "archived")


def register(app: typer.Typer) -> None:
    """Add these subcommands to `dla`."""

    @app.command()
    def add(
        urls: Annotated[
            list[str] | None,
            typer.Argument(help="URLs to archive; `-` reads one a line from stdin."),
        ] = None,
        from_file: Annotated[
            Path | None,
            typer.Option("--from-file", "-f", help="Read URLs from a file, one a line."),
        ] = None,
        no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once submitted.")] = False,
        timeout: Annotated[
            float, typer.Option(help="Seconds to wait for the captures.", min=1)
        ] = 900.0,
        as_json: Annotated[bool, typer.Option("--json", help="Outcomes as JSON.")] = False,
    ) -> None:
        """Archive URLs (as POST /submit does) and wait until each is captured or failed.

        Exits 1 if any URL failed, was refused or was still being captured when the wait
        ended (`--timeout`: it stays pending, and `dla show` tells what became of it)."""
        given = read_urls(urls or [], from_file)
        if not given:
            raise CliError("no URL given (arguments, `-` for stdin, or --from-file)", Exit.USAGE)
        items = [Submitted(u) for u in given]
        with stack_client() as client:
            submit_all(client, items)
            if not no_wait:
                wait_all(client, items, timeout)
        report(items, as_json, waited=not no_wait)
        if any(i.outcome == "failed" or (i.outcome == "pending" and not no_wait) for i in items):
            raise typer.Exit(int(Exit.FAILED))

    @app.command()
    def retry(
        failed: Annotated[
            bool, typer.Option("--failed", help="Retry links whose capture failed (required).")
        ] = False,
        domain: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
        since: Annotated[
            datetime | None,
            typer.Option(help="Only links that failed since (ISO date/time, UTC)."),
        ] = None,
    ) -> None:
        """Queue failed links again, not those whose page asked not to be archived (`dla
        rearchive ID` asks one again) (admin)."""
        if not failed:
            raise CliError("say what to retry: --failed", Exit.USAGE)
        body: dict[str, str] = {}
        if domain:
            body["domain"] = domain
        if since:
            body["since"] = (since if since.tzinfo else since.replace(tzinfo=UTC)).isoformat()
        with stack_client() as client:
            r = client.post_json("/admin/retry", body)
        out.print(f"retry requested ({r.get('request_id')}); `dla status` shows the queue")

    @app.command()
    def check(
        link: Annotated[str, typer.Argument(help="The link's id, or a URL the archive knows.")],
        no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once asked.")] = False,
        timeout: Annotated[
            float, typer.Option(help="Seconds to wait for the answer.", min=1)
        ] = 120.0,
        as_json: Annotated[bool, typer.Option("--json", help="The source status as JSON.")] = False,
    ) -> None:
        """Check a link's original now (admin): present, gone or unknown, with the evidence.

        Exits 1 when no answer came within the timeout."""
        with stack_client() as client:
            # observations are kept by the second (a later answer in the same second replaces
            # the earlier one), so the check is asked in a second of its own: an answer from
            # the second before (the last check) is then never taken for this one's
            time.sleep(1 - time.time() % 1)
            r = client.post_json("/admin/check", {"link": link})
            link_id = int(r["link_id"])
            if no_wait:
                out.print(f"check of link {link_id} requested ({r.get('request_id')})")
                return
            status = wait_check(client, link_id, str(r.get("requested_at") or ""), timeout)
        if as_json:
            print_json(status)
            return
        show_check(link_id, status)

    @app.command()
    def rearchive(
        link_id: Annotated[int, typer.Argument(help="The link's id.", min=1)],
    ) -> None:
        """Capture a link again now, whatever the cache window (admin)."""
        with stack_client() as client:
            r = client.post_json(f"/admin/links/{link_id}/rearchive", {})
        out.print(f"re-archive of link {link_id} requested ({r.get('request_id')})")


def wait_check(client: StackClient, link_id: int, since: str, timeout: float) -> dict[str, Any]:
    """The link's source status once a check newer than `since` is recorded (CliError when
    none is within the timeout)."""
    deadline = time.monotonic() + timeout
    with err.status(f"checking link {link_id}"):
        while True:
            status = client.get_json(f"/links/{link_id}.json").get("source_status") or {}
            newest = (status.get("observations") or [{}])[0]
            if (newest.get("at") or "") >= since[:19]:
                return dict(status)
            if time.monotonic() > deadline:
                raise CliError(f"no check of link {link_id} within {timeout:.0f} s", Exit.FAILED)
            time.sleep(0.5)


def show_check(link_id: int, status: dict[str, Any]) -> None:
    """One check's answer and the link's verdict."""
    o = status["observations"][0]
    out.print(
        f"link {link_id}: {o['answer']} ({o['summary']}, via {o['via']})"
        + (" · changed since the newest capture: captured again" if o.get("changed") else "")
    )
    out.print(
        f"verdict: {status['state']}"
        + (f" since {status['since']}" if status.get("since") else "")
        + (f" · {status['reason']}" if status.get("reason") else "")
    )


def wait_all(client: StackClient, items: list[Submitted], timeout: float) -> None:
    """A progress bar until every request is captured or failed (or the timeout)."""
    deadline = time.monotonic() + timeout
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("capturing", total=len(items))
        while True:
            for item in items:
                if item.outcome == "pending" and item.request_id:
                    poll(client, item)
            done = sum(1 for i in items if i.outcome != "pending")
            failed = sum(1 for i in items if i.outcome == "failed")
            progress.update(task, completed=done, description=f"capturing ({failed} failed)")
            if done == len(items):
                return
            if time.monotonic() > deadline:
                for item in items:
                    if item.outcome == "pending":  # still queued or running: not a failure
                        item.detail = f"not done after {timeout:.0f} s: still being captured"
                return
            time.sleep(1.0)


def report(items: list[Submitted], as_json: bool, waited: bool) -> None:
    """The outcome of every URL."""
    if as_json:
        print_json([i.__dict__ for i in items])
        return
    table(
        None,
        ["outcome", "link", "url", "detail"],
        [(i.outcome, i.link_id or "", short(i.url, 60), short(i.detail, 60)) for i in items],
    )
    counts = {k: sum(1 for i in items if i.outcome == k) for k in ("captured", "failed", "pending")}
    pending = "pending" if waited else "submitted, not waited for"
    out.print(
        f"{len(items)} URL(s): {counts['captured']} captured, {counts['failed']} failed, "
        f"{counts['pending']} {pending}"
    )
