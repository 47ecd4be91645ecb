"""`dla`: run the archive (`dla up`) and look after it (every other subcommand).

Subcommands talk to the running stack through its web API and NATS, never by writing the
database; they find it from the settings `dla up` uses (DATA_DIR, WEB_URL or WEB_PORT,
NATS_URL, ADMIN_TOKEN), so after `make up` they need no flags. Exit codes: see
`services.supervisor.cli.errors.Exit` and the README's owner's guide.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from services.supervisor.cli import backfill, browse, capture, data, moderation, verify
from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.names import SERVICES
from shared.logs import setup_logging
from shared.setting_names import refused
from shared.settings import log_level

app = typer.Typer(
    name="dla",
    help=__doc__,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command()
def up(
    without: Annotated[
        list[str] | None,
        typer.Option(help=f"Skip a service (one of {', '.join(SERVICES)}); repeatable."),
    ] = None,
) -> None:
    """Start NATS, S3 and every service on this machine until Ctrl-C / SIGTERM."""
    from services.supervisor.up import run_up

    skip = set(without or [])
    unknown = skip - set(SERVICES)
    if unknown:
        raise CliError(f"unknown service(s): {', '.join(sorted(unknown))}", Exit.USAGE)
    data_dir = Path(os.environ.get("DATA_DIR", "./data")).resolve()
    port = os.environ.get("WEB_PORT", "8000")
    host = os.environ.get("WEB_HOST", "127.0.0.1")
    code = run_up(data_dir, [s for s in SERVICES if s not in skip], f"http://{host}:{port}/")
    raise typer.Exit(code)


@app.command("alert-config")
def alert_config(
    path: Annotated[Path, typer.Argument(help="Where to write Alertmanager's configuration.")],
) -> None:
    """Write Alertmanager's configuration from ALERT_* and SMTP_* (the compose stack's
    `alert-config` service); print where alerts go."""
    import json

    from services.supervisor.alerting import AlertSettings, alertmanager_config, describe

    settings = AlertSettings()
    try:
        settings.check()
    except ValueError as exc:
        raise CliError(str(exc), Exit.USAGE) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(alertmanager_config(settings), indent=2) + "\n")
    print(describe(settings))


capture.register(app)
backfill.register(app)
browse.register(app)
moderation.register(app)
data.register(app)
verify.register(app)


_COMMANDS = frozenset(c.name or "" for c in app.registered_commands) | {
    c.callback.__name__ for c in app.registered_commands if c.callback
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dla` command: one line and an exit code for every failure."""
    args = sys.argv[1:] if argv is None else argv
    serving = bool(args) and args[0] == "up"
    try:
        level = log_level(os.environ.get("LOG_LEVEL", "INFO")) if serving else "CRITICAL"
    except ValueError as exc:
        given = os.environ["LOG_LEVEL"]
        print(f"dla: setting refused: LOG_LEVEL={given!r}: {exc}", file=sys.stderr)
        return int(Exit.CONFIG)
    setup_logging(level, "dla")
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="dla", standalone_mode=False)
    except CliError as exc:
        print(f"dla: {exc}", file=sys.stderr)
        return int(exc.code)
    except KeyboardInterrupt:
        print("dla: interrupted", file=sys.stderr)
        return 130
    except ValidationError as exc:  # of a settings class (every one is named ...Settings)
        if not exc.title.endswith("Settings"):
            print(f"dla: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return int(Exit.FAILED)
        for line in refused(exc):
            print(f"dla: setting refused: {line}", file=sys.stderr)
        return int(Exit.CONFIG)
    except Exception as exc:  # never a traceback for the person at the terminal
        usage = _click_error(exc)
        if usage is not None:
            if usage[0]:
                hint = f"dla {args[0]} --help" if args and args[0] in _COMMANDS else "dla --help"
                print(f"dla: {usage[0]} (see {hint})", file=sys.stderr)
            return usage[1]
        if os.environ.get("DLA_DEBUG"):
            raise
        print(f"dla: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return int(Exit.FAILED)
    return result if isinstance(result, int) else 0


def _click_error(exc: Exception) -> tuple[str, int] | None:
    """(message, exit code) of a Click usage error or abort (Typer bundles its own Click)."""
    if type(exc).__name__ == "Abort":
        return "aborted", 1
    message, code = getattr(exc, "format_message", None), getattr(exc, "exit_code", None)
    if callable(message) and isinstance(code, int):
        return " ".join(str(message()).split()), code
    return None


if __name__ == "__main__":
    raise SystemExit(main())
