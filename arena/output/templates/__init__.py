"""Files ``arena new-bot`` writes (package data)."""
