-- Version 10: a running job can be done talking to its link's host before it is done. The
-- worker says so (`capture.released`) once every hook that contacts the host has ended; the
-- scheduler then stops counting the job against its domain's PER_DOMAIN_CONCURRENCY (still
-- against WORKER_CONCURRENCY), so the next capture of the host starts while this one
-- post-processes and uploads. `host_released_run` is the run of the attempt the state is
-- about: a redelivered run's first event clears `host_released_at` and raises it (that run
-- talks to the host again), so a late release of an older run changes nothing; the next
-- dispatch clears both.

ALTER TABLE archive_jobs ADD COLUMN host_released_at TEXT;
ALTER TABLE archive_jobs ADD COLUMN host_released_run INTEGER;
