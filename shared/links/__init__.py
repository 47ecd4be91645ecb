"""Link intelligence: what a post links to, in which forms, and whether to archive it.

Pure code, no I/O (the only data read is the shipped ``clearurls_rules.json`` and
tldextract's bundled public suffix list). Modules:

- ``link_extract``: quote-aware extraction from cooked HTML, plain-text/BBCode fallback;
- ``urlparts``: strict normalising URL parser;
- ``tracking``: tracking-parameter stripping (ClearURLs rules, see ``CLEARURLS.md``);
- ``sites``: table-driven site rules (Reddit, YouTube, X, ...);
- ``canonical``: ``canonicalize`` (original / normalized / canonical forms);
- ``domains``: registrable domain (offline PSL), https-only hosts;
- ``occurrences``: the per-post pipeline (extract, canonicalise, de-duplicate);
- ``policy``: ``DomainPolicy`` (whether a link is archived: the writer's decision).

Import from the module that holds a name: this package imports nothing, so a process that
needs only the registrable domain (a hook, the capture slots, `dla`) does not load the
extraction, the post pipeline and the message models with it (~300 ms at start).
"""
