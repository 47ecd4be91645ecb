-- Version 4: the web lists links newest archive first, by coalesce(last_archived_at,
-- first_seen_at) (see services/web/queries/visibility.py); this index serves that order
-- and its cursor pages without sorting the whole table.

CREATE INDEX links_listed ON links (coalesce(last_archived_at, first_seen_at), id);
