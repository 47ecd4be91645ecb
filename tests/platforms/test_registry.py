"""A platform is one unit: its facts live in `shared/platforms/facts/<platform>_site.py`, and the
rest of the product learns them from `shared.platforms.registry`. So no module outside
`shared/platforms` spells a platform's host in its code (docstrings and comments may name
one), and every platform has its facts, its chain and its plugin."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from shared.hooks.config import load_plugin_config
from shared.platforms.chains import PLATFORMS
from shared.platforms.registry import SITES

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("shared", "services", "plugins")
HOSTS = sorted({h for site in SITES.values() for h in site.hosts}, key=len, reverse=True)
SPELLED = re.compile(
    r"(?<![\w-])(?:[\w-]+\.)*(" + "|".join(re.escape(h) for h in HOSTS) + r")(?![\w-]|\.\w)",
    re.I,
)


def product_files() -> list[Path]:
    """The product's Python files outside shared/platforms (tests left out)."""
    found = []
    for top in PRODUCT:
        for path in (REPO / top).rglob("*.py"):
            parts = path.relative_to(REPO).parts
            if parts[:2] == ("shared", "platforms") or "tests" in parts:
                continue
            found.append(path)
    return sorted(found)


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions, and of
    the strings that follow an assignment (attribute docstrings)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                found.add(id(stmt.value))
    return found


def spelled_hosts(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    return [
        f"{where}:{node.lineno}: {m.group(0)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for m in SPELLED.finditer(node.value)
    ]


def test_the_check_finds_a_spelled_host(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Docs name old.reddit.com."""\nHOST = "old.reddit.com"\nX = "t.co/x"\n')
    assert [s.split(": ")[-1] for s in spelled_hosts(sample)] == ["old.reddit.com", "t.co"]
    sample.write_text('OK = ("reddit.community", "microsoft.com", "at.com")\n')
    assert spelled_hosts(sample) == []


def test_no_module_outside_shared_platforms_spells_a_platform_host() -> None:
    found = [hit for path in product_files() for hit in spelled_hosts(path)]
    assert not found, "read it from shared.platforms.registry:\n" + "\n".join(found)


@pytest.mark.parametrize("name", sorted(SITES))
def test_every_platform_has_its_facts_chain_and_plugin(name: str) -> None:
    assert name in PLATFORMS, f"shared/platforms/{name}.py is not in chains.PLATFORMS"
    assert PLATFORMS[name].title == SITES[name].title
    config = load_plugin_config(REPO / "plugins" / name)
    assert config.schema.get("x-platform") is True, f"plugins/{name}/config.json"
    assert config.domains or SITES[name].instances, f"{name}: no links of its own"
    assert f"{config.prefix}_STEPS" in config.properties
