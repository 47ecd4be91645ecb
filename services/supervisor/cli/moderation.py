"""`dla exclude`, `dla include`, `dla takedown`, `dla undo`: an admin's decisions, kept in
the audit table; `dla audit`: that table, read or exported. Each calls the admin route the
console's form calls too, so both send the same writer command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import out, print_json, short, table
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
    def include(
        domain: Annotated[str, typer.Argument(help="The domain excluded (`dla exclude`).")],
        reason: Annotated[str, typer.Option(help="Why (kept in the audit table).")] = "",
    ) -> None:
        """Lift the exclusion of a domain: its links are captured again from now on (those it
        failed stay failed: `dla retry --domain` queues them) (admin)."""
        with stack_client() as client:
            r = client.post_json("/admin/include", {"domain": domain, "reason": reason})
        out.print(
            f"lift of the exclusion of {r.get('domain', domain)} sent ({r.get('request_id')})"
        )

    @app.command()
    def takedown(
        link_id: Annotated[int, typer.Argument(help="The link's id.", min=1)],
        reason: Annotated[
            str, typer.Option(help="Why (kept in the audit table, not public).")
        ] = "",
    ) -> None:
        """Take a link down: hidden at once from every page, search, feed, export and the
        published database; never captured again; what was captured is kept until
        TAKEDOWN_UNDO_DAYS have passed (`dla undo` until then), then purged (admin)."""
        if not reason.strip():
            raise CliError("a takedown needs --reason", Exit.USAGE)
        with stack_client() as client:
            r = client.post_json(f"/admin/links/{link_id}/takedown", {"reason": reason})
        out.print(f"link {link_id} taken down ({r.get('request_id')})")

    @app.command()
    def undo(
        link_id: Annotated[int, typer.Argument(help="The id of the link taken down.", min=1)],
        reason: Annotated[str, typer.Option(help="Why (kept in the audit table).")] = "",
    ) -> None:
        """Undo a takedown within TAKEDOWN_UNDO_DAYS: the link is shown again exactly as
        before; after the window it is refused (admin)."""
        with stack_client() as client:
            r = client.post_json(f"/admin/links/{link_id}/undo", {"reason": reason})
        out.print(f"undo of link {link_id} sent ({r.get('request_id')}); `dla audit` shows it")

    @app.command()
    def audit(
        export: Annotated[
            Literal["csv", "jsonl"] | None,
            typer.Option(help="Download the whole trail in this format (to stdout or --output)."),
        ] = None,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write the export to this file.")
        ] = None,
        limit: Annotated[int, typer.Option(help="Entries shown (newest first).", min=1)] = 50,
        as_json: Annotated[bool, typer.Option("--json", help="The entries as JSON.")] = False,
    ) -> None:
        """The audit trail: who did what, when, why, and what came of it (admin)."""
        with stack_client() as client:
            if export is not None:
                data = client.request("GET", f"/admin/audit.{export}").content
                if output is None:
                    sys.stdout.buffer.write(data)
                else:
                    output.write_bytes(data)
                    out.print(f"audit trail written to {output} ({len(data)} bytes)")
                return
            entries = client.get_json("/admin/audit.json", params={"limit": limit})["entries"]
        if as_json:
            print_json(entries)
            return
        table(
            "Audit trail (newest first)",
            ("when", "who", "what", "on", "why", "outcome", "detail"),
            (
                (e["at"], e["admin"], e["action"], e["target"], short(e["reason"], 40),
                 e["outcome"], short(e["detail"], 60))
                for e in entries
            ),
        )  # fmt: skip
