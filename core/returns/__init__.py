"""Compact returns (seed 002): role hand-off files, minimal returns, routing between roles."""
