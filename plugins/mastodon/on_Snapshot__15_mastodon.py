"""Hook (step 1, before the browser): the Mastodon status by its instance's public API
(`/api/v1/statuses/<id>`, and the statuses it replies to).

The chain and its outcomes: shared/platforms/mastodon.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
