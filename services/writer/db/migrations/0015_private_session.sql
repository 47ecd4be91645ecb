-- Version 14: logged-in captures are private (issue 32). A capture made with the operator's
-- cookies for the site (COOKIES_DIR) prints what the page derives from the session (an
-- e-mail, a CSRF token) into the files that hold the traffic and the page's source: those
-- files (shared/session_files.py: SESSION_KINDS) of such a capture are served only with the
-- admin token and left out of every backup, unless PUBLISH_LOGGED_IN_CAPTURES=true when the
-- capture was recorded.
ALTER TABLE snapshots ADD COLUMN private_session INTEGER NOT NULL DEFAULT 0;
