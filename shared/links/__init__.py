"""Link intelligence: what a post links to, in which forms, and whether to archive it.

Pure code, no I/O (the only data read is the shipped ``clearurls_rules.json`` and
tldextract's bundled public suffix list). Modules:

- ``extract``: quote-aware extraction from cooked HTML, plain-text/BBCode fallback;
- ``urlparts``: strict normalising URL parser;
- ``tracking``: tracking-parameter stripping (ClearURLs rules, see ``CLEARURLS.md``);
- ``sites``: table-driven site rules (Reddit, YouTube, X, ...);
- ``canonical``: ``canonicalize`` (original / normalized / canonical forms);
- ``domains``: registrable domain (offline PSL), https-only hosts;
- ``occurrences``: the per-post pipeline (extract, canonicalise, de-duplicate);
- ``policy``: ``DomainPolicy`` (whether a link is archived: the writer's decision).
"""

from shared.links.canonical import CanonicalUrl, RejectedUrl, canonicalize
from shared.links.domains import registrable_domain
from shared.links.link_extract import ExtractedLink, extract_links, extract_links_text
from shared.links.occurrences import PostLinks, analyze_post, occurrences_for_post
from shared.links.policy import DomainPolicy
from shared.links.urlparts import MAX_URL_LENGTH

__all__ = [
    "MAX_URL_LENGTH",
    "CanonicalUrl",
    "DomainPolicy",
    "ExtractedLink",
    "PostLinks",
    "RejectedUrl",
    "analyze_post",
    "canonicalize",
    "extract_links",
    "extract_links_text",
    "occurrences_for_post",
    "registrable_domain",
]
