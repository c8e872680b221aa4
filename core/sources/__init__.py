"""Parsers for transcripts other agents wrote: Claude Code and Codex.

Layout (see docs/import.md):

- ``files``     discovery: which files under ``~/.claude`` and ``~/.codex`` are transcripts
- ``safe_files``  opening only regular files (FIFOs, devices: never), names shown escaped
- ``lines``     JSON Lines readers: forward from a byte offset, backward from the end
- ``claude``, ``codex``  per-format facts (title, cwd, branch, usage) and message conversion
- ``worker``    parses one file from an offset; runs in worker processes, stdlib + orjson only
- ``listing``   a session's row from its file's head and tail (a cold import's first pass)
- ``preview``   newest-first pages of a transcript, read backwards from the end
- ``texts``     the searchable text of a transcript's lines
- ``transcript`` finding a message in a transcript, newest first

The import that drives them, indexes and stores is :mod:`core.importing`.
This package's ``__init__`` stays import-free so worker processes start fast.
"""
