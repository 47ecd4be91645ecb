"""A mistyped setting is said, not silently ignored.

Settings are environment variables, and the environment holds much that is not ours (PATH,
HOME, what a container sets), so an unknown name cannot be an error. But a name that is not a
setting and looks like one (`POLL_INTERVAL` for `POLL_INTERVAL_SECONDS`, `ARCHIVER_CONCURENCY`,
`TSA_URL` for `TSA_URLS`) is almost surely meant as that setting and does nothing: each service
logs a warning at start (shared.lifecycle) naming the setting it looks like, and leaves
what it found in its slips file, which `dla up` prints in the terminal.

A service knows only its own settings, so it can only tell a name near one of them. That is
safe because no two real settings of the product are near each other in this sense
(tests/test_setting_names.py checks every settings class and plugin against every service):
a name near one of a service's settings is never another service's setting.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic_settings import BaseSettings

log = logging.getLogger(__name__)

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
    close = abs(len(given) - len(setting)) <= 2
    return close and difflib.SequenceMatcher(None, given, setting).ratio() >= SIMILAR


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


def slips_file(data_dir: Path, service: str) -> Path:
    """Where a service started by `dla up` leaves what it found, for `dla up` to print."""
    return data_dir / "run" / f"{service}.slips.json"


def record_slips(data_dir: Path, service: str, found: Mapping[str, str]) -> None:
    """Leave `found` ({name: the setting it looks like}) in the service's slips file; none
    found: no file. A file that cannot be written is logged (the log holds the slips too)."""
    path = slips_file(data_dir, service)
    try:
        if not found:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(found)))
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)


def read_slips(data_dir: Path, service: str) -> dict[str, str]:
    """What the service left in its slips file ({} when nothing or unreadable)."""
    try:
        found = json.loads(slips_file(data_dir, service).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items()}
