"""Drafting context documents by asking a session for them, through the orchestrator.

``capsule_request``: send a session the capsule prompt as a follow-up, take the capsule
from its answer, check it and save it as a draft for a person to review.
"""
