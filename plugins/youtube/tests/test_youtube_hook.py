"""The youtube plugin: its one API step is yt-dlp's (run for real against a local page in
tests/platforms/test_ytdlp.py); here the hooks' settings and their refusal of other links."""

from __future__ import annotations

from pathlib import Path

from shared.hooks.config import hook_settings, load_plugin_config
from shared.hooks.records import ArchiveResultRecord
from testkit.platform_server import PLUGINS, PlatformServer, run_hook


def test_it_runs_for_youtube_links_only_and_asks_no_comments_by_default() -> None:
    config = load_plugin_config(PLUGINS / "youtube")
    assert config.runs_for("https://youtu.be/aBcDeFgHiJk") and not config.runs_for(
        "https://x.com/a"
    )
    settings = hook_settings(str(PLUGINS / "youtube" / "on_Snapshot__15_youtube.py"), env={})
    assert settings["YOUTUBE_COMMENTS"] == 0


def test_a_channel_page_is_no_post(tmp_path: Path) -> None:
    with PlatformServer() as server:
        code, records, _ = run_hook("youtube", "youtube", "https://www.youtube.com/@someone",
                                    tmp_path, server)  # fmt: skip
    final = [r for r in records if isinstance(r, ArchiveResultRecord)][-1]
    assert code == 0 and final.status == "skipped"
