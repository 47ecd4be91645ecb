"""`dla verify`: registered here, run by `services.supervisor.cli.evidence_check` (imported
when the command runs: its X.509 and WACZ modules would cost every other `dla` command
~0.5 s)."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add `dla verify`."""

    @app.command()
    def verify(
        target: Annotated[str, typer.Argument(help="A link id, a .wacz file or a manifest.json.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Recompute every hash of a capture and check its manifest, WACZ and timestamps."""
        from services.supervisor.cli.evidence_check import run

        run(target, as_json)
