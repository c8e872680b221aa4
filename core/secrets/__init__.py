"""The secret rules, one module per family; :mod:`core.secret_rules` runs them as one set.

:mod:`~core.secrets.kinds` (the kinds and the mask), :mod:`~core.secrets.shapes`
(secrets by their own shape), :mod:`~core.secrets.contexts` (secrets by what is
around them), :mod:`~core.secrets.bare_tokens` (keys with no name around them).
"""
