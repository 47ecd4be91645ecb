"""Hook (step 1, before the browser): the X post by its API steps: syndication endpoint, then
the fxtwitter API.

The chain and its outcomes: shared/platforms/x.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
