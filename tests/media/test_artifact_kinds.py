"""The media plugin declares its artifact kinds (x-artifacts in its config.json)."""

from __future__ import annotations

from shared.capture.settings import REPO_PLUGINS
from shared.hooks.config import load_plugin_config


def test_media_files_get_the_kinds_the_plugin_declares() -> None:
    config = load_plugin_config(REPO_PLUGINS / "media")
    kinds = {
        name: config.artifact_kind(name)
        for name in (
            "abc.mp4", "abc.webm", "abc.m4a", "abc.jpg", "abc.webp", "abc.en.vtt",
            "abc.info.json", "abc.description", "on_Snapshot__63_media.bg.py.stderr.log",
        )
    }  # fmt: skip
    assert kinds == {
        "abc.mp4": "video",
        "abc.webm": "video",
        "abc.m4a": "audio",
        "abc.jpg": "thumbnail",
        "abc.webp": "thumbnail",
        "abc.en.vtt": "subtitles",
        "abc.info.json": "info",
        "abc.description": "info",
        "on_Snapshot__63_media.bg.py.stderr.log": "log",
    }
