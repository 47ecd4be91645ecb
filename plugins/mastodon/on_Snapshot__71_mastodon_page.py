"""Hook (step 7, after the browser's captures): the Mastodon post as the rendered page
shows it, when no API step found it (skipped otherwise); a wall is recorded as such.

See shared/platforms/page.py and shared/platforms/hook.py.
"""

import sys

from shared.platforms.hook import page_main

if __name__ == "__main__":
    sys.exit(page_main(__file__))
