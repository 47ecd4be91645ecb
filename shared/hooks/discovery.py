"""Finding hook scripts in plugin folders and putting them in run order."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ConfigError
from shared.hooks.config import load_plugin_config

log = logging.getLogger(__name__)

UNNUMBERED_STEP = 10
"""Sort position of unnumbered hooks: after step 9."""


@dataclass(frozen=True)
class HookSpec:
    """One discovered hook script."""

    path: Path
    """Absolute path of the script."""
    plugin: str
    """Plugin folder name; also the hook's output folder name."""
    name: str
    """File name, e.g. on_Snapshot__50_title.py."""
    step: int | None
    """First digit of NN (0..9); None for an unnumbered hook (runs after step 9)."""
    order: str
    """The NN part as written ('' when unnumbered)."""
    background: bool
    """True for `.bg` hooks: they do not block their step."""

    @property
    def key(self) -> str:
        """`<plugin>/<file name>`: unique within one snapshot."""
        return f"{self.plugin}/{self.name}"

    @property
    def is_python(self) -> bool:
        """Python hooks run with the runner's own interpreter (or its pre-warmed host)."""
        return self.path.suffix == ".py"

    @property
    def sort_key(self) -> tuple[int, str, str]:
        """Steps 0..9 in order, unnumbered last; file name order inside a step."""
        return (UNNUMBERED_STEP if self.step is None else self.step, self.name, self.plugin)


def parse_hook_name(name: str, event: str) -> tuple[int | None, str, bool] | None:
    """(step, order, background) for `on_<event>__NN_description[.bg][.ext]`; None if no hook."""
    prefix = f"on_{event}__"
    if not name.startswith(prefix) or name.endswith(("~", ".pyc", ".swp", ".orig")):
        return None
    rest = name[len(prefix) :]
    m = re.match(r"(?P<order>\d+)_", rest)
    order = m.group("order") if m else ""
    stem = rest.split(".", 1)
    background = len(stem) > 1 and (stem[1] == "bg" or stem[1].startswith("bg."))
    step = int(order[0]) if order else None
    return step, order, background


def unnumbered(name: str) -> str:
    """A hook's name or key without its NN (`fetch/on_Snapshot__61_fetch.py` ->
    `fetch/on_Snapshot__fetch.py`), so a retry stored under a hook's former number still
    finds the hook once it moved to another step."""
    return re.sub(r"(^|/)(on_[A-Za-z]+__)\d+_", r"\1\2", name)


def plugin_dirs(plugins_dirs: Sequence[Path]) -> dict[str, Path]:
    """Plugin name -> folder; a plugin name found in an earlier folder wins."""
    found: dict[str, Path] = {}
    for root in plugins_dirs:
        if not root.is_dir():
            continue
        for d in sorted(root.iterdir()):
            if d.is_dir() and not d.name.startswith((".", "_")) and d.name not in found:
                found[d.name] = d.resolve()
    return found


def discover_hooks(
    plugins_dirs: Sequence[Path],
    event: str = "Snapshot",
    *,
    only: Collection[str] | None = None,
    enabled_env: Mapping[str, str] | None = None,
    url: str | None = None,
) -> list[HookSpec]:
    """All hooks for `event` under `plugins_dirs`, in run order.

    `only` keeps hooks whose plugin name, file name or `<plugin>/<file name>` is listed (a
    name listed with another NN than the hook's now counts too: `unnumbered`).
    `enabled_env`, when given, drops plugins switched off by `<PLUGIN>_ENABLED=false`
    (after layering the plugin's config.json defaults under it). `url`, when given, drops
    plugins whose `x-domains` (a platform plugin: its platform's) do not hold the link's
    registrable domain.
    """
    hooks: list[HookSpec] = []
    wanted = None if only is None else {*only, *(unnumbered(o) for o in only)}
    for plugin, folder in plugin_dirs(plugins_dirs).items():
        try:
            config = load_plugin_config(folder)
            if enabled_env is not None and not config.enabled(enabled_env):
                continue
            if url is not None and not config.runs_for(url, enabled_env):
                continue
        except ConfigError:
            pass  # a broken config.json is reported when the hook runs, not hidden here
        for path in sorted(folder.iterdir()):
            parsed = parse_hook_name(path.name, event)
            if parsed is None or not path.is_file():
                continue
            step, order, background = parsed
            hook = HookSpec(path, plugin, path.name, step, order, background)
            names = {plugin, path.name, hook.key, unnumbered(path.name), unnumbered(hook.key)}
            if wanted is not None and not names & wanted:
                continue
            if step is None:
                log.warning("hook %s is unnumbered: it runs after step 9", hook.key)
            hooks.append(hook)
    return sorted(hooks, key=lambda h: h.sort_key)
