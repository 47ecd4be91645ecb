"""Every metric a provisioned Grafana dashboard queries is one the services export."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUFFIXES = ("_bucket", "_count", "_sum")


def defined_metrics() -> set[str]:
    names: set[str] = set()
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        names.update(re.findall(r'"(dla_[a-z0-9_]+)"', path.read_text()))
    return names


def test_dashboard_queries_use_exported_metrics() -> None:
    known = defined_metrics()
    boards = list((REPO / "deploy" / "grafana" / "dashboards").glob("*.json"))
    assert boards
    for board in boards:
        for panel in json.loads(board.read_text())["panels"]:
            for target in panel["targets"]:
                for name in re.findall(r"\bdla_[a-z0-9_]+", target["expr"]):
                    base = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)
                    assert base in known, f"{board.name}: {panel['title']}: {name} is not exported"
