"""Hook (step 1, before the browser): the Streamable post by its API steps: yt-dlp's
extraction, then oEmbed.

The chain and its outcomes: shared/platforms/streamable.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
