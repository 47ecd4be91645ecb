"""DATA_DIR/run/stack.json: how to reach a running `dla up` stack (NATS, S3, the web, the
front process's pid), written by `dla up` and read by the other `dla` commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

STACK_FILE = "stack.json"


def stack_file_path(data_dir: Path) -> Path:
    """Where the stack file of data_dir lies."""
    return data_dir / "run" / STACK_FILE


def write_stack_file(data_dir: Path, info: dict[str, Any]) -> None:
    """Record how to reach a running stack (called by `dla up`)."""
    path = stack_file_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, path)


def remove_stack_file(data_dir: Path) -> None:
    """Forget the stack (called by `dla up` when it stops)."""
    stack_file_path(data_dir).unlink(missing_ok=True)


def read_stack_file(data_dir: Path) -> dict[str, Any]:
    """What the running stack recorded ({} when none is, or the file is unreadable)."""
    try:
        data = json.loads(stack_file_path(data_dir).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
