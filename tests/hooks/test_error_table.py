"""The error table is complete and has nothing dead: every code the product emits is in
shared/hooks/error_codes.py, and every kind in it is emitted somewhere (scanned from the
source: literal codes, codes built with `code`/`http_code`, and the `<WHAT>` words handed
to them)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from typing import get_args

import pytest

from shared.hooks import error_codes
from shared.hooks.error_codes import KINDS, What, code, http_code, retry_worthy, what_of

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "shared" / "hooks" / "error_codes.py"
LITERAL_CODE = re.compile(r"^E_[A-Z0-9]+(_[A-Z0-9]+)+$")
BUILDERS = ("code", "http_code")


def product_files() -> list[Path]:
    """The product's Python files: shared, services and plugins, their tests left out."""
    files = [p for top in ("shared", "services", "plugins") for p in (REPO / top).rglob("*.py")]
    return sorted(p for p in files if "tests" not in p.relative_to(REPO).parts and p != TABLE)


@cache
def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def from_table(tree: ast.Module) -> list[str]:
    """The names a module imports from the table (none: it does not use it)."""
    return [
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "shared.hooks.error_codes"
        for a in n.names
    ]


def strings(tree: ast.Module) -> list[tuple[str, int]]:
    """Every string constant of a module, with its line."""
    return [
        (n.value, n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def literal_codes() -> dict[str, list[str]]:
    """Every literal error code in the product, with where it stands."""
    found: dict[str, list[str]] = {}
    for path in product_files():
        for value, line in strings(tree_of(path)):
            if LITERAL_CODE.match(value):
                found.setdefault(value, []).append(f"{path.relative_to(REPO)}:{line}")
    return found


def test_the_literal_names_the_table() -> None:
    assert set(get_args(What)) == set(KINDS)


def test_every_literal_code_is_in_the_table() -> None:
    unknown = {c: where for c, where in literal_codes().items() if what_of(c) is None}
    assert not unknown, f"codes the table does not know: {unknown}"


def test_codes_are_built_by_the_table() -> None:
    """A code made of pieces goes through `code`/`http_code` (which refuse an unknown kind),
    never an f-string or a concatenation the table cannot check."""
    built = []
    for path in product_files():
        for node in ast.walk(tree_of(path)):
            head: ast.expr | None = None
            if isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                head = node.left
            if (
                isinstance(head, ast.Constant)
                and isinstance(head.value, str)
                and head.value.startswith("E_")
            ):
                built.append(f"{path.relative_to(REPO)}:{head.lineno}")
    assert not built, f"error codes built by hand: {built}"


def test_every_kind_is_emitted() -> None:
    """No kind in the table that nothing emits: each is the `<WHAT>` of a literal code, a
    word handed to the table's builders in a module that uses the table, a code constant of
    the table (`BINARY_MISSING`), or (HTTP kinds) made by `http_code` from a status."""
    emitted: set[str] = {w for c in literal_codes() if (w := what_of(c)) is not None}
    for path in product_files():
        tree = tree_of(path)
        imported = from_table(tree)
        if not imported:
            continue
        constants = [getattr(error_codes, name, None) for name in imported]
        emitted.update(what_of(c) or "" for c in constants if isinstance(c, str))
        emitted.update(value for value, _ in strings(tree) if value in KINDS)
        calls = {
            n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
        }
        if "http_code" in calls:
            emitted.update(what_of(http_code("X", s)) or "" for s in (404, 408, 429, 503))
    dead = sorted(set(KINDS) - emitted)
    assert not dead, f"kinds nothing emits (remove them from the table): {dead}"


def test_builders_refuse_what_the_table_does_not_know() -> None:
    with pytest.raises(ValueError):
        code("FETCH", "UNSUPPORTED_SCHEME")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        code("fetch", "TIMEOUT")
    assert code("MY_PLUGIN", "STALLED") == "E_MY_PLUGIN_STALLED"
    assert http_code("FETCH", 503) == "E_FETCH_HTTP_5XX"
    assert http_code("FETCH", 404) == "E_FETCH_HTTP_404"


@pytest.mark.parametrize(
    ("error_code", "retried"),
    [
        ("E_FETCH_HTTP_403", False),
        ("E_FETCH_HTTP_404", False),
        ("E_FETCH_HTTP_408", True),
        ("E_FETCH_HTTP_425", True),
        ("E_FETCH_HTTP_429", True),
        ("E_NAVIGATE_HTTP_5XX", True),
        ("E_BINARY_MISSING", False),
        ("E_FETCH_REFUSED", False),
        ("E_FETCH_REDIRECTS", False),
        ("E_MEDIA_RATE_LIMITED", True),
        ("E_SOMETHING_UNHEARD_OF", True),
    ],
)
def test_what_is_retried(error_code: str, retried: bool) -> None:
    assert retry_worthy(error_code) is retried
