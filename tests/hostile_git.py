"""Repositories whose git configuration names commands: each writes a marker file when run.

Shared by the git-safety tests and the steering trials: a real repository made with
the real git, then ``.git/config`` (or a file it includes) planted with one setting
that would run a command; :func:`ran` says which markers appeared.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

SETTINGS = (
    "fsmonitor",
    "hooks",
    "pager",
    "external_diff",
    "textconv",
    "filter",
    "filter_process",
    "include",
    "signature",
)
"""Every planted kind (one repository each, or all at once with ``"all"``)."""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    return done.stdout.strip()


def _script(folder: Path, name: str, marker: Path, tail: str = "") -> str:
    """An executable that touches ``marker`` (then runs ``tail``); its path, quoted."""
    path = folder / name
    path.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n{tail}\n", encoding="utf-8")
    path.chmod(0o755)
    return shlex.quote(str(path))


def _config(kind: str, scripts: Path, markers: Path, root: Path) -> str:
    mark = markers / kind
    if kind == "fsmonitor":
        return f"[core]\n\tfsmonitor = {_script(scripts, 'fsmonitor', mark)}\n"
    if kind == "hooks":
        hooks = root / "evil-hooks"
        hooks.mkdir(exist_ok=True)
        for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction"):
            _script(hooks, hook, mark)
        return f"[core]\n\thooksPath = {shlex.quote(str(hooks))}\n"
    if kind == "pager":
        cat = _script(scripts, "pager", mark, "cat")
        return f"[core]\n\tpager = {cat}\n[pager]\n\tstatus = {cat}\n\tdiff = {cat}\n"
    if kind == "external_diff":
        return f"[diff]\n\texternal = {_script(scripts, 'extdiff', mark)}\n"
    if kind == "textconv":
        script = _script(scripts, "textconv", mark, 'cat "$1"')
        return f'[diff "evil"]\n\ttextconv = {script}\n\tcommand = {script}\n'
    if kind == "filter":
        script = _script(scripts, "clean", mark, "cat")
        return f'[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n\trequired = true\n'
    if kind == "filter_process":
        return f'[filter "evil"]\n\tprocess = {_script(scripts, "process", mark)}\n'
    if kind == "include":
        included = scripts / "included.config"
        included.write_text(
            f"[core]\n\tfsmonitor = {_script(scripts, 'included-fsmonitor', mark)}\n"
            f'[filter "evil"]\n\tclean = {_script(scripts, "included-clean", mark, "cat")}\n',
            encoding="utf-8",
        )
        return f"[include]\n\tpath = {shlex.quote(str(included))}\n"
    if kind == "signature":
        gpg = _script(scripts, "gpg", mark)
        return f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {gpg}\n"
    raise ValueError(kind)


def hostile_repo(root: Path, markers: Path, kinds: tuple[str, ...] = SETTINGS) -> Path:
    """A repository at ``root`` with a commit, a changed file git must read to judge
    (same size, new time), an untracked file, ``.gitattributes`` sending every file
    through the ``evil`` diff and filter drivers, and each of ``kinds`` planted in its
    configuration; the markers they would write go under ``markers``."""
    root.mkdir(parents=True, exist_ok=True)
    markers.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "app.py").write_text("print('v1')\n", encoding="utf-8")
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    git(root, "branch", "feature")
    # Same size, other bytes, an older time: git must read the file to know it changed.
    (root / "src" / "app.py").write_text("print('v2')\n", encoding="utf-8")
    os.utime(root / "src" / "app.py", (1_000_000_000, 1_000_000_000))
    (root / "notes.txt").write_text("scratch\n", encoding="utf-8")
    scripts = root.parent / f"{root.name}-scripts"
    scripts.mkdir(exist_ok=True)
    with (root / ".git" / "config").open("a", encoding="utf-8") as config:
        for kind in kinds:
            config.write(_config(kind, scripts, markers, root))
    return root


def ran(markers: Path) -> list[str]:
    """The planted commands that ran (their marker files)."""
    try:
        return sorted(os.listdir(markers))
    except FileNotFoundError:
        return []
