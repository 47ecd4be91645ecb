"""Which files of a logged-in capture are private: the one list.

A capture made with the operator's cookies for the site (COOKIES_DIR, shared.cookies) has
its cookie values scrubbed and its Cookie, Set-Cookie and Authorization headers left out,
but a logged-in page also prints what it derives from the session: the account's e-mail, a
CSRF token, in its HTML and in the API answers its scripts fetch. The files that hold the
page's source and traffic carry those; unless PUBLISH_LOGGED_IN_CAPTURES is true, the writer
marks such a capture `private_session` and the web serves these kinds of it only with the
admin token (listed with a lock), and no backup holds them. The screenshot, the PDF, the
post and the reader text stay public: they show what any reader of the page saw.
"""

from __future__ import annotations

SESSION_KINDS: frozenset[str] = frozenset({"warc", "wacz", "raw_response", "dom"})
"""Artifact kinds that may hold what a logged-in page derives from the session: the traffic
WARCs, the WACZ, the raw response and the rendered DOM."""
