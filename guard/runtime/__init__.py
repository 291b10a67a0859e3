"""The runtime layer: the registry, matching, the engine and the gate, the one decision path every entry point goes through."""
