"""The guard machinery: policy, fingerprints, questions, tokens, sealed state. Forge-agnostic."""
