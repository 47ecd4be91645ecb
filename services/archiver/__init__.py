"""The archiver: a stateless capture worker holding a warm browser; scale out freely."""
