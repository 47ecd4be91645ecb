"""Hook (step 1, before the browser): the YouTube post by its API steps: yt-dlp's extraction
(top comments by YOUTUBE_COMMENTS).

The chain and its outcomes: shared/platforms/youtube.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
