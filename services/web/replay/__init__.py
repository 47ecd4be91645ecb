"""Replay of a capture's WACZ in the reader's browser (ReplayWeb.page), on an origin of its own.

``bundle``: the pinned npm package (fetched, checked, cached); ``app``: what the replay origin
serves; ``hosts``: which requests are the replay origin's (the WACZ's Range requests:
services/web/byte_ranges.py). Why an origin of its own: docs/architecture.md, "Replay".
"""
