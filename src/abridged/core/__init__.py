"""The pure core: message model, tokens, context windows, turns and budget; no I/O."""
