"""The abridged command line."""
