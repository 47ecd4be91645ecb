"""Hook (step 1, before the browser): the TikTok post by its API steps: yt-dlp's extraction,
then the post page's data (photo slideshows), then oEmbed.

The chain and its outcomes: shared/platforms/tiktok.py; what is kept: shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import api_main

if __name__ == "__main__":
    sys.exit(api_main(__file__))
