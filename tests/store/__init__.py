"""Tests of the store, each against a real SQLite file and a real PostgreSQL server."""
