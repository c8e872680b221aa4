"""Helpers the command line and the panel share: formats, ages, safe text, keys, the
keymap check, context levels, worker failures."""
