-- Version 6: the page's own links in its metadata (issue 9): the canonical link it declares,
-- its favicon and its preview image (og:image), from the metadata plugin (raw and rendered
-- HTML merged).

ALTER TABLE link_metadata ADD COLUMN canonical_url TEXT;
ALTER TABLE link_metadata ADD COLUMN favicon TEXT;
ALTER TABLE link_metadata ADD COLUMN image TEXT;
