"""The capsule editor: its screen, its own app (``delegate capsule edit``), its edits
and checks, and what the panel knows of capsules."""
