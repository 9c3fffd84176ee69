"""The engine: pure decisions over the core (pruning, compaction plans); no I/O."""
