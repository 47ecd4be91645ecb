"""The environment for a stack a test or benchmark starts with its own engines."""

from __future__ import annotations

import os

ENGINE_PREFIXES = ("NATS_", "S3_", "AWS_")
ENGINES_GRACE_S = 0.5
"""How long a test's nats-server and weed get to stop after SIGTERM before SIGKILL
(`Stack.stop(engines_grace_s=...)`; `dla up` gives them 3 s). weed mini takes ~2.2 s to stop
(its filer ~1.2 s, then its volume server's pre-stop second), now and then past 10 s, and a
test's engines hold nothing that outlives the test: nobody reads their data afterwards."""
"""Settings that point at NATS and S3: left out, so the stack starts (and uses) its own."""


def own_engines_env(**settings: str) -> dict[str, str]:
    """This process's environment without any NATS/S3/AWS setting (so a `Stack` starts its
    own nats-server and SeaweedFS and never touches a developer's real ones), plus
    `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENGINE_PREFIXES)}
    env.update(settings)
    return env
