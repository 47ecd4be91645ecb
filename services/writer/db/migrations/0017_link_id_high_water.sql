-- Version 17: link ids are never given twice, also after a restore (issue 35). The largest
-- link id ever given is kept here and a new link gets the next one (linkstore.upsert_link),
-- not SQLite's largest-in-use plus one: a merged or taken-down link's id (its
-- archives/<id>/ prefix, its queued s3_removals row) is not a new link's.
-- Not private: the publishable backup keeps it, so a database restored from any backup
-- goes on from there; it tells no more than the gaps in the public ids already do (and
-- whether the newest ids were taken down). A restore from the bucket raises it further to
-- the largest archives/<id>/ prefix found (links made after the backup).
CREATE TABLE id_high_water (
    name   TEXT PRIMARY KEY,
    max_id INTEGER NOT NULL
);
INSERT INTO id_high_water (name, max_id) SELECT 'links', coalesce(max(id), 0) FROM links;
CREATE TRIGGER links_id_high_water AFTER INSERT ON links BEGIN
    UPDATE id_high_water SET max_id = max(max_id, NEW.id) WHERE name = 'links';
END;
