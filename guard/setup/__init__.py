"""Putting guard into an agent client and checking it is there: ``guard install``'s edits, the client's settings files, ``guard doctor``."""
