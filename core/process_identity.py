"""Who a process is, in a form that survives pid reuse and reboots.

A run records its owner as ``(host, pid, start time)``: the host identity is
the kernel's boot id plus the pid namespace (so a reboot, or a container with
its own pid numbering, is a different host), the start time is the process's
start in clock ticks since boot (``/proc/<pid>/stat``, field 22). A pid that
is alive with a different start time was reused: its owner is gone.

Linux reads ``/proc``; elsewhere the identity falls back to the machine id or
the hostname and the start time to None (then only "pid alive" is checked).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

Liveness = Literal["alive", "gone", "unknown"]


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process as another process on another day can recognise it."""

    host: str  # the hostname, for people
    host_id: str  # boot id + pid namespace (or a fallback): what a pid means
    pid: int
    started: int | None  # start time in clock ticks since boot; None if unknown


def read_small_text(path: str) -> str | None:
    """A small ASCII file's stripped text (a /proc entry, an id file); None if unreadable."""
    try:
        return Path(path).read_text(encoding="ascii", errors="replace").strip() or None
    except OSError:
        return None


@cache
def host_id() -> str:
    """This host's identity for pids: boot id and pid namespace, else the machine id."""
    boot = read_small_text("/proc/sys/kernel/random/boot_id")
    if boot is not None:
        try:
            namespace = os.readlink("/proc/self/ns/pid")
        except OSError:
            namespace = ""
        return f"boot:{boot}/{namespace}"
    machine = read_small_text("/etc/machine-id") or read_small_text("/var/lib/dbus/machine-id")
    if machine is not None:
        return f"machine:{machine}"
    return f"host:{socket.gethostname()}"


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None if unknown or gone."""
    stat = read_small_text(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall: starttime
    except (IndexError, ValueError):
        return None


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and only waits to be reaped (state ``Z``): it is dead.

    A detached worker's parent may be long gone and the reaper slow; signals
    still "reach" a zombie, so only its state tells.
    """
    stat = read_small_text(f"/proc/{pid}/stat")
    if stat is None:
        return False
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def current() -> ProcessIdentity:
    """This process."""
    pid = os.getpid()
    return ProcessIdentity(socket.gethostname(), host_id(), pid, start_time(pid))


def of_pid(pid: int) -> ProcessIdentity:
    """Another process of this host (e.g. an agent CLI we started)."""
    return ProcessIdentity(socket.gethostname(), host_id(), pid, start_time(pid))


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OverflowError:
        return False
    return True


def liveness(
    host: str | None, owner_host_id: str | None, pid: int | None, started: int | None
) -> Liveness:
    """Whether a recorded process still runs: ``alive``, ``gone`` or ``unknown``.

    ``unknown`` is a process of another host: only that host (or, later, a
    heartbeat it writes) can tell. A record without a host id (written before
    host ids were recorded) is judged by hostname and pid alone.
    """
    if pid is None:
        return "unknown"
    ours = host_id()
    if owner_host_id is None:
        if host != socket.gethostname():
            return "unknown"
        return "alive" if _pid_exists(pid) else "gone"
    if owner_host_id != ours:
        # Same machine, another boot: nothing of that boot survives a reboot.
        if host == socket.gethostname() and _same_machine_other_boot(owner_host_id, ours):
            return "gone"
        return "unknown"  # hook: another host's runs are judged by its heartbeat
    if not _pid_exists(pid) or _zombie(pid):
        return "gone"
    if started is None:
        return "alive"
    now = start_time(pid)
    if now is None:
        return "alive"  # cannot read its start time: give it the benefit of the doubt
    return "alive" if now == started else "gone"


def _same_machine_other_boot(theirs: str, ours: str) -> bool:
    """Both boot ids of this kernel's kind, with the same pid namespace, but a new boot."""
    if not (theirs.startswith("boot:") and ours.startswith("boot:")):
        return False
    their_boot, _, their_ns = theirs.partition("/")
    our_boot, _, our_ns = ours.partition("/")
    return their_boot != our_boot and their_ns == our_ns
