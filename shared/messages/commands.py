"""What a person or an admin asks (`cmd.*`)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from shared.messages.base import Message


class Command(Message):
    """What every command of a person (`cmd.*`) carries; its Nats-Msg-Id is
    `<PREFIX>:<request_id>`."""

    PREFIX: ClassVar[str]
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"{self.PREFIX}:{self.request_id}"


class SubmitCommand(Command):
    """``cmd.submit``: a person asked to archive a URL."""

    PREFIX = "submit"

    url: str
    """The URL as submitted."""


class RearchiveCommand(Command):
    """``cmd.rearchive``: a person asked to capture a known link again now."""

    PREFIX = "rearchive"

    link_id: int
    """The link."""


class TakedownCommand(Command):
    """``cmd.takedown``: an admin took a link down (hidden everywhere at once; what was
    captured of it is purged once TAKEDOWN_UNDO_DAYS have passed without an undo)."""

    PREFIX = "takedown"

    link_id: int
    """The link."""
    reason: str
    """Why (kept in the audit table, never public)."""
    admin: str
    """The name of the admin token that asked (never the secret)."""


class UndoTakedownCommand(Command):
    """``cmd.undo``: an admin undid a takedown within its window (TAKEDOWN_UNDO_DAYS): the
    link is shown again exactly as before."""

    PREFIX = "undo"

    link_id: int
    """The link taken down."""
    reason: str = ""
    """Why (kept in the audit table)."""
    admin: str
    """The name of the admin token that asked (never the secret)."""


class DomainCommand(Command):
    """What an admin's decision about a domain carries (``cmd.exclude``, ``cmd.include``)."""

    PREFIX: ClassVar[str]
    domain: str
    """The domain, lower-case, no scheme."""
    reason: str = ""
    """Why (kept in the audit table)."""
    admin: str
    """The name of the admin token that asked."""


class ExcludeCommand(DomainCommand):
    """``cmd.exclude``: an admin excluded a domain (and its subdomains) from archiving."""

    PREFIX = "exclude"


class IncludeCommand(DomainCommand):
    """``cmd.include``: an admin lifted the exclusion of a domain (``cmd.exclude``, the same
    domain): its links are captured again from now on."""

    PREFIX = "include"


class RetryCommand(Command):
    """``cmd.retry``: an admin asked to capture failed links again now."""

    PREFIX = "retry"

    domain: str | None = None
    """Only links of this domain (and its subdomains)."""
    since: datetime | None = None
    """Only links that failed at or after this time."""
    admin: str
    """The name of the admin token that asked."""


class CheckCommand(Command):
    """``cmd.check``: an operator asked to check a link's original now (`dla check`)."""

    PREFIX = "checknow"

    link_id: int
    """The link."""
