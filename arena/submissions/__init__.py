"""A bot entering arena: its snapshot, taken safely from disk, validated, checked for duplicates."""
