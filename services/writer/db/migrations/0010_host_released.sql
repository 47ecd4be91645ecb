-- Version 10: a running job can be done talking to its link's host before it is done. The
-- worker says so (`capture.released`) once every hook that contacts the host has ended; the
-- scheduler then stops counting the job against its domain's PER_DOMAIN_CONCURRENCY (still
-- against WORKER_CONCURRENCY), so the next capture of the host starts while this one
-- post-processes and uploads. Set for one attempt and run; cleared by the next dispatch, and
-- by the first event of a redelivered run (which talks to the host again).

ALTER TABLE archive_jobs ADD COLUMN host_released_at TEXT;
ALTER TABLE archive_jobs ADD COLUMN host_released_run INTEGER;
