"""Which modules a Python hook imports, read from its source (never run), so the runner
can fork it from the smallest pre-warmed host that already holds them (`shared.hooks.host`).

Every `import` statement of the hook's file counts, at any depth (a function's import runs
as surely as a top-level one), and so do the statements of the plugin's own modules it
imports (`import article_images` beside the hook). A relative import is unknown here, so it
counts as a module no host holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

UNKNOWN = "<relative import>"
"""What a relative import counts as: no host has it, so the hook goes to the full host."""


def imported_modules(path: Path) -> frozenset[str]:
    """The dotted names the hook at `path` may import: `import a.b` gives a.b; `from a.b
    import c` gives a.b and a.b.c (c may be a submodule or a name: see `held_by`)."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return frozenset({UNKNOWN})
    return _scan(path.resolve(), stamp)


@lru_cache(maxsize=512)
def _scan(path: Path, stamp: int) -> frozenset[str]:
    names: set[str] = set()
    seen: set[Path] = set()
    todo = [path]
    while todo:
        file = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        try:
            tree = ast.parse(file.read_bytes(), filename=str(file))
        except (OSError, SyntaxError, ValueError):
            names.add(UNKNOWN)
            continue
        for name in _statements(tree):
            local = path.parent / f"{name.split('.')[0]}.py"
            if local.is_file():  # a module of the plugin itself: what it imports counts
                todo.append(local)
            else:
                names.add(name)
    return frozenset(names)


def _statements(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                yield UNKNOWN
                continue
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")


def held_by(
    names: frozenset[str], modules: frozenset[str], packages: Mapping[str, Sequence[str]]
) -> bool:
    """Whether a process holding `modules` (sys.modules' names; `packages`: each package's
    folders) has everything `names` asks for. `from pkg import x` is held when pkg.x is
    loaded, or when pkg is and has no submodule x on disk (x is a name in pkg)."""
    for name in names:
        if name in modules:
            continue
        parent, _, leaf = name.rpartition(".")
        if not parent or parent not in modules:
            return False
        folders = packages.get(parent)
        if folders is not None and any(_is_submodule(Path(f), leaf) for f in folders):
            return False
    return True


def _is_submodule(folder: Path, leaf: str) -> bool:
    if (folder / f"{leaf}.py").is_file() or (folder / leaf / "__init__.py").is_file():
        return True
    return any(folder.glob(f"{leaf}.*.so"))  # an extension module
