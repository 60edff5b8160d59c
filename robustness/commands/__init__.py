"""Bodies of the CLI commands, kept apart from argument parsing."""
