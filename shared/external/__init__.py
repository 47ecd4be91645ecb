"""Submitting archived links to the public archives: the Internet Archive's Wayback Machine
(`wayback`, Save Page Now 2) and archive.today (`archive_today`); the settings, each
service's protocol and what its answers mean (`ExternalAnswer`)."""

TITLES = {"wayback": "the Wayback Machine", "archive_today": "archive.today"}
"""Each service as a reader is told of it."""
