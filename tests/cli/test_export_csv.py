"""`dla export --format csv`: archived titles are text in a spreadsheet, never formulas."""

from __future__ import annotations

import csv
import io
import json

from services.supervisor.cli.browse import write_export


def test_a_title_that_looks_like_a_formula_is_exported_as_text() -> None:
    records = [
        {"id": 1, "title": '=HYPERLINK("https://evil.example","open")', "tags": ["a"]},
        {"id": 2, "title": "+1 then -1", "tags": []},
        {"id": 3, "title": "@SUM(A1)", "tags": None},
        {"id": 4, "title": "An ordinary title", "tags": ["=x"]},
    ]
    sink = io.StringIO()
    lines = [json.dumps(r) + "\n" for r in records]
    assert write_export(lines, "csv", sink) == 4
    rows = list(csv.DictReader(io.StringIO(sink.getvalue())))
    assert [r["title"] for r in rows] == [
        '\'=HYPERLINK("https://evil.example","open")',
        "'+1 then -1",
        "'@SUM(A1)",
        "An ordinary title",
    ]
    assert [r["id"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[3]["tags"] == '["=x"]' and rows[2]["tags"] == ""
