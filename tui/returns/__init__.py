"""The return panel: the group view (``f3``), what the panel reads of compact returns,
and how returns look."""
