"""Statistics over the long table: agreement, PSS, POSIX, spread, GEE and tests."""
