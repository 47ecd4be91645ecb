"""Liveness checks of archived originals: the schedule, the verdict rule."""
