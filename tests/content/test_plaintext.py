"""plain_text: block boundaries and whitespace rules."""

from __future__ import annotations

from shared.content.plaintext import plain_text


def test_blocks_are_separated_by_a_blank_line_and_inline_text_is_joined():
    html = (
        "<h1>Title</h1><p>One <b>bold</b>\n  and <a href='#'>link</a>.</p>"
        "<ul><li>a</li><li>b</li></ul>"
    )
    assert plain_text(html) == "Title\n\nOne bold and link.\n\na\n\nb"


def test_br_is_a_line_break_and_whitespace_collapses():
    assert plain_text("<p>a\u00a0\u00a0b<br>c\u200b  d\t</p>") == "a b\nc d"


def test_table_rows_are_blocks_and_cells_are_spaced():
    html = "<table><tr><th>k</th><td>v</td></tr><tr><td>1</td><td>2</td></tr></table>"
    assert plain_text(html) == "k v\n\n1 2"


def test_pre_keeps_its_line_breaks():
    assert plain_text("<pre>line 1\nline 2\n\nline 3</pre>") == "line 1\nline 2\nline 3"


def test_excluded_elements_and_comments_are_not_text():
    html = "<p>a<script>x()</script><style>p{}</style><!-- c -->b</p><template>t</template>"
    assert plain_text(html) == "ab"


def test_text_outside_blocks_and_tails_keep_their_order():
    assert plain_text("<div>intro<p>para</p>tail</div>") == "intro\n\npara\n\ntail"


def test_nfc_and_empty_input():
    assert plain_text("<p>e\u0301</p>") == "\u00e9"
    assert plain_text("") == ""
    assert plain_text("<p> </p><div></div>") == ""
