"""config.json: defaults under the env, x-fallback, TIMEOUT fallback, validation, the off switch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.errors import ConfigError
from shared.hooks.config import load_plugin_config
from tests.hooks.support import FIXTURES, base_env, capture


def env_of(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "cfg_py" / "env.json").read_text())


async def test_defaults_are_layered_under_the_env(tmp_path: Path) -> None:
    await capture(tmp_path, ["cfg_py"], env=base_env(CFG_PY_GREETING="bonjour"))
    seen = env_of(tmp_path)
    env = seen["env"]
    assert env["CFG_PY_GREETING"] == "bonjour"  # the env wins over the default
    assert env["CFG_PY_RETRIES"] == "2" and env["CFG_PY_VERBOSE"] == "false"
    assert json.loads(env["CFG_PY_EXTRA_ARGS"]) == ["--quiet"]
    assert env["CFG_PY_TIMEOUT"] == "10" and env["CFG_PY_ENABLED"] == "true"  # TIMEOUT=10
    assert env["CFG_PY_USER_AGENT"] == "dla/1"
    assert "--timeout=10" in seen["argv"] and "--snapshot-id=snap-1" in seen["argv"]
    assert "--url=https://example.org/a?b=c" in seen["argv"]
    assert any(a.startswith("--plugins=") and "cfg_py" in a for a in seen["argv"])


async def test_x_fallback_and_plugin_timeout_and_extra_args(tmp_path: Path) -> None:
    env = base_env(USER_AGENT="Mozilla/5.0", CFG_PY_TIMEOUT="7.5", CFG_PY_VERBOSE="yes")
    await capture(tmp_path, ["cfg_py"], env=env, extra_args=["--depth=1", "--enable-thing"])
    seen = env_of(tmp_path)
    assert seen["env"]["CFG_PY_USER_AGENT"] == "Mozilla/5.0"
    assert seen["env"]["CFG_PY_TIMEOUT"] == "7.5" and "--timeout=7.5" in seen["argv"]
    assert seen["env"]["CFG_PY_VERBOSE"] == "true"
    assert seen["argv"][-2:] == ["--depth=1", "--enable-thing"]


async def test_plugin_default_timeout_applies_without_timeout_env(tmp_path: Path) -> None:
    env = base_env()
    del env["TIMEOUT"]
    await capture(tmp_path, ["cfg_py", "cfg_sh"], env=env)
    assert env_of(tmp_path)["env"]["CFG_PY_TIMEOUT"] == "30"
    # a plugin that declares no timeout gets 60 s, and the sh hook sees its settings too
    text = (tmp_path / "out" / "cfg_sh" / "env.txt").read_text()
    assert "mode=fast timeout=60 enabled=true" in text


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CFG_PY_RETRIES": "9"}, "CFG_PY_RETRIES"),
        ({"CFG_PY_RETRIES": "many"}, "CFG_PY_RETRIES"),
        ({"CFG_PY_EXTRA_ARGS": "[1, 2]"}, "CFG_PY_EXTRA_ARGS"),
        ({"CFG_PY_TIMEOUT": "0"}, "CFG_PY_TIMEOUT"),
    ],
)
async def test_invalid_setting_fails_the_hook_without_retry(
    tmp_path: Path, env: dict, message: str
) -> None:
    outcome, _ = await capture(tmp_path, ["cfg_py", "after_sh"], env=base_env(**env))
    hook = outcome.result("cfg_py")
    assert hook.result.status == "failed" and hook.result.error_code == "E_CFG_PY_CONFIG"
    assert message in hook.result.output_str and not hook.retry
    assert not (tmp_path / "out" / "cfg_py" / "env.json").exists()  # never ran
    assert outcome.result("after_sh").result.status == "succeeded"


async def test_enum_and_broken_schema(tmp_path: Path) -> None:
    outcome, _ = await capture(tmp_path, ["cfg_sh", "cfg_bad"], env=base_env(CFG_SH_MODE="warp"))
    assert outcome.result("cfg_sh").result.error_code == "E_CFG_SH_CONFIG"
    bad = outcome.result("cfg_bad").result
    assert bad.error_code == "E_CFG_BAD_CONFIG" and "not a valid JSON Schema" in bad.output_str
    assert not (tmp_path / "out" / "cfg_bad" / "ran.txt").exists()


@pytest.mark.parametrize("value", ["false", "0", "no", "off", "False"])
async def test_enabled_switch_turns_a_plugin_off(tmp_path: Path, value: str) -> None:
    outcome, rec = await capture(
        tmp_path, ["cfg_py", "ok_sh"], env=base_env(CFG_PY_ENABLED=value, OK_SH_ENABLED="true")
    )
    assert [h.hook.plugin for h in outcome.hooks] == ["ok_sh"]
    assert not rec.of("cfg_py")


def test_plugin_config_unit() -> None:
    cfg = load_plugin_config(FIXTURES / "cfg_py")
    assert cfg.prefix == "CFG_PY"
    assert cfg.timeout({"TIMEOUT": "3"}) == 3.0 and cfg.timeout({}) == 30.0
    assert cfg.enabled({}) and not cfg.enabled({"CFG_PY_ENABLED": "off"})
    none = load_plugin_config(FIXTURES / "ok_sh")  # no config.json: nothing declared
    assert none.timeout({}) == 60.0 and none.timeout({"OK_SH_TIMEOUT": "2"}) == 2.0
    with pytest.raises(ConfigError):
        none.timeout({"OK_SH_TIMEOUT": "-1"})
    with pytest.raises(ConfigError):
        load_plugin_config(FIXTURES / "cfg_bad")


def test_values_checked_before_are_judged_the_same_again() -> None:
    """Each distinct set of values is validated once per plugin: a bad value still fails
    every resolve, a good one passes, in any order."""
    cfg = load_plugin_config(FIXTURES / "cfg_py")
    before = len(cfg._checked)  # the loaded config is shared with the other tests
    for _ in range(2):
        with pytest.raises(ConfigError, match="CFG_PY_RETRIES"):
            cfg.resolve({"CFG_PY_RETRIES": "9"})
        assert cfg.resolve({"CFG_PY_RETRIES": "3"})["CFG_PY_RETRIES"] == 3
        assert cfg.resolve({})["CFG_PY_RETRIES"] == 2
    assert len(cfg._checked) - before <= 3  # three value sets, each checked once


def _plugin(tmp_path: Path, name: str, schema: dict) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(schema))
    return folder


def test_a_plugin_declares_the_kinds_of_its_files(tmp_path: Path) -> None:
    folder = _plugin(
        tmp_path,
        "shots",
        {
            "type": "object",
            "properties": {},
            "x-artifacts": {"screenshot.png": "screenshot", "page*.pdf": "pdf", "*.png": "image"},
        },
    )
    config = load_plugin_config(folder)
    assert config.artifact_kind("screenshot.png") == "screenshot"  # first match wins
    assert config.artifact_kind("other.png") == "image"
    assert config.artifact_kind("page-1.pdf") == "pdf"
    assert config.artifact_kind("on_Snapshot__50_x.py.stderr.log") == "log"
    assert config.artifact_kind("notes.txt") == "shots_file"


@pytest.mark.parametrize("bad", [["a.png"], {"a.png": 3}, {"a.png": ""}])
def test_a_bad_artifact_declaration_is_a_config_error(tmp_path: Path, bad: object) -> None:
    folder = _plugin(tmp_path, "bad", {"type": "object", "properties": {}, "x-artifacts": bad})
    with pytest.raises(ConfigError, match="x-artifacts"):
        load_plugin_config(folder)


def test_a_worker_names_every_plugin_that_refuses_its_settings() -> None:
    from shared.capture.settings import REPO_PLUGINS
    from shared.hooks.config import setting_errors
    from shared.hooks.discovery import plugin_dirs

    dirs = plugin_dirs([REPO_PLUGINS])
    assert setting_errors(dirs, {}) == []  # every default is valid
    bad = {"SCREENSHOT_SCALE": "2", "FETCH_TIMEOUT": "soon"}
    errors = setting_errors(dirs, bad)
    assert len(errors) == 2, errors
    assert any(e.startswith("screenshot: SCREENSHOT_SCALE: 2.0 is greater than") for e in errors)
    assert "fetch: FETCH_TIMEOUT='soon' is not a number" in errors
