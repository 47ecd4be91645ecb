"""Liveness checks of archived originals, as the capture workers run them: one check
(`check.py`), what its answer is worth as evidence (`check_evidence.py`), and whether the original
changed since the newest capture (`compare.py`). The schedule, the observations and the
verdict rule are the writer's (services/writer/liveness/)."""
