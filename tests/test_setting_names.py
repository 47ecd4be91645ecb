"""A mistyped setting is said at start (shared/setting_names.py), and no real setting of any
service or plugin is ever taken for a mistyped one by another service."""

from __future__ import annotations

import ast
import importlib
import logging
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from shared.hooks.config import setting_names
from shared.hooks.discovery import plugin_dirs
from shared.lifecycle import Service
from shared.setting_names import looks_like, names_of, near_misses

REPO = Path(__file__).resolve().parents[1]
SERVICES = ("poller", "writer", "archiver", "media", "web")

INTERNAL = {
    "DLA_PORT_RANGE", "DLA_WEB_LIMITS_ADDRESS", "DLA_WEB_LIMITS_KEY", "DLA_WEB_PARENT_PID",
    "DLA_WEB_SHARES_FILE", "DLA_WEB_WORKER_SLOT", "PAGE_SOCKET", "PROMETHEUS_MULTIPROC_DIR",
    "DLA_DEBUG", "WEB_HOST", "WEB_PORT", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_",
}  # fmt: skip
"""Variables the product sets or reads outside a settings class."""

ELSEWHERE = {
    "PATH", "HOME", "HOSTNAME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "SHLVL", "TERM",
    "LANG", "LANGUAGE", "LC_ALL", "TZ", "TMPDIR", "XDG_RUNTIME_DIR", "DISPLAY", "MAIL",
    "PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
    "PYTHON_VERSION", "PYTHON_SHA256", "PIP_NO_CACHE_DIR", "VIRTUAL_ENV", "GPG_KEY",
    "PLAYWRIGHT_BROWSERS_PATH", "NODE_OPTIONS", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_PROFILE", "NATS_TOKEN",
    "NATS_PASSWORD", "NATS_CREDS", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
    "container", "CI", "GITHUB_ACTIONS", "RUNNER_TEMP", "PODMAN_SYSTEMD_UNIT",
    "COMPOSE_PROJECT_NAME", "DEBIAN_FRONTEND", "FONTCONFIG_FILE", "CHROME_PATH",
}  # fmt: skip
"""What an environment commonly holds that is not ours: none of it is said."""


def settings_classes() -> list[type[BaseSettings]]:
    """Every settings class of the product: each class in services/ and shared/ whose bases
    include a `...Settings` (found by reading the source, then imported)."""
    found: list[type[BaseSettings]] = []
    for path in [*(REPO / "services").rglob("*.py"), *(REPO / "shared").rglob("*.py")]:
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text())
        names = [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            and any(ast.unparse(b).endswith("Settings") for b in node.bases)
        ]
        if names:
            module = importlib.import_module(".".join(path.relative_to(REPO).with_suffix("").parts))
            found += [c for n in names if issubclass(c := getattr(module, n), BaseSettings)]
    return found


def every_setting() -> set[str]:
    """Every name the product reads from the environment."""
    names = set(INTERNAL) | setting_names(plugin_dirs([REPO / "plugins"]).values())
    for cls in settings_classes():
        names |= names_of(cls)
    return names


def service_of(name: str) -> Service:  # type: ignore[type-arg]
    return importlib.import_module(f"services.{name}.service").SERVICE  # type: ignore[no-any-return]


def test_slips_are_told_from_other_names() -> None:
    known = {"POLL_INTERVAL_SECONDS", "ARCHIVER_CONCURRENCY", "TSA_URLS", "SCREENSHOT_SCALE"}
    env = {
        "POLL_INTERVAL": "5", "archiver_concurency": "4", "TSA_URL": "http://tsa",
        "SCREENSHOT_SCLAE": "0.5", "poll_interval_seconds": "5", "PATH": "/bin", "SCREENSHOT": "",
    }  # fmt: skip
    assert near_misses(env, known) == {
        "POLL_INTERVAL": "POLL_INTERVAL_SECONDS",
        "archiver_concurency": "ARCHIVER_CONCURRENCY",
        "TSA_URL": "TSA_URLS",
        "SCREENSHOT_SCLAE": "SCREENSHOT_SCALE",
    }
    assert not looks_like("SCREENSHOT_SCALE", "SCREENSHOT_SCALE")


