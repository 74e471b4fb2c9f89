"""sorry: not built yet."""
