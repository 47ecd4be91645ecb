"""The one state-machine pattern shared by Snapshot, ArchiveResult and Binary.

Each machine is a status plus the table of legal moves; `to()` raises on anything else.
The objects that do the work (`SnapshotRun`, `HookRun`, binary detection) own a machine and
expose `run()` / `cleanup()`, the pattern of the seed `hook-state-machine-cleanup.md`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Generic, TypeVar

from shared.errors import ArchiverError
from shared.hooks.records import BinaryStatus, ResultStatus, SnapshotStatus

S = TypeVar("S", bound=str)


class IllegalTransition(ArchiverError):
    """A state machine was asked for a move its table does not allow."""


class StateMachine(Generic[S]):
    """A status that only moves along `TRANSITIONS`."""

    TRANSITIONS: ClassVar[Mapping[str, frozenset[str]]]
    """status -> the statuses it may move to."""
    FINAL: ClassVar[frozenset[str]]
    """Statuses in which the work is over (for this attempt)."""

    def __init__(self, status: S) -> None:
        if status not in self.TRANSITIONS:
            raise IllegalTransition(f"{type(self).__name__}: unknown status {status!r}")
        self.status: S = status

    def can(self, new: S) -> bool:
        """True when `to(new)` would succeed."""
        return new in self.TRANSITIONS[self.status]

    def to(self, new: S) -> None:
        """Move to `new`; raises IllegalTransition if the table forbids it."""
        if not self.can(new):
            raise IllegalTransition(f"{type(self).__name__}: {self.status} -> {new} is not allowed")
        self.status = new

    @property
    def finished(self) -> bool:
        """True once the machine is in a final status."""
        return self.status in self.FINAL

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status!r})"


class SnapshotMachine(StateMachine[SnapshotStatus]):
    """queued -> started -> sealed (sealed only once no background hook runs)."""

    TRANSITIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "queued": frozenset({"started"}),
        "started": frozenset({"sealed"}),
        "sealed": frozenset(),
    }
    FINAL: ClassVar[frozenset[str]] = frozenset({"sealed"})

    def __init__(self, status: SnapshotStatus = "queued") -> None:
        super().__init__(status)


class ArchiveResultMachine(StateMachine[ResultStatus]):
    """queued -> started -> succeeded | partial | failed | skipped; a hook not run (a missing
    binary, a failed hook it reads) goes queued -> skipped; failed/skipped -> queued to retry."""

    TRANSITIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "queued": frozenset({"started", "skipped"}),
        "started": frozenset({"succeeded", "partial", "failed", "skipped"}),
        "succeeded": frozenset(),
        "partial": frozenset(),
        "failed": frozenset({"queued"}),
        "skipped": frozenset({"queued"}),
    }
    FINAL: ClassVar[frozenset[str]] = frozenset({"succeeded", "partial", "failed", "skipped"})

    def __init__(self, status: ResultStatus = "queued") -> None:
        super().__init__(status)


class BinaryMachine(StateMachine[BinaryStatus]):
    """queued -> started -> succeeded | failed; failed -> queued to look again."""

    TRANSITIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "queued": frozenset({"started"}),
        "started": frozenset({"succeeded", "failed"}),
        "succeeded": frozenset(),
        "failed": frozenset({"queued"}),
    }
    FINAL: ClassVar[frozenset[str]] = frozenset({"succeeded", "failed"})

    def __init__(self, status: BinaryStatus = "queued") -> None:
        super().__init__(status)
