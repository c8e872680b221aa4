"""Context accounting: model windows, meters and trends, per-agent windows, thresholds.

Below the orchestrator: pure functions and store queries, no runs.
"""
