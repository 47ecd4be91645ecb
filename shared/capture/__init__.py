"""The capture worker shared by the archiver and media services."""
