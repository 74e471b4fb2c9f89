"""Leagues: the league file and its keys, schedules, the runner and its backends (local workers, Ray)."""
