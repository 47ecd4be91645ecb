"""`dla ... --help` shows each option's help as written: its `<placeholders>` too (the help
is rendered as Markdown, which drops a bare `<time>` as an HTML tag)."""

from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

from services.supervisor.cli.app import app

PLACEHOLDER = re.compile(r"<[a-z_]+>")


def test_every_placeholder_in_a_help_text_is_shown() -> None:
    root = typer.main.get_command(app)
    commands = getattr(root, "commands", {})  # typer's own Click group
    runner = CliRunner()
    checked = 0
    for name, command in commands.items():
        wanted = {
            found
            for param in command.params
            for found in PLACEHOLDER.findall(getattr(param, "help", None) or "")
        }
        if not wanted:
            continue
        shown = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"}).output
        for placeholder in wanted:
            assert placeholder in shown, (name, placeholder)
            checked += 1
    assert checked >= 2  # dla backup --output and dla restore --private
