"""Importers for transcripts other agents wrote: Claude Code and Codex.

Layout (see docs/import.md):

- ``files``     discovery: which files under ``~/.claude`` and ``~/.codex`` are transcripts
- ``safe_files``  opening only regular files (FIFOs, devices: never), names shown escaped
- ``lines``     JSON Lines readers: forward from a byte offset, backward from the end
- ``claude``, ``codex``  per-format facts (title, cwd, branch, usage) and message conversion
- ``worker``    parses one file from an offset; runs in worker processes, stdlib + orjson only
- ``importer``  the incremental scan: stat, plan, parse, commit in batches, report
- ``preview``   newest-first pages of a transcript, read backwards from the end
- ``report``    the pydantic report and progress models

This package's ``__init__`` stays import-free so worker processes start fast.
"""
