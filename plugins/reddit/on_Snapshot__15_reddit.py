"""Hook (step 1, before the browser): the Reddit link by its chain: the old.reddit page
(www.reddit's when that one is a block page, a login wall or the over-18 gate) kept as
`page.html`, then for a thread the permalink's `.json` (`thread.json`, `thread.html`,
`meta.json` and the post).

The chain and its outcomes: shared/platforms/reddit.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
