"""Text of scripts written without spaces in the full-text index: one token a character,
shown as the page had it."""

from __future__ import annotations

import sqlite3

import pytest

from shared.content.cjk import SEPARATOR, has_cjk, segmented, unsegmented


@pytest.mark.parametrize(
    "text",
    ["日本語のニュース", "东京天气晴朗", "서울에서 만나요", "iPhone発売、中国。", "mixed 漢字 text",
     "ｶﾀｶﾅ半角", "𠀋𡈽 (extension B)", "々〆〇", "ข่าววันนี้ที่กรุงเทพ", "ພາສາລາວ", "ភាសាខ្មែរ",
     "မြန်မာစာ"],
)  # fmt: skip
def test_every_character_is_set_apart_and_taken_back(text: str) -> None:
    done = segmented(text)
    assert done != text and SEPARATOR in done
    assert segmented(done) == done  # idempotent
    assert unsegmented(done) == text


@pytest.mark.parametrize("text", ["plain English", "Новости дня", "مرحبا بالعالم", "", "  "])
def test_other_scripts_are_left_alone(text: str) -> None:
    assert not has_cjk(text)
    assert segmented(text) == text


def test_fts5_finds_a_word_inside_a_run_of_characters() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'porter unicode61')")
    db.execute(
        "INSERT INTO t VALUES (?)",
        (segmented("日本語のニュース and iPhone発売です ข่าววันนี้ที่กรุงเทพ"),),
    )

    def found(word: str) -> bool:
        query = f'"{segmented(word, " ")}"'
        return bool(db.execute("SELECT 1 FROM t WHERE t MATCH ?", (query,)).fetchall())

    assert found("ニュース") and found("日本語") and found("発売") and found("iPhone")
    assert found("กรุงเทพ") and found("ข่าว")  # Thai, its tone marks included
    assert not found("語ニ")  # the characters must follow each other
    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'porter unicode61')")
    raw.execute("INSERT INTO t VALUES (?)", ("日本語のニュース",))
    assert not raw.execute("SELECT 1 FROM t WHERE t MATCH '\"ニュース\"'").fetchall()  # before
