"""The writer: the one process that writes the SQLite database, schedules capture jobs and
backs the database up. Everything it records reaches it as a JetStream message."""
