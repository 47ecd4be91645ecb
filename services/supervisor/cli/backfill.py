"""`dla backfill TOPIC_URL`: read a whole topic of a watched forum now, every post through
the poller's extraction, quote rules and provenance (`shared.backfill.request_backfill`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import out, print_json
from services.supervisor.cli.stack_client import connect_nats, stack_client

if TYPE_CHECKING:
    from shared.messages import BackfillReport

REASON_EXITS = {
    "not_a_topic": Exit.INVALID,
    "not_watched": Exit.INVALID,
    "invalid": Exit.INVALID,
    "not_found": Exit.NOT_FOUND,
    "unavailable": Exit.UNREACHABLE,
}
"""The exit code of each reason the poller gives (any other: Exit.FAILED)."""


async def ask(nats_url: str, topic_url: str, timeout: float) -> BackfillReport:
    """The poller's report on the topic (CliError when it cannot be asked)."""
    from shared.backfill import request_backfill
    from shared.errors import BusError

    try:
        nc = await connect_nats(nats_url, timeout)
    except Exception as exc:
        raise CliError(
            f"NATS at {nats_url} is not reachable ({type(exc).__name__}); is `dla up` running?",
            Exit.UNREACHABLE,
        ) from None
    try:
        return await request_backfill(nc, topic_url, timeout)
    except BusError as exc:
        raise CliError(str(exc), Exit.UNREACHABLE) from None
    finally:
        await nc.close()


def register(app: typer.Typer) -> None:
    """Add `dla backfill`."""

    @app.command()
    def backfill(
        topic_url: Annotated[
            str,
            typer.Argument(help="The topic: https://forum/t/slug/123, /t/slug/123/45 or /t/123."),
        ],
        timeout: Annotated[
            float, typer.Option(help="Seconds to wait for the poller's answer.", min=1)
        ] = 600.0,
        as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
    ) -> None:
        """Read a whole topic of a watched forum (every post, through the poller's link
        extraction, quote rules and provenance); prints how many posts were read and links
        found. Running it again records nothing twice."""
        # here, not at the top: every other `dla` command would pay ~0.6 s for them
        from shared.discourse import NotATopic, parse_topic_url

        try:
            parse_topic_url(topic_url)
        except NotATopic as exc:
            raise CliError(str(exc), Exit.INVALID) from None
        with stack_client() as client:
            report = asyncio.run(ask(client.nats_url, topic_url, timeout))
        if report.error:
            code = REASON_EXITS.get(report.reason or "", Exit.FAILED)
            raise CliError(f"topic not read: {report.error}", code)
        if as_json:
            print_json(report.model_dump())
            return
        out.print(
            f"{report.forum}: {report.posts} post(s) read, {report.links} link(s) found"
            f" ({report.quoted} inside quotes); the writer records them once"
        )
