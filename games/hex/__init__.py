"""hex: not built yet."""
