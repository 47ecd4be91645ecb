"""What goes wrong in a `dla` subcommand: one line for the person, one exit code each."""

from __future__ import annotations

from enum import IntEnum

from shared.setting_names import EXIT_CONFIG


class Exit(IntEnum):
    """The exit codes of `dla` (documented in the README's owner's guide)."""

    OK = 0
    FAILED = 1
    """Something asked for did not happen (a URL failed to capture, a request was refused)."""
    USAGE = 2
    """Bad arguments (Click's own code)."""
    BUSY = 3
    """The data directory is in use by a running `dla up` (or, for restore, it must stop)."""
    UNREACHABLE = 4
    """The stack is not running or not reachable (web, NATS)."""
    NOT_FOUND = 5
    """No such link, request or backup."""
    DENIED = 6
    """The admin token is missing or wrong."""
    INVALID = 7
    """The input was refused (a malformed URL, a bad date, a bad file)."""
    CONFIG = EXIT_CONFIG
    """A setting in the environment was refused (the code a service ends with for it)."""


class CliError(Exception):
    """A failure to report as one line, with its exit code."""

    def __init__(self, message: str, code: Exit = Exit.FAILED) -> None:
        super().__init__(message)
        self.code = code
