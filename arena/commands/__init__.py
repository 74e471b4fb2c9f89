"""One module per ``arena`` subcommand (registered in :mod:`arena.cli`)."""
