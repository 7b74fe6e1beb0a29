"""The `oltplab` command line."""
