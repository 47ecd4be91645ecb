"""What `dla` prints holds page titles, URLs and server errors: printed as they are."""

from __future__ import annotations

from services.supervisor.cli.output import highlighted, out, table


def test_brackets_in_titles_and_errors_are_printed_not_read_as_styles() -> None:
    with out.capture() as captured:
        table(None, ["title"], [("[/x] closes nothing",), ("[bold]not bold[/bold]",), (None,)])
        out.print("connection failed: [Errno 111] refused", style="yellow")
    printed = captured.get()
    assert "[/x] closes nothing" in printed
    assert "[bold]not bold[/bold]" in printed
    assert "[Errno 111]" in printed


def test_a_snippet_shows_its_matches_styled_and_its_text_unescaped() -> None:
    text = highlighted("Fish &amp; <mark>chips</mark> in [brackets] &lt;b&gt;", 70)
    assert text.plain == "Fish & chips in [brackets] <b>"
    styled = [text.plain[span.start : span.end] for span in text.spans]
    assert styled == ["chips"]


def test_a_long_snippet_is_cut_to_its_width() -> None:
    text = highlighted("<mark>word</mark> " + "long " * 40, 20)
    assert len(text.plain) <= 20 and text.plain.endswith("…")
    assert text.plain.startswith("word ")
    assert highlighted(None).plain == ""
