"""A transcript steering where delegate writes, what git runs, and which file it quotes.

Three kinds of trial, each round:

- **write folder**: the decision (``core.documents.write_folder``) for a session whose
  ``cwd`` is ``/``, ``/etc``, ``/usr/lib``, ``/proc``, ``/tmp``, the home folder and the
  folder above it, a folder outside git, a folder holding only a ``.git/config``, a
  repository another user owns (as root), a link to ``/etc``, a missing folder and a
  relative path: every one goes under the data folder; our own repository does not;
- **git**: a real repository per planted setting (``tests/hostile_git.py``: fsmonitor,
  hooks, pagers, external diff, textconv, filters, an include, a signature program),
  and every entry of delegate's that runs git on it: no marker may appear;
- **document paths**: ``delegate handoff show`` and ``continue`` (real processes) given
  ``/etc/passwd``, ``/proc/self/environ``, ``..`` out of a repository, links out, a
  linked ``.delegate/handoffs``: a typed error, nothing of the file quoted;
- **watch**: a real ``delegate watch`` over transcripts (recent, past the hand-off
  level) naming each hostile folder: every hand-off lands under the data folder or
  in our own repository, nothing is written anywhere else, no marker appears.

A bad outcome (a loss) is a write outside the trusted folders, a marker executed, or
a foreign file's content quoted.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from hostile_git import SETTINGS, hostile_repo, ran
from reliability_support import Cli, Tally, cli_problem, new_tag, run_cli, survivors, timed

from core.capsules.drift import check_drift, reference_for
from core.capsules.merged import superseded_capsules
from core.capsules.model import Reference
from core.documents.handoff_facts import git_facts
from core.documents.write_folder import write_folder

SENTINEL = "SENTINEL-steering-do-not-quote"
WATCH_DEADLINE_S = 90.0
MODEL = "claude-opus-4-5-20251101"


def _config_only(folder: Path, markers: Path) -> Path:
    (folder / ".git").mkdir(parents=True)
    script = folder.parent / f"{folder.name}-fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(markers / 'config-only'))}\n")
    script.chmod(0o755)
    (folder / ".git" / "config").write_text(f"[core]\n\tfsmonitor = {script}\n")
    return folder


def _chown_tree(root: Path, uid: int) -> None:
    for folder, _dirs, names in os.walk(root):
        for path in (folder, *(os.path.join(folder, n) for n in names)):
            os.lchown(path, uid, uid)


def hostile_cwds(work: Path, home: Path, markers: Path) -> dict[str, str]:
    """Shape -> a ``cwd`` no hand-off may be written in."""
    plain = work / "plain"
    plain.mkdir(parents=True)
    link = work / "link-to-etc"
    link.symlink_to("/etc")
    cwds = {
        "root": "/",
        "etc": "/etc",
        "usr_lib": "/usr/lib",
        "proc": "/proc",
        "tmp": "/tmp",
        "home": str(home),
        "home_parent": str(home.parent),
        "not_git": str(plain),
        "config_only": str(_config_only(work / "config-only", markers)),
        "link_to_etc": str(link),
        "missing": str(work / "gone"),
        "relative": "some/where",
    }
    if os.geteuid() == 0:
        theirs = hostile_repo(work / "theirs", markers)
        _chown_tree(theirs, 12345)
        cwds["other_uid"] = str(theirs)
        ours = hostile_repo(work / "theirs-linked-target", markers)
        _chown_tree(ours, 12345)
        (work / "link-to-theirs").symlink_to(ours)
        cwds["link_to_other_uid"] = str(work / "link-to-theirs")
    return cwds


def write_folder_trials(tally: Tally, work: Path) -> None:
    markers = work / "markers"
    markers.mkdir(parents=True)
    data = work / "data"
    home = Path.home()
    for shape, cwd in hostile_cwds(work, home, markers).items():
        tally.trials += 1
        tally.faults += 1
        place = write_folder(cwd, source="claude-code", data_dir=data)
        if place.trusted or place.repository is not None or not place.root.is_relative_to(data):
            tally.lose(f"write folder: {shape} ({cwd}) was trusted: {place}")
    ours = hostile_repo(work / "ours", markers)
    tally.trials += 1
    place = write_folder(str(ours), source="claude-code", data_dir=data)
    if place.root != ours.resolve():
        tally.lose(f"write folder: our own repository was not trusted: {place}")
    if ran(markers):
        tally.lose(f"write folder: planted commands ran: {ran(markers)}")


def git_trials(tally: Tally, work: Path) -> None:
    for kind in (*SETTINGS, "all"):
        tally.trials += 1
        tally.faults += 1
        markers = work / f"markers-{kind}"
        repo = hostile_repo(work / f"repo-{kind}", markers, SETTINGS if kind == "all" else (kind,))
        from tui.capsules.files import changed_files, repository_files

        facts = git_facts(repo)
        reference_for(repo, "src/app.py")
        check_drift(repo, [Reference(path="src/app.py", blob="0" * 40)])
        superseded_capsules(repo, [repo / ".delegate" / "capsules" / "feature" / "c.md"])
        changed = changed_files(repo)
        listed = repository_files(repo)
        if ran(markers):
            tally.lose(f"git: {kind}: planted commands ran: {ran(markers)}")
        if facts is None or "src/app.py" not in changed or "notes.txt" not in listed:
            tally.note(f"git: {kind}: git answered less than expected ({facts}, {changed})")


def document_path_trials(tally: Tally, work: Path, tag: str) -> None:
    work.mkdir(parents=True)
    secret = work / "secret.md"
    secret.write_text(f"# Hand-off\n{SENTINEL}\n", encoding="utf-8")
    repo = work / "repo"
    handoffs = repo / ".delegate" / "handoffs"
    handoffs.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(f"# {SENTINEL}\n", encoding="utf-8")
    (handoffs / "link.md").symlink_to(secret)
    (handoffs / "archive").symlink_to(work)
    linked = work / "linked"
    (linked / ".delegate").mkdir(parents=True)
    (linked / ".delegate" / "handoffs").symlink_to(work)
    shapes = {
        "etc_passwd": ("/etc/passwd", work),
        "proc_environ": ("/proc/self/environ", work),
        "etc_shadow": ("/etc/shadow", work),
        "absolute": (str(secret), work),
        "relative": ("secret.md", work),
        "dotdot_git_config": ("../../.git/config", handoffs),
        "dotdot_out": (str(handoffs / ".." / ".." / ".." / "secret.md"), work),
        "link_out": (str(handoffs / "link.md"), work),
        "linked_archive": (str(handoffs / "archive" / "secret.md"), work),
        "linked_folder": (str(linked / ".delegate" / "handoffs" / "secret.md"), work),
        "tilde": ("~/../secret.md", work),
    }
    data = work / "data"
    for shape, (given, where) in shapes.items():
        for action in ("show", "continue"):
            tally.trials += 1
            tally.faults += 1
            result = run_cli(
                ["--data-dir", str(data), "handoff", action, given, "--json"],
                home=where,
                tag=tag,
                timeout=60,
            )
            if result.hung:
                tally.hang(f"handoff {action} {shape}")
                continue
            text = result.text
            if result.code == 0 or SENTINEL in text or "root:" in text:
                tally.lose(f"document path: handoff {action} {shape} read it: {text[-300:]!r}")
            elif "document_path_unsafe" not in text:
                tally.lose(f"document path: handoff {action} {shape}: {text[-300:]!r}")
            problem = cli_problem(result, json_out=True)
            if problem:
                tally.lose(f"document path: handoff {action} {shape}: {problem}")


def _transcript(projects: Path, cwd: str) -> str:
    sid = str(uuid.uuid4())
    folder = projects / ("-" + uuid.uuid4().hex[:8])
    folder.mkdir(parents=True)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    common = {"sessionId": sid, "cwd": cwd, "timestamp": now, "isSidechain": False}
    usage = {"input_tokens": 150_000, "cache_creation_input_tokens": 0}
    lines = [
        {**common, "type": "user", "parentUuid": None, "uuid": str(uuid.uuid4()),
         "message": {"role": "user", "content": "carry on"}},
        {**common, "type": "assistant", "parentUuid": None, "uuid": str(uuid.uuid4()),
         "message": {"id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
                     "model": MODEL, "content": [{"type": "text", "text": "on it"}],
                     "usage": {**usage, "cache_read_input_tokens": 0, "output_tokens": 5}}},
    ]  # fmt: skip
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return sid


def _snapshot(paths: list[Path]) -> dict[str, bool]:
    return {str(p): p.exists() for p in paths}


def watch_trial(tally: Tally, work: Path, tag: str) -> None:
    home = work / "home"
    home.mkdir(parents=True)
    markers = work / "markers"
    markers.mkdir()
    data = work / "data"
    projects = work / "claude" / "projects"
    projects.mkdir(parents=True)
    cwds = hostile_cwds(work / "cwds", home, markers)
    ours = hostile_repo(work / "ours", markers)
    sids = {_transcript(projects, cwd): shape for shape, cwd in cwds.items()}
    sids[_transcript(projects, str(ours))] = "ours"
    watched = [Path(c) / ".delegate" for c in cwds.values() if Path(c).is_absolute()]
    before = _snapshot(watched)
    cli = Cli(
        ["--data-dir", str(data), "watch", "--json", "--claude-dir", str(work / "claude"),
         "--codex-dir", str(work / "no-codex")],
        home=home,
        tag=tag,
    )  # fmt: skip
    settled: dict[str, dict[str, object]] = {}
    until = time.monotonic() + WATCH_DEADLINE_S
    try:
        while len(settled) < len(sids) and time.monotonic() < until and cli.poll() is None:
            out, _err = cli.output()
            for line in out.decode("utf-8", "replace").splitlines():
                if '"kind":"handoff_settled"' in line:
                    event = json.loads(line)
                    if event["conversation_id"] in sids:
                        settled[sids[event["conversation_id"]]] = event["outcome"]
            time.sleep(0.2)
    finally:
        cli.send_signal(signal.SIGTERM)
        result = cli.wait(30)
    tally.trials += len(sids)
    tally.faults += len(sids) - 1
    if result.hung:
        tally.hang("watch did not stop on SIGTERM")
    missing = sorted(set(sids.values()) - set(settled))
    if missing:
        tally.hang(f"watch: no hand-off settled for {missing} in {WATCH_DEADLINE_S:.0f} s")
    for shape, outcome in settled.items():
        document = outcome.get("document")
        path = Path(str(document["path"])) if isinstance(document, dict) else None
        if shape == "ours":
            if path is None or path.parent != ours / ".delegate" / "handoffs":
                tally.lose(f"watch: our repository's hand-off is not in it: {outcome}")
        elif path is None or not path.is_relative_to(data / "elsewhere"):
            tally.lose(f"watch: {shape}'s hand-off is not under the data folder: {outcome}")
    after = _snapshot(watched)
    wrote = [p for p, there in after.items() if there and not before[p]]
    if wrote:
        tally.lose(f"watch: wrote into {wrote}")
    if ran(markers):
        tally.lose(f"watch: planted commands ran: {ran(markers)}")


def steering_trials(work: Path, rounds: int = 1, *, with_watch: bool = True) -> Tally:
    """``rounds`` rounds of every kind of steering trial (see the module)."""
    tally = Tally("steering")
    with timed(tally):
        for index in range(rounds):
            if tally.out_of_time():
                break
            here = work / f"round-{index}"
            tag = new_tag()
            write_folder_trials(tally, here / "write-folder")
            git_trials(tally, here / "git")
            document_path_trials(tally, here / "documents", tag)
            if with_watch:
                watch_trial(tally, here / "watch", tag)
            left = survivors(tag)
            if left:
                tally.add_survivors(left, f"round {index}")
            tally.progress()
    return tally
