"""Page content: the article (extract), a safe copy of it (sanitize), its search text
(plaintext), the page's metadata (metadata), and reading the captures those are made from
(inputs). Everything but `inputs` is pure; the plugins stay thin and call these."""
