"""Woodpecker-specific data and rules, given to the generic guard machinery."""
