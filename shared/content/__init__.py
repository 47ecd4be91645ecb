"""Pure functions over page HTML: the article (extract), a safe copy of it (sanitize), its
search text (canonical), and the page's metadata (metadata). No I/O: plugins read the files
and call these."""
