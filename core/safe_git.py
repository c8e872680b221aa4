"""How delegate runs git: every git process it starts, with nothing of a repository's
own configuration that names a command run.

A repository's ``.git/config`` (or a file it includes) can name commands git runs on
its own: ``core.fsmonitor``, hooks (``core.hooksPath``), pagers, an external diff
and textconv (so a diff is always run ``--no-ext-diff --no-textconv``), filter
drivers (which ``.gitattributes`` attach to paths), a lazy fetch from a promisor
remote (any transport, ``ext::`` included). delegate runs git on
folders a transcript names, so none of them may run: the command-running settings
are overridden on git's command line (command-line configuration wins over every
file), every filter driver the configuration defines is emptied (git cannot be told
"no filters" at once, so each ``filter.<name>.*`` found is), submodules are not
recursed into, and the caller's ``GIT_*`` environment is dropped (a ``GIT_DIR``
would point git elsewhere). ``safe.directory`` is respected, never widened: git
refuses a repository another user owns, and so does delegate. Blocking: call from a
thread in async code.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 30.0
MAX_FILTERS = 200  # filter drivers neutralised at most (more is no real configuration)

SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),  # a hook git would run on every status
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.untrackedCache", "false"),
    ("log.showSignature", "false"),  # gpg.program is a command too
    ("credential.helper", ""),
    ("protocol.allow", "never"),  # no transport at all (a promisor remote's lazy fetch)
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "all"),
)
"""Settings that would run a command, overridden for every git delegate starts."""

GLOBAL_OPTIONS = ("--no-pager", "--no-optional-locks", "--literal-pathspecs")
"""Read-only (no index refresh written), no pager, a path is a path (never a pattern)."""

_FILTER_KEYS = ("clean", "smudge", "process")


@dataclass(frozen=True, slots=True)
class GitResult:
    """What one git process answered: its exit status and output (stdout as text)."""

    returncode: int
    stdout: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def git_env(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The environment git runs in: the caller's without any ``GIT_*`` (or ``SUDO_UID``,
    which would make git accept a repository the invoking user owns as safe), no prompt,
    no pager, no lazy fetch, and ``extra`` configuration (after :data:`SAFE_CONFIG`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "SUDO_UID"}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_LITERAL_PATHSPECS="1",
    )
    pairs = [*SAFE_CONFIG, *extra]
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _argv(root: Path, args: Sequence[str]) -> list[str]:
    options = [item for key, value in SAFE_CONFIG for item in ("-c", f"{key}={value}")]
    return ["git", *GLOBAL_OPTIONS, *options, "-C", str(root), *args]


def _spawn(root: Path, args: Sequence[str], env: dict[str, str]) -> GitResult | None:
    try:
        done = subprocess.run(
            _argv(root, args),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return GitResult(done.returncode, done.stdout.decode("utf-8", "replace"))


def filter_overrides(root: Path) -> list[tuple[str, str]]:
    """Every filter driver the configuration seen in ``root`` defines (includes
    followed), emptied: git then runs no clean, smudge or process command for a path
    ``.gitattributes`` attaches it to, and does not insist on one (``required``)."""
    found = _spawn(root, ("config", "--list", "--name-only", "-z"), git_env())
    if found is None or not found.ok:
        return []
    drivers: dict[str, None] = {}
    for name in found.stdout.split("\0"):
        section, _, rest = name.partition(".")
        driver = rest.rpartition(".")[0]
        if section.lower() == "filter" and driver and "\n" not in driver:
            drivers.setdefault(driver)
            if len(drivers) >= MAX_FILTERS:
                break
    pairs = []
    for driver in drivers:
        pairs += [(f"filter.{driver}.{key}", "") for key in _FILTER_KEYS]
        pairs.append((f"filter.{driver}.required", "false"))
    return pairs


def run_git(root: Path, *args: str) -> GitResult | None:
    """git ``args`` run in ``root`` as delegate runs git (see the module); None when git
    could not run at all (not installed, too slow). A refusal (not a repository, one
    another user owns) is a non-zero :attr:`GitResult.returncode`."""
    return _spawn(root, args, git_env(filter_overrides(root)))


def git_output(root: Path, *args: str) -> str | None:
    """git's output in ``root``, or None when it fails (not installed, refused, slow)."""
    done = run_git(root, *args)
    return done.stdout if done is not None and done.ok else None
