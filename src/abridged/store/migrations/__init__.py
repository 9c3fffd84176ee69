"""Alembic migrations of the store's schema, run programmatically by ``abridged.store.migrate``."""
