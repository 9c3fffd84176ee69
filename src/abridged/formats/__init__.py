"""Edges: converters between provider wire formats, transcript files and the core model."""
