"""`dla up` prints the settings its services found mistyped (shared/setting_names.py): a
name that does nothing is said where the owner who typed it is looking, not only in a log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shared.setting_names import read_slips, slips_file

WATCH_S = 120.0
"""How long after the start the services' slips are looked for (each says them at start)."""


class SlipReport:
    """Prints each mistyped setting once, whichever services found it."""

    def __init__(self, data_dir: Path, services: Sequence[str]) -> None:
        self.data_dir = data_dir
        self.services = list(services)
        self.said: set[str] = set()
        for service in self.services:  # a file left by an earlier run says nothing of this one
            slips_file(data_dir, service).unlink(missing_ok=True)

    def lines(self) -> list[str]:
        """What the services found since the last call, a line each."""
        new: list[str] = []
        for service in self.services:
            for given, meant in sorted(read_slips(self.data_dir, service).items()):
                if given not in self.said:
                    self.said.add(given)
                    new.append(f"{given} is not a setting and is ignored: did you mean {meant}?")
        return new
