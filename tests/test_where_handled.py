"""docs/architecture.md "Where is X handled?" stays true: subjects and tables, with owners."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from services.writer import apply, capture_results
from shared.hooks import records
from shared.subjects import CONSUMERS, MODELS
from tests.test_architecture import modules_imported

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
WRITER = REPO / "services" / "writer"
MIGRATIONS = WRITER / "db" / "migrations"
_WRITE = re.compile(
    r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I
)


def _cells(header: str, doc: Path = DOC) -> list[list[str]]:
    """The cells of the markdown table whose header row starts with `header`, as written."""
    lines = doc.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def _rows(header: str) -> list[list[str]]:
    """The cells of that table in docs/architecture.md, a code span's backticks taken off."""
    return [[c.strip("`") for c in row] for row in _cells(header)]


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_subject_has_its_consumer_and_handler() -> None:
    rows = _rows("subject")
    assert sorted(r[0] for r in rows) == sorted(MODELS), "one row per subject in the contracts"
    durable = {c.durable: c for c in CONSUMERS}
    for subject, consumer, service, handler in rows:
        spec = durable[consumer]
        assert subject in spec.stream.subjects, (subject, consumer)
        assert spec.filter_subject in (subject, subject.split(".")[0] + ".>"), (subject, consumer)
        assert (REPO / "services" / service).is_dir(), service
        file, function = handler.split(":")
        assert function in _functions(REPO / file), handler
        if service == "writer":
            applied = apply._HANDLERS[MODELS[subject]]
            assert f"{applied.__module__.replace('.', '/')}.py:{applied.__name__}" == handler


def test_every_hook_record_type_has_one_handler() -> None:
    union = get_args(records.HookRecord)[0]  # Annotated[Union[...], discriminator]
    assert set(capture_results.RECORD_HANDLERS) == set(get_args(union))


def _tables() -> set[str]:
    """Tables the migrations leave, in order: CREATE adds, DROP removes, RENAME renames (a
    table rebuild creates `<name>_vN`, drops `<name>` and renames the new one)."""
    found = {"schema_version"}  # created by migrate.py itself
    statement = re.compile(
        r"CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF NOT EXISTS\s+)?(?P<create>\w+)"
        r"|DROP\s+TABLE\s+(?:IF EXISTS\s+)?(?P<drop>\w+)"
        r"|ALTER\s+TABLE\s+(?P<old>\w+)\s+RENAME\s+TO\s+(?P<new>\w+)"
    )
    for sql in sorted(MIGRATIONS.glob("*.sql")):
        for m in statement.finditer(sql.read_text()):
            if m["create"]:
                found.add(m["create"])
            elif m["drop"]:
                found.discard(m["drop"])
            else:
                found.discard(m["old"])
                found.add(m["new"])
    return found


def test_every_table_has_exactly_the_one_writer_the_docs_name() -> None:
    owners = {table: file for table, file in _rows("table")}
    tables = _tables()
    assert set(owners) == tables, "one row per table of the migrations"
    for path in WRITER.rglob("*.py"):
        written = {t for t in _WRITE.findall(path.read_text()) if t in tables}
        relative = str(path.relative_to(REPO))
        for table in written:
            assert owners[table] == relative, f"{relative} writes {table}, owned by {owners[table]}"


RULES = (
    "error outcome",
    "URL scheme",
    "address judgement",
    "sanitiser",
    "plugin defaults",
    "archive decision",
    "media decisions",
    "domain back-off",
    "process facts",
)
"""The rules issue 22 gave one owner each: every one has its row."""


def test_every_rule_is_decided_in_exactly_one_place_that_exists() -> None:
    rows = _rows("rule")
    names = [rule.split(":")[0] for rule, _, _ in rows]
    assert len(names) == len(set(names)), "one row per rule"
    for wanted in RULES:
        assert any(name.startswith(wanted) for name in names), f"no row for {wanted}"
    for rule, owner, _ in rows:
        assert " " not in owner and "," not in owner, f"{rule}: one place, not {owner}"
        path, _, function = owner.partition(":")
        if "<name>" in path:  # one per plugin: every plugin has it
            plugins = [p for p in (REPO / "plugins").iterdir() if (p / "__init__.py").exists()
                       or any(p.glob("on_Snapshot__*"))]  # fmt: skip
            assert plugins and all(
                (REPO / path.replace("<name>", p.name)).exists() for p in plugins
            )
        elif path.endswith("/"):
            assert (REPO / path).is_dir(), owner
        else:
            assert (REPO / path).is_file(), owner
            assert not function or function in _functions(REPO / path), owner


