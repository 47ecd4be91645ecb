"""Read queries of the web (SQLAlchemy Core over a read-only SQLite connection).

``visibility.py`` is the one place that says which links the public may see and which are
listed as archives; every other query builds on it.
"""