def test_no_setting_anywhere_is_taken_for_a_slip_by_any_service(tmp_path: Path) -> None:
    """A service knows only its own settings: that is enough only while no name the product
    reads, nor one an environment commonly holds, looks like another service's setting."""
    everything = every_setting()
    assert {"POLL_INTERVAL_SECONDS", "ADMIN_TOKENS", "SCREENSHOT_SCALE"} <= everything
    for name in SERVICES:
        service = service_of(name)
        settings = service.settings()  # type: ignore[call-arg]
        known = names_of(type(settings)) | set(service.more_setting_names(settings))
        assert near_misses(everything | ELSEWHERE, known) == {}, name


def test_a_service_says_a_slip_at_start(caplog: pytest.LogCaptureFixture) -> None:
    archiver = service_of("archiver")
    settings = archiver.settings()  # type: ignore[call-arg]
    env = {"ARCHIVER_CONCURENCY": "4", "SCREENSHOT_SCALLE": "0.5", "MEDIA_MAX_ITEMS": "3"}
    with caplog.at_level(logging.WARNING):
        found = archiver.warn_near_misses(settings, env)
    assert found == {
        "ARCHIVER_CONCURENCY": "ARCHIVER_CONCURRENCY",
        "SCREENSHOT_SCALLE": "SCREENSHOT_SCALE",
    }
    assert (
        "SCREENSHOT_SCALLE is not a setting and is ignored: did you mean SCREENSHOT_SCALE?"
        " (archiver)" in caplog.text
    )


def test_a_refused_setting_is_said_in_a_line_and_a_secrets_value_never() -> None:
    from pydantic import ValidationError
    from pydantic_settings import BaseSettings

    from shared.setting_names import refused

    class Some(BaseSettings):
        poll_interval_seconds: float = 1.0
        wayback_secret_key: int = 0

    env = {"POLL_INTERVAL_SECONDS": "x" * 500, "WAYBACK_SECRET_KEY": "hunter2-hunter2"}
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        with pytest.raises(ValidationError) as caught:
            Some()
    lines = refused(caught.value)
    assert lines[0].startswith("POLL_INTERVAL_SECONDS='xxx") and "...x" in lines[0]
    assert len(lines[0]) < 200 and "valid number" in lines[0]
    assert lines[1].startswith("WAYBACK_SECRET_KEY (its value not shown): ")
    assert "hunter2" not in " ".join(lines)


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("LOG_LEVEL", "loud", "a logging level is one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("RSS_URL", "ftp://forum.example/posts.rss", "is not a feed's URL"),
        ("FEEDS", "https://a.example/posts.rss, notaurl", "'notaurl' is not a feed's URL"),
    ],
)
def test_values_that_could_only_fail_later_are_refused_at_start(
    name: str, value: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A level logging refuses (a traceback at start), a feed that is no http(s) URL (every
    poll would fail): each refused with the setting's name and why."""
    from pydantic import ValidationError

    from services.poller.settings import PollerSettings
    from shared.setting_names import refused

    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as caught:
        PollerSettings()
    (line,) = refused(caught.value)
    assert line.startswith(f"{name}=") and why in line


def test_a_logging_level_in_any_case_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    from shared.settings import CommonSettings

    monkeypatch.setenv("LOG_LEVEL", " debug ")
    assert CommonSettings().log_level == "DEBUG"


def test_settings_that_do_nothing_as_given_are_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An RSS_URL that FEEDS leaves out; TSA_URLS while the evidence is off."""
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FEEDS", "https://a.example/posts.rss")
    monkeypatch.setenv("RSS_URL", "https://b.example/posts.rss")
    poller = service_of("poller")
    assert poller.more_setting_problems(poller.settings()).idle == [  # type: ignore[call-arg]
        "RSS_URL='https://b.example/posts.rss' is not watched: FEEDS lists the feeds (add it there)"
    ]
    monkeypatch.setenv("FEEDS", "https://a.example/posts.rss,https://b.example/posts.rss")
    assert poller.more_setting_problems(poller.settings()).idle == []  # type: ignore[call-arg]
    archiver = service_of("archiver")
    monkeypatch.setenv("TSA_URLS", "http://tsa.example/")
    assert archiver.more_setting_problems(archiver.settings()).idle == []  # type: ignore[call-arg]
    monkeypatch.setenv("EVIDENCE_ENABLED", "false")
    assert archiver.more_setting_problems(archiver.settings()).idle == [  # type: ignore[call-arg]
        "TSA_URLS is not asked: EVIDENCE_ENABLED=false makes no manifest to timestamp"
    ]