SPELLED_ONLY_BY = {
    "shared/hooks/error_codes.py": re.compile(r"""["']\^?E_\[A-Z"""),  # a pattern over codes
    "shared/links/urlparts.py": re.compile(
        r"""\(\s*["']https?(?::/*)?["']\s*,\s*["']https?(?::/*)?["']\s*\)"""  # ("http", "https")
    ),
    "shared/processes.py": re.compile(r"/proc/"),
    # inflating a body: one bounded decoder of outbound traffic (issue 33)
    "shared/fetching/decoding.py": re.compile(r"decompressobj\(|\bbrotlicffi\b|ZstdDecompressor"),
    # hashing a file: one hasher (issue 33)
    "shared/filehash.py": re.compile(r"\bfile_digest\b|def \w*sha256\w*\(\s*path\b"),
}
"""A rule's tell-tale spelling, and the one module that may spell it."""
ALSO = {
    "shared/hooks/limits.py": "a hook at its memory limit reads its own VmData by hand",
    "shared/pageclient.py": "/proc/self/fd/N/name: a path trick for long socket paths",
}
"""Modules allowed a spelling anyway, and why (see shared/processes.py)."""


def test_no_rule_is_spelled_outside_its_owner() -> None:
    product = [p for top in ("shared", "services", "plugins") for p in (REPO / top).rglob("*.py")]
    found = []
    for path in product:
        relative = str(path.relative_to(REPO))
        if "tests" in path.relative_to(REPO).parts or relative in ALSO:
            continue
        text = path.read_text()
        for owner, spelling in SPELLED_ONLY_BY.items():
            if relative != owner and spelling.search(text):
                found.append(f"{relative} spells what {owner} decides")
    assert not found, found


_PATH = re.compile(r"^[\w.<>-]+(?:/[\w.<>-]*)+(?::[\w.]+)?$|^[\w.-]+\.(?:py|json|sql)(?::[\w.]+)?$")
"""A cell's code span that names a file or a folder: `a/b.py`, `a/b.py:function`, `a/`,
`b.py` (a span like `discourse_posts.forum` or `dla backfill` names none)."""


def _paths(cell: str) -> list[str]:
    return [span for span in re.findall(r"`([^`]+)`", cell) if _PATH.match(span)]


def _names(path: Path) -> set[str]:
    """Every name a Python file uses: names, attributes, what it imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(node.name.split("."))
    return found


def _refers_to(asker: Path, owner: str) -> bool:
    """Whether a file (or a file of a folder) asks the owner: it imports the owner module or
    names its function; an owner that is no module (a folder, a plugin's config.json) by its
    name."""
    path, _, function = owner.partition(":")
    files = [asker] if asker.is_file() else sorted(asker.rglob("*.py"))
    if path.endswith(".py"):
        module = path.removesuffix(".py").replace("/", ".")
        return any(
            module in modules_imported(f) or (function and function.split(".")[-1] in _names(f))
            for f in files
        )
    name = Path(path.rstrip("/")).name
    return any(name in f.read_text() for f in files)


def test_every_file_that_asks_a_rule_exists_and_asks_it() -> None:
    """The "asked by" column, as the "decided in" one: every file it names exists (a
    function it names, in that file), and asks the row's owner."""
    named = 0
    for rule, owner, asked in _cells("rule"):
        owner = owner.strip("`")
        for span in _paths(asked):
            path, _, function = span.partition(":")
            where = f"{rule.split(':')[0]}: asked by {span}"
            assert "/" in path, f"{where}: name the file from the repository's root"
            asker = REPO / path
            assert asker.exists(), f"{where}: no such file"
            assert not function or function.split(".")[-1] in _functions(asker), where
            assert _refers_to(asker, owner), f"{where}, which neither imports {owner} nor names it"
            named += 1
    assert named >= 20, "the column names files (a test that finds none checks nothing)"


def _tree_files(doc: Path, folder: Path | None = None) -> list[tuple[str, Path]]:
    """What a Tree table names and where it should be: each path of its first column, and
    each file (`*.py`) its second column names, under the row's folder (`folder`: the
    folder the table is of, for a service's own README)."""
    base = folder or REPO
    named = []
    for first, what in _cells("path" if folder is None else "module", doc):
        paths = re.findall(r"`([^`]+)`", first)
        for path in paths:
            named.append((path, base))
        within = [base / p for p in paths if p.endswith("/")]
        for span in re.findall(r"`([^`]+)`", what):
            if re.fullmatch(r"[\w<>./-]+\.py", span):
                named.append((span, within[0] if within and "/" not in span else base))
    return named


@pytest.mark.parametrize(
    ("doc", "folder"),
    [(DOC, None), (WRITER / "README.md", WRITER)],
    ids=["architecture", "writer"],
)
def test_every_file_a_tree_table_names_exists(doc: Path, folder: Path | None) -> None:
    missing = []
    for span, base in _tree_files(doc, folder):
        pattern = span.replace("<name>", "*").rstrip("/")
        here = list(base.glob(pattern)) or (
            [] if "/" in span else list(base.rglob(pattern))  # a file of a subfolder: egress/
        )
        if not here and "/" in span and base != REPO:
            here = list(REPO.glob(pattern))  # named from the repository's root
        if not here:
            missing.append(f"{span} (under {base.relative_to(REPO) or '.'})")
    assert not missing, missing
