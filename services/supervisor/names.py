"""The services `dla up` runs (a module of its own: the `dla` command reads it without
importing the engines' clients)."""

from __future__ import annotations

SERVICES: tuple[str, ...] = ("writer", "poller", "archiver", "media", "web")
"""Every service, in start order (the writer first: it declares the consumers it reads)."""
