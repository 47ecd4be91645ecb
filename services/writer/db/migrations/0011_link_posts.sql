-- Version 11: platform posts. A platform link's post (shared/platforms/post.py: author, time,
-- text, media, counts, the posts it replies to and quotes) as the capture's platform hook found
-- it, one row per link (the newest capture's; a post the platform now shows as removed does
-- not replace one it showed whole). Its files (post.json, the images) are artifacts of that
-- snapshot in that plugin's folder, so the web renders the post card from this row and the
-- artifacts table, without reading S3. Written by services/writer/posts.py.

CREATE TABLE link_posts (
    link_id       INTEGER PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    snapshot_id   TEXT NOT NULL,   -- the capture that found it
    plugin        TEXT NOT NULL,   -- whose folder holds its files
    platform      TEXT NOT NULL,   -- x, bluesky, tiktok, instagram, youtube, reddit ...
    post_id       TEXT NOT NULL,   -- the platform's id of the post
    source        TEXT NOT NULL,   -- the step of the chain that produced it
    author_name   TEXT,
    author_handle TEXT,
    created_at    TEXT,            -- when it was posted (ISO 8601, UTC)
    unavailable   TEXT,            -- the platform's words when it shows the post as removed
    post_json     TEXT NOT NULL,   -- the whole post, as the hook kept it
    captured_at   TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX link_posts_platform ON link_posts (platform, post_id);

-- The full-text index gains a post_text column: the post's title, author and text and those
-- of the posts it quotes or replies to (FTS5 tables cannot add columns: rebuilt).
ALTER TABLE link_text_fts RENAME TO link_text_fts_v3;
CREATE VIRTUAL TABLE link_text_fts USING fts5 (
    link_id UNINDEXED, title, url, domain, extracted_text, media_text, post_text,
    tokenize = 'porter unicode61'
);
INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text, media_text, post_text)
    SELECT rowid, link_id, title, url, domain, extracted_text, media_text, '' FROM link_text_fts_v3;
DROP TABLE link_text_fts_v3;
