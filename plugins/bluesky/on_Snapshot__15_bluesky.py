"""Hook (step 1, before the browser): the Bluesky post by its API steps: public AppView
(resolveHandle, getPostThread with parents and replies; images from the author's blob
store).

The chain and its outcomes: shared/platforms/bluesky.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
