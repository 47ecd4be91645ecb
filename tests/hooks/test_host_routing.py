"""Which pre-warmed host a Python hook is forked from: the light one when it holds every
module the hook imports (read from the hook's source, its plugin's own modules included),
else the full one; and a hook behaves the same from either."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.hooks.hook_imports import UNKNOWN, held_by, imported_modules
from shared.hooks.host import HostPool, close_shared_host, shared_host
from tests.hooks.support import base_env, capture

REPO = Path(__file__).resolve().parents[2]


def hook(tmp_path: Path, source: str, name: str = "on_Snapshot__10_h.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def test_imports_are_read_at_any_depth_and_through_the_plugins_own_modules(
    tmp_path: Path,
) -> None:
    hook(tmp_path, "import base64\ndef f():\n    from xml.dom import minidom\n", "helper.py")
    path = hook(tmp_path, "import json\nimport helper\nfrom shared.hooks import records\n")
    assert imported_modules(path) == {
        "json", "base64", "xml.dom", "xml.dom.minidom", "shared.hooks", "shared.hooks.records"
    }  # fmt: skip
    assert imported_modules(hook(tmp_path, "from . import x\n", "rel.py")) == {UNKNOWN}
    assert imported_modules(tmp_path / "missing.py") == {UNKNOWN}


def test_a_name_is_held_when_loaded_and_a_submodule_only_when_loaded(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "sub.py").write_text("")
    modules, packages = frozenset({"json", "pkg"}), {"pkg": [str(pkg)]}
    assert held_by(frozenset({"json", "pkg", "pkg.name"}), modules, packages)
    assert not held_by(frozenset({"pkg", "pkg.sub"}), modules, packages)  # not yet imported
    assert held_by(frozenset({"pkg.sub"}), modules | {"pkg.sub"}, packages)
    assert not held_by(frozenset({"lxml"}), modules, packages)
    assert not held_by(frozenset({UNKNOWN}), modules, packages)


@pytest.fixture
async def pool() -> AsyncIterator[HostPool]:
    close_shared_host()
    started = await shared_host()
    assert started is not None and started.light is not None and started.full is not None
    try:
        yield started
    finally:
        close_shared_host()


@pytest.mark.parametrize(
    ("plugin_hook", "light"),
    [
        ("navigate/on_Snapshot__21_navigate.py", True),
        ("screenshot/on_Snapshot__51_screenshot.py", True),
        ("dom/on_Snapshot__53_dom.py", True),
        ("readable/on_Snapshot__82_readable.py", False),
        ("metadata/on_Snapshot__81_metadata.py", False),
        ("fetch/on_Snapshot__41_fetch.py", False),
    ],
)
async def test_the_browsers_hooks_go_to_the_light_host_the_readers_to_the_full_one(
    pool: HostPool, plugin_hook: str, light: bool
) -> None:
    path = REPO / "plugins" / plugin_hook
    if not path.exists():
        pytest.skip(f"{plugin_hook} is not in this tree")
    assert (pool.host_for(path) is pool.light) == light


async def test_a_hook_runs_alike_from_either_host(tmp_path: Path, pool: HostPool) -> None:
    """The same hook, once importing only what the light host holds, once also a module
    only the full host holds: both succeed with the same interpreter facts."""
    facts = (
        "import json, os, sys\n{extra}"
        "json.dump({{'main': __name__, 'argv0': sys.argv[0], 'cwd': os.getcwd(),"
        " 'path0': sys.path[0]}}, open('facts.json', 'w'))\n"
        "print(json.dumps({{'type': 'ArchiveResult', 'status': 'succeeded'}}))\n"
    )
    for name, extra in (("lite", ""), ("heavy", "import shared.content.article\n")):
        plugin = tmp_path / "plugins" / name
        plugin.mkdir(parents=True)
        path = plugin / f"on_Snapshot__10_{name}.py"
        path.write_text(facts.format(extra=extra))
        expected = pool.light if name == "lite" else pool.full
        assert pool.host_for(path) is expected
        outcome, _ = await capture(
            tmp_path / name, None, env=base_env(TIMEOUT="60"), plugins_dirs=[plugin.parent]
        )
        assert outcome.hooks[0].result.status == "succeeded", outcome.hooks[0].result
        got = json.loads((tmp_path / name / "out" / name / "facts.json").read_text())
        assert got["main"] == "__main__" and got["path0"] == str(plugin)
        assert got["argv0"] == str(path) and got["cwd"] == str(tmp_path / name / "out" / name)
    assert pool.light is not None and pool.light.usable
    assert pool.full is not None and pool.full.usable


async def test_a_dead_light_host_is_replaced_and_the_full_one_kept(pool: HostPool) -> None:
    assert pool.light is not None
    full = pool.full
    pool.light.close()
    again = await shared_host()
    assert again is not None and again.full is full
    assert again.light is not None and again.light.usable
