-- Version 9: takedown tombstones. A takedown must outlive the rows of its link: every backup
-- is the publishable database, which deletes those rows, so a database restored from one
-- would archive and publish the URL again. One row per form of a taken-down link's URL
-- (original, normalized, canonical, final, every alias), as a keyed hash, never the URL text:
-- the publishable backup keeps this table; a link created for a URL one of whose forms
-- matches is born taken down (services/writer/tombstones.py).

CREATE TABLE takedown_tombstones (
    digest     TEXT PRIMARY KEY,  -- hex HMAC-SHA256 of one form of the URL under TAKEDOWN_KEY
    key_id     TEXT NOT NULL,     -- which key made it (a hash of the key, not the key)
    created_at TEXT NOT NULL
) WITHOUT ROWID;
