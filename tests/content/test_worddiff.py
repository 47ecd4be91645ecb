"""The word diff of two captures' texts: insertions, deletions, moves, non-Latin scripts."""

from __future__ import annotations

from shared.content.worddiff import WordDiff, word_diff


def rebuilt(d: WordDiff, side: str) -> str:
    skip = "insert" if side == "old" else "delete"
    return "".join(p.text for p in d.pieces if p.op != skip)


def norm(text: str) -> list[list[str]]:
    return [p.split() for p in text.split("\n\n") if p.strip()]


def check_sides(old: str, new: str) -> WordDiff:
    d = word_diff(old, new)
    assert norm(rebuilt(d, "old")) == norm(old)
    assert norm(rebuilt(d, "new")) == norm(new)
    return d


def marked(d: WordDiff) -> list[tuple[str, str]]:
    return [(p.op, " ".join(p.text.split())) for p in d.pieces if p.op != "equal"]


def test_same_text_is_one_equal_piece_and_unchanged() -> None:
    text = "First paragraph here.\n\nSecond one,  with   spaces."
    d = check_sides(text, "First paragraph here.\n\nSecond one, with spaces.")
    assert not d.changed
    assert [p.op for p in d.pieces] == ["equal"]


def test_an_inserted_and_a_deleted_word_are_marked() -> None:
    old = "The mayor said the bridge will open in May.\n\nMore news later."
    new = "The mayor said the new bridge will open in June.\n\nMore news later."
    d = check_sides(old, new)
    assert marked(d) == [("insert", "new"), ("delete", "May."), ("insert", "June.")]
    assert (d.added, d.removed) == (2, 1)


def test_a_deleted_paragraph() -> None:
    old = "One.\n\nTwo is gone soon.\n\nThree."
    d = check_sides(old, "One.\n\nThree.")
    assert marked(d) == [("delete", "Two is gone soon.")]
    assert (d.added, d.removed) == (0, 4)


def test_a_moved_paragraph_is_removed_in_one_place_and_added_in_another() -> None:
    paras = [f"Paragraph {i} says something {i * 7}." for i in range(6)]
    moved = [paras[0], paras[4], paras[1], paras[2], paras[3], paras[5]]
    d = check_sides("\n\n".join(paras), "\n\n".join(moved))
    ops = marked(d)
    assert ("insert", paras[4]) in ops or ("delete", paras[4]) in ops
    assert d.added == d.removed == len(paras[4].split())


def test_non_latin_scripts() -> None:
    old = "東京で会議が開かれた 。\n\nПрезидент заявил о новых мерах.\n\nمرحبا بالعالم"
    new = "東京で会議が開かれた 。\n\nПрезидент заявил о старых мерах.\n\nمرحبا بالعالم الجديد"
    d = check_sides(old, new)
    assert marked(d) == [
        ("delete", "новых"), ("insert", "старых"), ("insert", "الجديد")
    ]  # fmt: skip


def test_empty_sides() -> None:
    assert marked(check_sides("", "Hello there.")) == [("insert", "Hello there.")]
    assert marked(check_sides("Hello there.", "")) == [("delete", "Hello there.")]
    assert word_diff("", "").pieces == []


def test_a_huge_rewrite_is_shown_whole_not_word_by_word() -> None:
    old = " ".join(f"a{i}" for i in range(3000))
    new = " ".join(f"b{i}" for i in range(3000))
    d = check_sides(old, new)
    assert [p.op for p in d.pieces] == ["delete", "insert"]
    assert (d.added, d.removed) == (3000, 3000)


def test_a_long_text_without_paragraphs_is_still_diffed_word_by_word() -> None:
    words = [f"w{i % 997}x{i}" for i in range(40_000)]
    new = list(words)
    new.insert(20_000, "INSERTED")
    del new[30_000]
    d = check_sides(" ".join(words), " ".join(new))
    assert marked(d) == [("insert", "INSERTED"), ("delete", words[29_999])]
