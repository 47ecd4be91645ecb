"""`dla up` prints what its services found wrong with their settings at start
(shared/setting_names.py: a name that looks like a mistyped setting, a value a setting
refuses): said where the owner who typed it is looking, not only in a log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shared.setting_names import read_report, report_file

WATCH_S = 120.0
"""How long after the start the services' reports are looked for (each leaves it at start)."""


class StartReports:
    """Prints each line of the services' start reports once, whichever services said it."""

    def __init__(self, data_dir: Path, services: Sequence[str]) -> None:
        self.data_dir = data_dir
        self.services = list(services)
        self.said: set[str] = set()
        for service in self.services:  # a file left by an earlier run says nothing of this one
            report_file(data_dir, service).unlink(missing_ok=True)

    def lines(self) -> list[str]:
        """What the services said since the last call, a line each."""
        new: list[str] = []
        for service in self.services:
            for line in read_report(self.data_dir, service).lines():
                if line not in self.said:
                    self.said.add(line)
                    new.append(line)
        return new
