"""Text of scripts written without spaces in the full-text index: one token a character,
shown as the page had it."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


MIXED = st.text(
    alphabet=st.sampled_from("ab 1,\n。、日本語のニュースข่าวเกาหลี한국어ᄀ𠀋ｶ\u3000"), max_size=40
) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(MIXED)
def test_segmenting_is_taken_back_exactly_and_changes_nothing_twice(text: str) -> None:
    text = text.replace(SEPARATOR, "")  # a page's own zero-width spaces are not kept
    done = segmented(text)
    assert unsegmented(done) == text
    assert segmented(done) == done
    assert done == text or has_cjk(text)


@settings(max_examples=200, deadline=None)
@given(MIXED, MIXED, MIXED)
def test_a_run_of_such_characters_in_a_text_is_found_as_a_phrase(
    before: str, word: str, after: str
) -> None:
    word = "".join(ch for ch in word if has_cjk(ch))
    if not any(ch.isalnum() for ch in word):  # a vowel sign or tone mark alone is no word
        return  # (the search's words are \w runs: it never asks for one)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'porter unicode61')")
    db.execute("INSERT INTO t VALUES (?)", (segmented(before + word + after),))
    query = f'"{segmented(word, " ")}"'
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (query,)).fetchone()[0] == 1
