"""A plugin's defaults live in its config.json alone: hooks read their settings through
`shared.hooks.config.hook_settings`, and no hook carries a default of its own."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from shared.hooks.config import hook_settings, load_plugin_config, read_schema
from shared.settings import CommonSettings

REPO = Path(__file__).resolve().parents[2]
PLUGINS = sorted(p for p in (REPO / "plugins").iterdir() if (p / "config.json").is_file())


def hook_code(plugin: Path) -> list[Path]:
    """The plugin's own Python files (hooks and their helpers), its tests left out."""
    return sorted(p for p in plugin.rglob("*.py") if "tests" not in p.relative_to(plugin).parts)


def declared(plugin: Path) -> dict[str, Any]:
    props: dict[str, Any] = read_schema(plugin / "config.json")["properties"]
    return props


def _is_env_read(call: ast.Call) -> bool:
    """os.environ.get(...) or os.getenv(...)."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return False
    if f.attr == "getenv":
        return True
    return f.attr == "get" and isinstance(f.value, ast.Attribute) and f.value.attr == "environ"


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_no_hook_carries_its_own_default(plugin: Path) -> None:
    """No environment read with a fallback value, and every setting config.json declares is
    read only as `settings["NAME"]` (never handed to a helper that could add a default)."""
    names = set(declared(plugin))
    found = []
    for path in hook_code(plugin):
        tree = ast.parse(path.read_text())
        keys = {
            id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)
        }  # the constants used as a subscript: settings["NAME"]
        for node in ast.walk(tree):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and _is_env_read(node) and len(node.args) > 1:
                found.append(f"{where}: environment read with a default")
            if (
                isinstance(node, ast.BoolOp)
                and isinstance(node.op, ast.Or)
                and isinstance(node.values[0], ast.Call)
                and _is_env_read(node.values[0])
                and any(isinstance(v, ast.Constant) and v.value for v in node.values[1:])
            ):
                found.append(f"{where}: environment read `or` a default")
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in keys:
                found.append(f"{where}: {node.value} read other than as settings[...]")
    assert not found, found


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_shared_settings_have_one_default(plugin: Path) -> None:
    """A setting every service reads (USER_AGENT, ALLOW_PRIVATE_TARGETS) that a plugin
    declares too has the services' default."""
    common = CommonSettings.model_fields
    for name, spec in declared(plugin).items():
        field = common.get(name.lower())
        if field is not None:
            assert spec["default"] == field.default, f"{plugin.name}: {name}"


def test_hook_settings_are_the_environment_over_config_defaults(tmp_path: Path) -> None:
    hook = REPO / "plugins" / "navigate" / "on_Snapshot__21_navigate.py"
    defaults = hook_settings(str(hook), env={})
    assert defaults["NAVIGATE_SETTLE_MS"] == declared(hook.parent)["NAVIGATE_SETTLE_MS"]["default"]
    assert defaults["NAVIGATE_RESPECT_NO_ARCHIVE"] is True
    given = hook_settings(
        str(hook), env={"NAVIGATE_SETTLE_MS": "10", "FETCH_RESPECT_NO_ARCHIVE": "false"}
    )
    assert given["NAVIGATE_SETTLE_MS"] == 10
    assert given["NAVIGATE_RESPECT_NO_ARCHIVE"] is False  # its x-fallback
    # what the runner lays into a hook's environment reads back the same
    env, _ = load_plugin_config(hook.parent).hook_env({"NAVIGATE_QUIET_MS": "50"})
    assert hook_settings(str(hook), env=env)["NAVIGATE_QUIET_MS"] == 50
