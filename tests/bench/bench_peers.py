"""What the speed benchmarks share: the peers' binaries, ccusage, the load, ratios.

The peers are the real tools, pinned: Claude Code and Codex as the CI installs
them (``.ci/run``, into ``.cache/npm-agents``), and ccusage, which
:func:`ensure_ccusage` installs there from the npm registry when it is missing.
Every figure is printed with the machine's load average beside it, because the
machine is shared: the benchmarks measure delegate and its reference in the
same rounds, interleaved, and give ratios.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = ROOT / ".cache" / "npm-agents"
AGENTS_BIN = AGENTS_DIR / "node_modules" / ".bin"
CCUSAGE_VERSION = "20.0.24"
CCUSAGE_ARGS = ("daily", "--json", "--offline")
WAIT_S = 60.0
Out = Callable[[str], None]


def load_now() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def machine_cpu_s() -> float | None:
    """CPU seconds the whole machine has spent since boot (user, nice, system, irq,
    softirq, from /proc/stat); None without /proc."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class MachineCpu:
    """The machine's CPU seconds over a ``with`` block (``seconds``; None without /proc).

    It counts every process a measured command starts, even workers their
    forkserver reaps (which a child's rusage misses), and whatever else ran
    meanwhile: read it beside the load.
    """

    seconds: float | None = None

    def __enter__(self) -> MachineCpu:
        self._start = machine_cpu_s()
        return self

    def __exit__(self, *exc: object) -> None:
        end = machine_cpu_s()
        if self._start is not None and end is not None:
            self.seconds = end - self._start


@dataclass
class Load:
    """The 1-minute load average noted at each sample of a figure."""

    seen: list[float] = field(default_factory=list)

    def note(self) -> None:
        self.seen.append(os.getloadavg()[0])

    def __str__(self) -> str:
        if not self.seen:
            return load_now()
        low, high = min(self.seen), max(self.seen)
        return f"load {low:.2f}" if high - low < 0.005 else f"load {low:.2f}-{high:.2f}"


def ratio(ours: float, reference: float) -> str:
    """``x0.42``: ours over the reference (below 1: ours is faster)."""
    return f"x{ours / reference:.2f}" if reference > 0 else "x?"


def paired_ratio(ours: list[float], reference: list[float]) -> str:
    """The median of the per-round ratios (each round ran both, one after the other)."""
    pairs = [a / b for a, b in zip(ours, reference, strict=False) if b > 0]
    return f"x{statistics.median(pairs):.2f}" if pairs else "x?"


def _version(binary: Path) -> str:
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=WAIT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


def ensure_ccusage(out: Out) -> Path | None:
    """ccusage at the pinned version, installed into ``.cache/npm-agents`` when missing."""
    binary = AGENTS_BIN / "ccusage"
    if binary.exists() and CCUSAGE_VERSION in _version(binary):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        out("ccusage: not installed and npm not found")
        return None
    out(f"ccusage: installing ccusage@{CCUSAGE_VERSION} into {AGENTS_DIR.relative_to(ROOT)}")
    AGENTS_DIR.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(AGENTS_DIR), "--no-audit", "--no-fund",
         "--save-exact", "--loglevel=error", f"ccusage@{CCUSAGE_VERSION}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0 or CCUSAGE_VERSION not in _version(binary):
        out(f"ccusage: install failed: {(done.stderr or done.stdout).strip()[:300]}")
        return None
    return binary


def ccusage_env(corpus: Path, home: Path) -> dict[str, str]:
    """ccusage over the corpus alone: both tools' folders, an empty HOME."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(corpus / "claude"),
        "CODEX_HOME": str(corpus / "codex"),
        "PATH": os.environ.get("PATH", ""),
        "TERM": "dumb",
    }


def run_ccusage(binary: Path, env: dict[str, str]) -> tuple[float, str | None, int]:
    """One whole ``ccusage daily --json --offline``: (seconds, failure, days reported)."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [str(binary), *CCUSAGE_ARGS], env=env, capture_output=True, text=True, timeout=WAIT_S
        )
    except subprocess.TimeoutExpired:
        return WAIT_S, f"no answer within {WAIT_S:.0f} s", 0
    took = time.perf_counter() - t0
    if done.returncode != 0 or not done.stdout.lstrip().startswith("{"):
        return took, f"exit {done.returncode}: {(done.stderr or done.stdout)[:200]}", 0
    return took, None, len(json.loads(done.stdout).get("daily", []))
