-- Version 21: which delivery of its job recorded each file (`attempt`, and `run`: the
-- JetStream delivery within the attempt, 1 = first). A retried capture keeps every attempt's
-- files (docs/architecture.md, "No stored object ever changes"); these say which is which
-- (the link page's Downloads). NULL: recorded before version 21, or a timestamp token (asked
-- for after the capture, of its evidence). Written by services/writer/artifacts.py only.
ALTER TABLE archive_artifacts ADD COLUMN attempt INTEGER;
ALTER TABLE archive_artifacts ADD COLUMN run INTEGER;
