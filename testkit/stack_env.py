"""The environment for a stack a test or benchmark starts with its own engines."""

from __future__ import annotations

import os

ENGINE_PREFIXES = ("NATS_", "S3_", "AWS_")
"""Settings that point at NATS and S3: left out, so the stack starts (and uses) its own."""


def own_engines_env(**settings: str) -> dict[str, str]:
    """This process's environment without any NATS/S3/AWS setting (so a `Stack` starts its
    own nats-server and SeaweedFS and never touches a developer's real ones), plus
    `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENGINE_PREFIXES)}
    env.update(settings)
    return env
