"""The pure core: tool catalogue, guard policy, fingerprints, tokens and sealed state. No I/O."""
