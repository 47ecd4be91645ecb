"""The base of every bus payload."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Message(BaseModel):
    """Base of every bus payload."""

    model_config = ConfigDict(extra="forbid")

    def msg_id(self) -> str:
        """The Nats-Msg-Id used for JetStream de-duplication."""
        raise NotImplementedError
