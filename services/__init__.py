"""The product's services: one folder, one process each."""
