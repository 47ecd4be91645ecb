"""Architecture rules as tests: the tree keeps the shape docs/architecture.md describes."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from shared.hooks.config import load_plugin_config, read_schema
from shared.lifecycle import Service
from shared.messages import Message
from shared.subjects import MODELS, STREAMS

REPO = Path(__file__).resolve().parents[1]
SERVICES = sorted(p.name for p in (REPO / "services").iterdir() if (p / "__init__.py").exists())
PLUGINS = sorted(p for p in (REPO / "plugins").iterdir() if p.is_dir() and p.name != "__pycache__")


def modules_imported(path: Path) -> set[str]:
    """Every module a file imports, in full (``from a import b`` counts ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def imports_of(path: Path) -> set[str]:
    """Top two components of every module a Python file imports."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(".".join(a.name.split(".")[:2]) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(".".join(node.module.split(".")[:2]))
    return found


@pytest.mark.parametrize("service", SERVICES)
def test_no_service_imports_another(service: str) -> None:
    others = {f"services.{s}" for s in SERVICES if s not in (service, "supervisor")}
    for path in (REPO / "services" / service).rglob("*.py"):
        assert not imports_of(path) & others, f"{path} imports another service"


def test_shared_never_imports_services() -> None:
    for path in (REPO / "shared").rglob("*.py"):
        assert not any(m.startswith("services") for m in imports_of(path)), path


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugins_never_import_services(plugin: Path) -> None:
    for path in plugin.rglob("*.py"):
        assert not any(m.startswith("services") for m in imports_of(path)), path


PLUGIN_MAY_IMPORT = (
    "shared.hooks.records",
    "shared.hooks.error_codes",
    "shared.hooks.config",
    "shared.targets",
    "shared.errors",
    "shared.fetching",
    "shared.links.urlparts",
    "shared.content",
    "shared.pageclient",
    "shared.platforms",
    "shared.cookies",
)
"""The shared modules a plugin's hooks may import: the hook record contract, the error-code
table (retry policy), the plugin's settings (`hook_settings`: its config.json defaults under
the environment), the capture target policy, the error types, the safe fetching of a
target (checked-address connects, caps, WARC), URL parsing (credential stripping), and
shared.content (the pure extraction, sanitization, canonical-text and metadata functions the
metadata and readable hooks call, kept there so they are typed strictly, unit-tested
and preloaded in the hook host), shared.pageclient (the page protocol client of browser
hooks), shared.platforms (the platform chains, the post shape and yt-dlp's failures, which
the platform plugins and the media hook call, and a liveness check will call too) and
shared.cookies (an operator's per-site cookies, for yt-dlp). Hooks run as separate
processes under the runner, so the rest of ``shared`` (bus, S3, settings, the runner
itself) is not theirs to use; a plugin that needs more widens this list on purpose, in
review."""


def _hook_files(plugin: Path) -> list[Path]:
    return [p for p in plugin.rglob("*.py") if "tests" not in p.relative_to(plugin).parts]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugins_import_only_the_hook_side_of_shared(plugin: Path) -> None:
    for path in _hook_files(plugin):
        for module in modules_imported(path):
            if module.split(".")[0] != "shared" or module == "shared":
                continue
            assert module.startswith(PLUGIN_MAY_IMPORT), (
                f"{path} imports {module}; plugins may import only {PLUGIN_MAY_IMPORT}"
            )
        assert not imports_of(path) & {"tests", "testkit"}, f"{path} imports test code"


def test_product_code_never_imports_test_code() -> None:
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        tops = {m.split(".")[0] for m in imports_of(path)}
        assert not tops & {"tests", "testkit", "bench"}, f"{path} imports test code"


def test_tests_are_a_leaf() -> None:
    """Benchmarks, plugin tests and the test kit share helpers through ``testkit`` only:
    nothing outside ``tests/`` imports ``tests.*``, and nothing edits ``sys.path``."""
    outside = [
        *(REPO / "bench").rglob("*.py"),
        *(REPO / "testkit").rglob("*.py"),
        *(p for plugin in PLUGINS for p in (plugin / "tests").rglob("*.py")),
    ]
    for path in outside:
        assert not {m.split(".")[0] for m in imports_of(path)} & {"tests"}, path
    for path in [*outside, *(REPO / "tests").rglob("*.py")]:
        if "fixtures" in path.parts:
            continue
        text = path.read_text()
        assert not any(f"sys.path.{verb}(" in text for verb in ("insert", "append")), path


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_plugin_setting_is_described(plugin: Path) -> None:
    schema = read_schema(plugin / "config.json")
    props = schema.get("properties", {})
    assert props, f"{plugin.name}/config.json declares no settings"
    for name, spec in props.items():
        assert spec.get("description"), f"{plugin.name}: {name} has no description"
        assert "default" in spec, f"{plugin.name}: {name} has no default"
    prefix = plugin.name.upper()
    assert f"{prefix}_TIMEOUT" in props, f"{plugin.name} must support {prefix}_TIMEOUT"
    load_plugin_config(plugin)  # a valid schema, and x-artifacts (file kinds) well formed
    hooks = list(plugin.glob("on_Snapshot__*"))
    assert hooks, f"{plugin.name} has no hook"
    assert (plugin / "tests").is_dir(), f"{plugin.name} has no tests/"


def test_every_subject_has_a_model_and_a_stream() -> None:
    streamed = {s for spec in STREAMS for s in spec.subjects}
    assert set(MODELS) == streamed
    for subject, model in MODELS.items():
        assert issubclass(model, Message), subject


def test_only_the_writer_writes_sqlite() -> None:
    """Outside services/writer, SQLite is only ever opened read-only."""
    opener = re.compile(r"sqlite3\.connect\((?P<args>[^)]*)\)")
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        if "writer" in path.parts:
            continue
        for m in opener.finditer(path.read_text()):
            assert "mode=ro" in m.group("args"), f"{path}: writable sqlite connection"


def test_product_code_never_reads_the_reference_folder() -> None:
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        assert "../shared" not in path.read_text(), path


ON_THE_COMMON_ENTRY = ("poller", "writer", "archiver", "media", "web")
"""Services started through shared.lifecycle.Service: all of them."""


@pytest.mark.parametrize("service", ON_THE_COMMON_ENTRY)
def test_services_start_one_way(service: str) -> None:
    module = importlib.import_module(f"services.{service}.service")
    assert isinstance(module.SERVICE, Service), f"services/{service}/service.py: SERVICE"
    assert module.SERVICE.name == service
    for path in (REPO / "services" / service).rglob("*.py"):
        text = path.read_text()
        assert "isinstance(ctx.settings" not in text, f"{path}: the context is typed"
        assert "lifecycle.main(" not in text, path


def test_every_long_running_service_is_listed() -> None:
    assert set(SERVICES) - {"supervisor"} == set(ON_THE_COMMON_ENTRY)


SAME_NAME_EVERYWHERE = {
    "__init__.py": "a package's own module",
    "__main__.py": "what `python -m <package>` runs",
    "service.py": "a service's SERVICE and body (shared/capture/service.py: a capture worker's)",
    "settings.py": "a package's settings class (shared/settings.py: the settings all share)",
    "metrics.py": "a package's Prometheus metrics",
    "app.py": "an application object: the web's UI (services/web/app.py), its replay origin "
    "(services/web/replay/app.py), the `dla` command (services/supervisor/cli/app.py)",
}
"""Module names that mean the same thing in every package they are in (issue 33, item 4):
the package around them says which."""


def _product_packages() -> list[Path]:
    """The top-level packages of product code: `shared`, and each service."""
    return [REPO / "shared", *(REPO / "services" / s for s in SERVICES)]


def test_no_two_modules_of_one_package_share_a_name() -> None:
    """A module's name says which module it is, without its folder: `evidence.py` in five
    folders of one package meant five things (issue 33, item 4)."""
    shared_names: dict[str, set[str]] = {}
    for top in _product_packages():
        by_name: dict[str, set[str]] = {}
        for path in top.rglob("*.py"):
            if "tests" in path.relative_to(REPO).parts:
                continue
            by_name.setdefault(path.name, set()).add(str(path.relative_to(REPO)))
        for name, paths in by_name.items():
            if len(paths) > 1 and name not in SAME_NAME_EVERYWHERE:
                shared_names[name] = paths
    assert not shared_names, (
        "rename so that each name says which (or, if it is a per-package convention like "
        f"settings.py, list it in SAME_NAME_EVERYWHERE with why): {shared_names}"
    )
