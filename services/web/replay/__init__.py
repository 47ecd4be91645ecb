"""Replay of a capture's WACZ in the reader's browser (ReplayWeb.page), on an origin of its own.

``bundle``: the pinned npm package (fetched, checked, cached); ``app``: what the replay origin
serves; ``hosts``: which requests are the replay origin's; ``byte_ranges``: the WACZ's Range
requests. Why an origin of its own: docs/architecture.md, "Replay".
"""
