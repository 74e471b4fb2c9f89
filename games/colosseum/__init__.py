"""colosseum: not built yet."""
