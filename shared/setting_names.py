"""A mistyped setting is said, not silently ignored.

Settings are environment variables, and the environment holds much that is not ours (PATH,
HOME, what a container sets), so an unknown name cannot be an error. But a name that is not a
setting and looks like one (`POLL_INTERVAL` for `POLL_INTERVAL_SECONDS`, `ARCHIVER_CONCURENCY`,
`TSA_URL` for `TSA_URLS`) is almost surely meant as that setting and does nothing: each service
logs a warning at start (shared.lifecycle) naming the setting it looks like. A value a
setting refuses (`POLL_INTERVAL_SECONDS=abc`) stops the service at start with one line a
setting instead of a traceback. Both are left in the service's start report
(`run/<service>.settings.json`), which `dla up` prints in the terminal.

A service knows only its own settings, so it can only tell a name near one of them. That is
safe because no two real settings of the product are near each other in this sense
(tests/test_setting_names.py checks every settings class and plugin against every service):
a name near one of a service's settings is never another service's setting.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings

from shared import typed_text
from shared.logs import redact, setup_logging
from shared.settings import CommonSettings

log = logging.getLogger(__name__)

EXIT_CONFIG = 78
"""A service's exit code when its settings are refused (sysexits.h EX_CONFIG): starting it
again will not mend it (shared.lifecycle; `dla up` says so)."""
SettingsT = TypeVar("SettingsT", bound=BaseSettings)
SIMILAR = 0.9
"""How alike (difflib's ratio) a name must be to a setting to be taken for a typo of it."""


def names_of(model: type[BaseSettings]) -> set[str]:
    """The environment variables a settings class reads (upper case; case is ignored)."""
    names: set[str] = set()
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias
        names.add((alias if isinstance(alias, str) else field_name).upper())
    return names


def looks_like(given: str, setting: str) -> bool:
    """Whether `given` (not a setting) reads as a slip for `setting`: a letter or two off, the
    plural for the singular or back, or the setting without its last words (a unit, `_URL`)."""
    if given == setting:
        return False
    if given + "S" == setting or setting + "S" == given:
        return True
    if "_" in given and setting.startswith(given + "_"):
        return True
    if abs(len(given) - len(setting)) > 2:
        return False
    alike = difflib.SequenceMatcher(None, given, setting)  # its cheap upper bounds first
    return (
        alike.real_quick_ratio() >= SIMILAR
        and alike.quick_ratio() >= SIMILAR
        and alike.ratio() >= SIMILAR
    )


def near_misses(env: Mapping[str, str] | Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """Each name of `env` that is no setting of `known` but looks like one: {name as given:
    the setting it looks like} (the first in sorted order when several do)."""
    known_upper = {name.upper() for name in known}
    settings = sorted(known_upper)
    found: dict[str, str] = {}
    for given in env:
        upper = given.upper()
        if upper in known_upper:
            continue
        meant = next((s for s in settings if looks_like(upper, s)), None)
        if meant is not None:
            found[given] = meant
    return found


SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "KEY", "CREDS")
"""A setting whose name holds one of these never has its value shown."""


def refused(exc: ValidationError) -> list[str]:
    """What a settings class refused, a line a setting: `NAME='value': why` (a secret's value
    left out, every value shortened and masked as the logs mask secrets)."""
    lines: list[str] = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]).upper() or "?"
        value = error.get("input")
        if any(word in name for word in SECRET_WORDS):
            shown = " (its value not shown)"
        else:
            shown = "=" + typed_text.shown(value)
        why = str(error["msg"]).removeprefix("Value error, ")  # a validator's own words
        lines.append(redact(f"{name}{shown}: {why}"))
    return lines


@dataclass
class StartReport:
    """What a service found wrong with its settings at start, for `dla up` to print."""

    unknown: dict[str, str] = field(default_factory=dict)
    """Names that are no setting but look like one: {name as given: the setting}."""
    refused: list[str] = field(default_factory=list)
    """Settings refused (`refused`: the service cannot start), or a plugin's settings
    refused (its hooks fail until they are mended)."""
    idle: list[str] = field(default_factory=list)
    """Settings taken that do nothing as given (a COOKIES_DIR that is no folder, a cookies
    file named for no site), each with what to do."""

    def lines(self) -> list[str]:
        """The report in sentences."""
        slips = [f"{given} is not a setting and is ignored: did you mean {meant}?"
                 for given, meant in sorted(self.unknown.items())]  # fmt: skip
        refused = [f"setting refused: {why}" for why in self.refused]
        return slips + refused + [f"setting without effect: {why}" for why in self.idle]


def report_file(data_dir: Path, service: str) -> Path:
    """Where a service started by `dla up` leaves its StartReport."""
    return data_dir / "run" / f"{service}.settings.json"


def record_report(data_dir: Path, service: str, report: StartReport) -> None:
    """Leave the report in the service's file; nothing to say: no file. A file that cannot
    be written is logged (the log says all of it too)."""
    path = report_file(data_dir, service)
    try:
        if not report.lines():
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(report)))
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)


def read_report(data_dir: Path, service: str) -> StartReport:
    """What the service left in its file (an empty report when nothing or unreadable)."""
    try:
        found = json.loads(report_file(data_dir, service).read_text())
        unknown, refused_ = found.get("unknown") or {}, found.get("refused") or []
        return StartReport(
            {str(k): str(v) for k, v in unknown.items()},
            [str(r) for r in refused_],
            [str(i) for i in found.get("idle") or []],
        )
    except (OSError, ValueError, AttributeError):
        return StartReport()


def built_or_exit(build: Callable[[], SettingsT], process: str) -> SettingsT:
    """The settings `build` makes; when it refuses some, each is logged in a line (no
    traceback), the start report left for `dla up`, and the process ends with EXIT_CONFIG."""
    try:
        return build()
    except ValidationError as exc:
        setup_logging("INFO", process)
        lines = [f"{line} (the {process} cannot start)" for line in refused(exc)]
        for line in lines:
            log.error("setting refused: %s", line)
        record_report(_data_dir_of_env(), process, StartReport(refused=lines))
        raise SystemExit(EXIT_CONFIG) from None


def _data_dir_of_env() -> Path:
    """DATA_DIR when a process's own settings could not be built."""
    try:
        return CommonSettings().data_dir
    except ValidationError:
        return Path(os.environ.get("DATA_DIR") or "./data")
