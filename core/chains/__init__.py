"""Compact-return chains: delegate routes each role's return to the next role and runs it."""
