"""Context documents (capsules, hand-offs, compact returns): templates, validation,
facts, atomic files and retention. The registry table is ``store.documents``."""
