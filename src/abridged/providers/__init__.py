"""Edges that talk to providers: limits probe, model registry snapshot, exact tokenizers."""
