"""The egress proxy: every request of a snapshot's browser goes through it (`proxy.py`).

`policy.py` judges each target and keeps the page's log (refused, failed, cut, warmed) and
the marks of unresponsive hosts; `framing.py` parses and frames HTTP/1.1 (httptools);
`interception.py` ends the browser's TLS with the archiver's own CA and opens verified TLS
to servers; `exchange.py` relays one response within the byte cap, counted by its decoded
size (shared.fetching.decoding: gzip, deflate, br, zstd), and hands the exchange to
`traffic.py`, the snapshot's browser WARC; `warm.py` reads a passing document for the
origins it will load from. What is bounded, exactly: docs/architecture.md, "What the egress
bounds, exactly".
"""

from services.archiver.egress.policy import ERROR_HEADER, EgressLog, EgressPolicy, UpstreamError
from services.archiver.egress.proxy import EgressProxy

__all__ = ["ERROR_HEADER", "EgressLog", "EgressPolicy", "EgressProxy", "UpstreamError"]
