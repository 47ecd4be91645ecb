"""`dla exclude`, `dla takedown`: an admin's decisions, kept in the audit table."""

from __future__ import annotations

from typing import Annotated

import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import out
from services.supervisor.cli.stack_client import stack_client


def register(app: typer.Typer) -> None:
    """Add these subcommands to `dla`."""

    @app.command()
    def exclude(
        domain: Annotated[str, typer.Argument(help="The domain (its subdomains too).")],
        reason: Annotated[str, typer.Option(help="Why (kept in the audit table).")] = "",
    ) -> None:
        """Never archive links of this domain from now on (admin)."""
        with stack_client() as client:
            r = client.post_json("/admin/exclude", {"domain": domain, "reason": reason})
        out.print(f"{r.get('domain', domain)} excluded ({r.get('request_id')})")

    @app.command()
    def takedown(
        link_id: Annotated[int, typer.Argument(help="The link's id.", min=1)],
        reason: Annotated[
            str, typer.Option(help="Why (kept in the audit table, not public).")
        ] = "",
    ) -> None:
        """Take a link down: hidden from every page, search, feed, export and the published
        database; its stored objects deleted; never captured again (admin)."""
        if not reason.strip():
            raise CliError("a takedown needs --reason", Exit.USAGE)
        with stack_client() as client:
            r = client.post_json(f"/admin/links/{link_id}/takedown", {"reason": reason})
        out.print(f"link {link_id} taken down ({r.get('request_id')})")
