"""docs/architecture.md "Where is X handled?" stays true: subjects and tables, with owners."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

from services.writer import apply, results
from shared.hooks import records
from shared.subjects import CONSUMERS, MODELS

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
WRITER = REPO / "services" / "writer"
MIGRATIONS = WRITER / "db" / "migrations"
_WRITE = re.compile(
    r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)", re.I
)


def _rows(header: str) -> list[list[str]]:
    """The cells of the markdown table whose header row starts with `header`."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("`") for c in line.strip("|").split("|")])
    return rows


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
    assert set(results.RECORD_HANDLERS) == set(get_args(union))


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
