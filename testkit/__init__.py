"""Shared test helpers: fixture servers, a fake forum, the writer harness, the link corpora.

Used by ``tests/``, ``plugins/*/tests/`` and ``bench/``; never by product code (a rule in
``tests/test_architecture.py``). Helpers used by one test folder only stay in that folder.
Modules:

- ``httpserver``: a threaded HTTP fixture server on 127.0.0.1 with scripted replies;
- ``forum``: a ``posts.rss`` built from posts;
- ``writer_harness``: builders of writer inputs and an in-process writer over a temp database;
- ``live_writer``: a real writer process (``python -m services.writer``) and NATS helpers;
- ``link_corpus``, ``link_scores``: the third-party corpora (skipped when absent) and scoring.
"""
