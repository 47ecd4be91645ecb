"""Regenerate ``shared/links/clearurls_rules.json`` from the ClearURLs rule set in the corpora.

Run from the repository root::

    .venv/bin/python -m tests.links.gen_clearurls

Only the parts the canonicaliser applies are kept (see ``shared/links/CLEARURLS.md``):
per provider ``urlPattern``, ``rules`` and ``exceptions``. Providers that only block
whole URLs (``completeProvider``), redirect unwrapping, ``rawRules`` and
``referralMarketing`` are left out. ``test_tracking.py`` checks that the shipped file is
what this script produces.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO.parent / "shared" / "corpora" / "urls" / "clearurls" / "data.min.json"
TARGET = REPO / "shared" / "links" / "clearurls_rules.json"
COMMIT = "9317c06bf56ae3b447f56c14dc2e03a68ab53dee"


def build(data: dict[str, Any]) -> dict[str, Any]:
    """The shipped subset of a ClearURLs ``data.min.json`` document."""
    providers: dict[str, Any] = {}
    for name, spec in data["providers"].items():
        rules = list(spec.get("rules") or [])
        if spec.get("completeProvider") or not rules:
            continue
        providers[name] = {
            "urlPattern": spec["urlPattern"],
            "rules": rules,
            "exceptions": list(spec.get("exceptions") or []),
        }
    return {
        "about": (
            "Subset of the ClearURLs rule set (urlPattern, rules, exceptions of each provider "
            "that has parameter rules). LGPL-3.0; see CLEARURLS.md and CLEARURLS-LICENSE.txt."
        ),
        "source": {
            "repo": "ClearURLs/Rules",
            "commit": COMMIT,
            "path": "data.min.json",
            "license": "LGPL-3.0",
        },
        "generated_by": "tests/links/gen_clearurls.py",
        "providers": providers,
    }


def render(data: dict[str, Any]) -> str:
    """The exact text of the shipped file."""
    return json.dumps(build(data), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:
    if not SOURCE.is_file():
        print(f"{SOURCE} not found", file=sys.stderr)
        return 1
    TARGET.write_text(render(json.loads(SOURCE.read_text(encoding="utf-8"))), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
