"""Which plugins read which: a plugin declares the plugins whose output it reads in its
config.json (`"reads": ["fetch"]`). Two rules follow, so metadata never describes a failed
attempt:

- the runner skips a reader when every one of its sources that ran in the same run ended
  without output (not succeeded or partial): `E_<PLUGIN>_DEPENDENCY`, a skip (nothing to
  read, nothing wrong with the reader). A reader of several sources (raw and rendered HTML)
  runs when one of them succeeded;
- a retry that re-runs some hooks also re-runs every hook reading them (transitively), and
  the hooks that the retried ones read (a retry runs in a fresh folder: a retried reader
  needs its sources there again).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from shared.errors import ConfigError
from shared.hooks.config import load_plugin_config
from shared.hooks.discovery import HookSpec, plugin_dirs


def plugin_reads(plugins_dirs: Sequence[Path]) -> dict[str, tuple[str, ...]]:
    """Plugin -> the plugins it reads (only plugins that declare some)."""
    found: dict[str, tuple[str, ...]] = {}
    for plugin, folder in plugin_dirs(plugins_dirs).items():
        try:
            reads = load_plugin_config(folder).reads
        except ConfigError:
            continue
        if reads:
            found[plugin] = reads
    return found


def with_related(
    hooks: Sequence[HookSpec], selected: Collection[str], reads: Mapping[str, Sequence[str]]
) -> list[HookSpec]:
    """`selected` (hook keys) plus, transitively, every hook of a plugin that reads a
    selected plugin, and every hook of a plugin a selected one reads; in run order."""
    chosen = {h.plugin for h in hooks if h.key in selected}
    readers = _closure(chosen, lambda p: {r for r, src in reads.items() if p in src})
    sources = _closure(chosen, lambda p: set(reads.get(p, ())))
    plugins = readers | sources
    return [h for h in hooks if h.key in selected or h.plugin in plugins]


def _closure(start: set[str], step: Callable[[str], set[str]]) -> set[str]:
    found, todo = set(start), list(start)
    while todo:
        for nxt in step(todo.pop()) - found:
            found.add(nxt)
            todo.append(nxt)
    return found
