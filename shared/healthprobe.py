"""`python -m shared.healthprobe URL`: exit 0 when URL answers 2xx within 3 s, else 1.

The containers' health check (docker-compose.yml). One argument without spaces on purpose:
podman's Docker-compatible API (4.3, Debian bookworm's) splits a health check's arguments on
spaces, so `python -c "import urllib.request ..."` reached the container as `import` alone and
every service stayed unhealthy under podman.
"""

from __future__ import annotations

import sys
import urllib.request
from urllib.error import URLError

TIMEOUT_S = 3.0


def probe(url: str) -> bool:
    """True when `url` answers with a 2xx status within TIMEOUT_S."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:
            return 200 <= int(answer.status) < 300
    except (URLError, OSError, ValueError):
        return False


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m shared.healthprobe URL", file=sys.stderr)
        return 2
    return 0 if probe(argv[0]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
