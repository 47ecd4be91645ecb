"""The provisioned dashboards are what deploy/grafana/build.py writes, and query exported metrics.

tests/e2e/test_observability.py runs every query against a real Prometheus; this file is the
fast static check.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "deploy" / "grafana" / "dashboards"
SUFFIXES = ("_bucket", "_count", "_sum")
BUILTIN = {"process_start_time_seconds"}


def build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("grafana_build", REPO / "deploy/grafana/build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


METRIC = re.compile(r'(?:Counter|Gauge|Histogram|Summary|Info|Enum)\(\s*"(dla_[a-z0-9_]+)"')
"""A metric's definition: its class and name (another "dla_..." string, such as the admin
console's cookie, is no metric)."""


def defined_metrics() -> set[str]:
    names: set[str] = set()
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        names.update(METRIC.findall(path.read_text()))
    return names


def test_dashboard_files_are_built_from_build_py() -> None:
    rendered = build_module().render()
    on_disk = {p.name: p.read_text() for p in DASHBOARDS.glob("*.json")}
    assert on_disk == rendered, "run: python deploy/grafana/build.py"


def test_dashboard_queries_use_exported_metrics() -> None:
    known = defined_metrics() | BUILTIN
    for board in DASHBOARDS.glob("*.json"):
        for panel in json.loads(board.read_text())["panels"]:
            for target in panel["targets"]:
                for name in re.findall(r"\b(?:dla|process)_[a-z0-9_]+", target["expr"]):
                    base = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)
                    assert base in known, f"{board.name}: {panel['title']}: {name} is not exported"


def test_metric_names_follow_prometheus_conventions() -> None:
    """dla_<service>_<thing>_<unit>: counters end in _total, durations in _seconds."""
    services = {"poller", "writer", "capture", "archiver", "media", "web", "supervisor"}
    for name in defined_metrics():
        assert name.split("_")[1] in services, f"{name}: dla_<service>_..."
        assert not name.endswith(("_ms", "_milliseconds", "_bytes_count")), name
