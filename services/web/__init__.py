"""The web service: public UI and JSON API over a read-only view of the database."""
