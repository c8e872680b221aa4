"""The capsule skeleton: front matter, then each section of the outline with a hint.

Full (the seed's eight sections, 1,200 tokens) or miniature (three sections, 300 tokens)
per ``front.template``. The hints are HTML comments, one line each, so the skeleton
renders clean and validates clean; only its content is missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.capsules.front_matter import render_front_matter
from core.capsules.model import MAX_HIGHLIGHTS, FrontMatter

SECTION_HINTS: Mapping[str, str] = {
    "Mission Snapshot": "User intent and current status, in a few bullets.",
    "Key Decisions & Rationale": "Numbered decisions, each with why it was taken.",
    "Active Workstreams": "Each workstream: scope, owner, blockers.",
    "Pending Actions": "- [ ] item (owner, trigger); newest and blocking first.",
    "Knowledge Base": "Files, API contracts, docs: reference them by path, do not re-explain.",
    "Risks & Watchpoints": "Each risk with its mitigation; flag anything out of date here.",
    "Transcript Highlights": (
        f"At most {MAX_HIGHLIGHTS} bullets, each citing a timestamp, message <id> or commit <hash>."
    ),
    "Exploratory Threads & User Preferences": (
        "Open ideas and user preferences: topic, hypothesis, next discovery step."
    ),
}
"""What each section asks for, shown as a one-line comment under its heading."""


def hint_comment(title: str) -> str:
    """The hint line under a section's heading (``<!-- ... -->``)."""
    return f"<!-- {SECTION_HINTS[title]} -->"


def capsule_template(front: FrontMatter) -> str:
    """The skeleton of a capsule with ``front`` as its front matter: full or mini per
    ``front.template``, each section with a one-line hint and a blank line to fill."""
    sections = "\n".join(f"# {title}\n{hint_comment(title)}\n" for title in front.outline)
    return render_front_matter(front) + sections
