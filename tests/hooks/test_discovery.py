"""Hook discovery: names, steps, .bg, unnumbered last, filters, the first plugins dir wins."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from shared.hooks.discovery import parse_hook_name
from shared.hooks.snapshot_runner import discover_hooks
from tests.hooks.support import FIXTURES


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("on_Snapshot__00_this_would_run_first.sh", (0, "00", False)),
        ("on_Snapshot__05_start_ytdlp_download.bg.sh", (0, "05", True)),
        ("on_Snapshot__53_media.bg.py", (5, "53", True)),
        ("on_Snapshot__10_chrome_tab_opened.js", (1, "10", False)),
        ("on_Snapshot__99_compiled", (9, "99", False)),
        ("on_Snapshot__title.py", (None, "", False)),
        ("on_Snapshot__63_media.bg", (6, "63", True)),
        ("on_Crawl__10_x.py", None),
        ("on_Snapshot__10_x.py~", None),
        ("on_Snapshot__10_x.pyc", None),
        ("helper.py", None),
    ],
)
def test_parse_hook_name(name: str, parsed: tuple | None) -> None:
    assert parse_hook_name(name, "Snapshot") == parsed


def make(root: Path, plugin: str, *names: str) -> None:
    (root / plugin).mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / plugin / name).write_text("#!/bin/sh\n")


def test_order_filters_and_override(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make(a, "wget", "on_Snapshot__61_wget.py", "config.json", "on_Crawl__10_x.py")
    make(a, "title", "on_Snapshot__54_title.js", "on_Snapshot__unnumbered.sh")
    make(a, "chrome", "on_Snapshot__10_launch.bg.js", "on_Snapshot__70_close.js")
    make(a, "media", "on_Snapshot__63_media.bg.py")
    (a / "media" / "tests").mkdir()
    make(b, "media", "on_Snapshot__01_should_not_win.sh")  # a's media wins
    make(b, "extra", "on_Snapshot__05_extra.sh")
    make(a, ".hidden", "on_Snapshot__00_x.sh")
    caplog.set_level(logging.WARNING)
    hooks = discover_hooks([a, b])
    assert [h.key for h in hooks] == [
        "extra/on_Snapshot__05_extra.sh",
        "chrome/on_Snapshot__10_launch.bg.js",
        "title/on_Snapshot__54_title.js",
        "wget/on_Snapshot__61_wget.py",
        "media/on_Snapshot__63_media.bg.py",
        "chrome/on_Snapshot__70_close.js",
        "title/on_Snapshot__unnumbered.sh",
    ]
    assert [h.step for h in hooks] == [0, 1, 5, 6, 6, 7, None]
    assert [h.background for h in hooks] == [False, True, False, False, True, False, False]
    assert "unnumbered" in caplog.text
    assert [h.key for h in discover_hooks([a, b], only=["title"])] == [
        "title/on_Snapshot__54_title.js",
        "title/on_Snapshot__unnumbered.sh",
    ]
    assert (
        len(
            discover_hooks(
                [a, b], only=["on_Snapshot__70_close.js", "wget/on_Snapshot__61_wget.py"]
            )
        )
        == 2
    )
    assert [h.key for h in discover_hooks([a, b], "Crawl")] == ["wget/on_Crawl__10_x.py"]
    off = discover_hooks([a, b], enabled_env={"CHROME_ENABLED": "false", "TITLE_ENABLED": "true"})
    assert "chrome" not in {h.plugin for h in off} and "title" in {h.plugin for h in off}
    assert discover_hooks([tmp_path / "missing"]) == []


def test_fixture_plugins_discover() -> None:
    hooks = discover_hooks([FIXTURES])
    assert hooks == sorted(hooks, key=lambda h: h.sort_key)
    assert all(h.path.is_absolute() and h.path.parent.name == h.plugin for h in hooks)


def test_a_plugin_runs_only_for_the_links_of_its_domains(tmp_path: Path) -> None:
    make(tmp_path, "x", "on_Snapshot__15_x.py")
    make(tmp_path, "any", "on_Snapshot__16_any.py")
    (tmp_path / "x" / "config.json").write_text('{"properties": {}, "x-domains": ["x.com"]}')
    names = [
        [h.plugin for h in discover_hooks([tmp_path], url=url)]
        for url in ("https://mobile.x.com/a/status/1", "https://example.org/", None)
    ]
    assert names == [["x", "any"], ["any"], ["x", "any"]]
