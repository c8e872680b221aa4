"""``delegate hooks install`` / ``uninstall`` over edge-case files and against concurrent
editors.

Files: Claude Code ``settings.json`` and Codex ``config.toml`` generated from a
seed, with the shapes that broke before: empty and blank files, no trailing
newline, CRLF, a BOM, unicode, ``1e400`` and 30-digit numbers, duplicate keys,
tabs, a person's own hooks that run delegate or mention its marker, multi-line
TOML strings and comments holding ``notify =``, a person's own ``notify`` and
broken files (both refused). Each file is installed, checked (the agent CLI
parses it: strict JSON without NaN or Infinity, TOML; everything of the
person's is there), then uninstalled (every byte back); then again with an
edit of the person's while installed (kept, byte for byte where the edit is
unambiguous).

Concurrent editors: a real second process edits the file in a loop while this
process and another delegate process install and uninstall in loops: for
``settings.json`` a read-modify-write that replaces the file (as editors and
the agents do) and one that rewrites it in place, for ``config.toml`` lines
appended in place. Afterwards every
one of the editor's writes must be in the file, and the rest byte for byte.

Bad outcomes (losses): a byte not restored, a line or hook of the person's
lost, a file the agent cannot parse, a concurrent write lost, an untyped error.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from reliability_support import TAG_VAR, Tally, new_tag, survivors, timed

from core import errors, ids
from core.hooks.install import MARKER, install, status_of, uninstall

ROOT = Path(__file__).resolve().parents[2]
BOM = "\ufeff"
EDITOR_TIMEOUT_S = 240.0


# --- generated files --------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    agent: str
    text: str
    refused: bool = False  # install must refuse it (typed) and leave it alone
    ambiguous: bool = False  # an edit while installed is kept by meaning, not byte for byte


_JSON_VALUES = (
    "1e400",
    "-1e400",
    "-0.0",
    "1.50",
    "2E-3",
    "123456789012345678901234567890",
    "true",
    "null",
    '"Zoë ✓ 日本"',
    '"\\u00e9\\n\\"quoted\\""',
    '"delegate hook claude-code Stop"',
    "[]",
    "{}",
    '{"nested": [1, 2, {"a": "b"}], "n": 1e400}',
    '["x", {"y": null}]',
)
_USER_COMMANDS = (
    "uv run delegate hook claude-code Stop",
    "/opt/delegate/bin/delegate --data-dir /tmp/x hook claude-code Stop",
    "python -m tui.cli hook claude-code SessionStart",
    "echo delegate x hook claude-code Stop",
    f"{MARKER} my-own-notifier",
    f"echo '{MARKER}' && notify-send done",
    f"{sys.executable} -P -m tui.cli --data-dir /tmp/x hook claude-code Stop; echo mine",
    "notify-send 'Zoë ✓'",
)


def _json_layout(members: list[tuple[str, str]], indent: str | None) -> str:
    if not members:
        return "{}"
    if indent is None:
        return "{" + ", ".join(f"{k}: {v}" for k, v in members) + "}"
    inner = ",\n".join(indent + f"{k}: {v}".replace("\n", "\n" + indent) for k, v in members)
    return "{\n" + inner + "\n}"


def _user_hooks(rng: random.Random, indent: str | None) -> tuple[str, bool]:
    events: list[tuple[str, str]] = []
    ambiguous = False
    for event in rng.sample(["Stop", "SessionStart", "PreToolUse", "UserPromptSubmit"], 3):
        groups = []
        for _ in range(rng.randint(0, 2)):
            command = rng.choice(_USER_COMMANDS)
            group: dict[str, object] = {"hooks": [{"type": "command", "command": command}]}
            if rng.random() < 0.3:
                group = {"matcher": "Bash", **group}
            groups.append(json.dumps(group, ensure_ascii=False))
        ambiguous = ambiguous or not groups
        events.append((json.dumps(event), "[" + ", ".join(groups) + "]"))
    if rng.random() < 0.15:
        return "{}", True
    return _json_layout(events, indent), ambiguous


def claude_case(rng: random.Random) -> Case:
    special = rng.random()
    if special < 0.04:
        blank = ["", "  \n", "\n\n", "{}", "{ }", "{\n}\n"]
        return Case(ids.CLAUDE_CODE, rng.choice(blank), ambiguous=True)
    if special < 0.08:
        broken = [
            '{"x": NaN}',
            '{"x": Infinity}',
            '{"a": 1} // mine',
            "[1]",
            '{"hooks": [',
            '{"hooks": {"Stop": {}}}',
            '{"a": 1,}',
        ]
        return Case(ids.CLAUDE_CODE, rng.choice(broken), refused=True)
    indent = rng.choice([None, "  ", "    ", "\t"])
    members = []
    for n in range(rng.randint(0, 5)):
        members.append((json.dumps(rng.choice(["model", "env", "név", f"k{n}", "a"])), ""))
        members[-1] = (members[-1][0], rng.choice(_JSON_VALUES))
    ambiguous = not members
    if rng.random() < 0.7:
        hooks, empty = _user_hooks(rng, indent)
        members.insert(rng.randint(0, len(members)), ('"hooks"', hooks))
        ambiguous = ambiguous or empty
    text = _json_layout(members, indent) + rng.choice(["", "\n", "\n\n", "  "])
    if rng.random() < 0.3:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.2:
        text = BOM + text
    return Case(ids.CLAUDE_CODE, text, ambiguous=ambiguous or not members)


_TOML_LINES = (
    'model = "o4"',
    "# a comment",
    '# notify = ["a comment, not a key"]',
    "",
    'instructions = """\nnotify = ["inside a string"]\nmore\n"""',
    "lit = '''\nnotify = 1\n'''",
    'tricky = """ends with quotes"\'""""',
    'arr = [\n  "a", # notify = 2\n  "b",\n]',
    "inline = { a = 1, b = 'notify = 2' }",
    '"quoted key" = true',
    "dotted.key = 1",
    "n = 1e10",
    "when = 1979-05-27T07:32:00Z",
    'name = "Zoë ✓ 日本"',
)
_TOML_TABLES = ("[tui]", "[profiles.fast]", "[[mcp_servers]]", "[shell_environment_policy]")


def codex_case(rng: random.Random) -> Case:
    special = rng.random()
    if special < 0.05:
        return Case(ids.CODEX, rng.choice(["", "\n", "# nothing yet\n", "# no newline"]))
    if special < 0.1:
        refused = ['notify = ["my-notifier"]\n', 'a = "unterminated\n', "x = 1\nx = 2\n"]
        return Case(ids.CODEX, rng.choice(refused), refused=True)
    lines: list[str] = []
    seen: set[str] = set()
    for _ in range(rng.randint(0, 6)):
        line = rng.choice(_TOML_LINES)
        key = line.split("=")[0].strip() if "=" in line and not line.startswith("#") else None
        if key is not None and key.split(".")[0] in seen:
            continue
        if key is not None:
            seen.add(key.split(".")[0])
        lines.append(line)
    for table in rng.sample(_TOML_TABLES, rng.randint(0, 2)):
        lines.append(table)
        lines.append(rng.choice(["x = 1", 'notify = "in a table, not top level"', "# c"]))
    newline = rng.choice(["\n", "\r\n"])
    text = newline.join(lines) + rng.choice(["", newline])
    tomllib.loads(text)  # the generator writes only valid TOML here
    return Case(ids.CODEX, text)


# --- checks -----------------------------------------------------------------------


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text.removeprefix(BOM) or "{}", parse_constant=refuse, parse_float=Decimal)


def _parses(agent: str, text: str) -> bool:
    try:
        if agent == ids.CLAUDE_CODE:
            _strict(text if text.strip(BOM + " \r\n\t") else "{}")  # blank: as no file
        else:
            tomllib.loads(text)
    except ValueError:
        return False
    return True


def _meaning(agent: str, text: str) -> object:
    """What the agent reads, delegate's own entries left out."""
    if agent == ids.CODEX:
        config = tomllib.loads(text)
        notify = config.get("notify")
        if isinstance(notify, list) and MARKER in notify:
            config.pop("notify")
        return config
    settings = _strict(text.removeprefix(BOM) if text.strip(BOM + " \r\n\t") else "{}")
    assert isinstance(settings, dict)
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        kept = {}
        for event, groups in hooks.items():
            mine = [g for g in groups if MARKER not in json.dumps(g)]
            if mine:
                kept[event] = mine
        settings = {**settings, "hooks": kept}
        if not kept:
            settings.pop("hooks")
    return settings


def _edit(agent: str, text: str) -> str:
    """A person's edit while delegate's hooks are in."""
    if agent == ids.CODEX:
        return text + "\n# edited while installed\n"
    body = text.rstrip(" \r\n\t")
    if not body.strip(BOM + " \r\n\t"):
        return BOM * text.startswith(BOM) + '{"edited": "while installed"}' + text[len(body) :]
    close = len(body) - 1
    empty = not body[:close].strip(BOM + " \r\n\t{")
    member = '"edited": "while installed"' if empty else ', "edited": "while installed"'
    return text[:close] + member + text[close:]


def file_trial(tally: Tally, work: Path, case: Case, n: int) -> None:
    name = "settings.json" if case.agent == ids.CLAUDE_CODE else "config.toml"
    folder = work / f"agent-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    data = work / "data"
    original = case.text.encode()
    where = f"{case.agent} file {n} {case.text[:80]!r}"
    for edited in (False, True):
        tally.trials += 1
        tally.faults += 1
        path.write_bytes(original)
        try:
            status = install(case.agent, path, data)
        except errors.HookSettingsUnusable:
            if path.read_bytes() != original:
                tally.lose(f"{where}: refused, but the file changed")
            elif not case.refused:
                tally.lose(f"{where}: refused a usable file")
            continue
        except Exception as exc:
            tally.lose(f"{where}: {type(exc).__name__}: {exc}")
            continue
        installed = path.read_bytes().decode()
        if case.refused:
            tally.lose(f"{where}: installed into a file that should be refused")
        if not status.installed or not _parses(case.agent, installed):
            tally.lose(f"{where}: installed file unusable: {installed[:200]!r}")
            continue
        if _meaning(case.agent, installed) != _meaning(case.agent, case.text):
            tally.lose(f"{where}: the person's settings changed by install")
        expected = case.text
        if edited:
            expected = _edit(case.agent, case.text)
            path.write_bytes(_edit(case.agent, installed).encode())
        try:
            uninstall(case.agent, path, data)
        except Exception as exc:
            tally.lose(f"{where}: uninstall {type(exc).__name__}: {exc}")
            continue
        after = path.read_bytes().decode() if path.exists() else None
        if status_of(case.agent, path).events:
            tally.lose(f"{where}: delegate's hooks left after uninstall")
        if after is None or not _parses(case.agent, after):
            tally.lose(f"{where}: unusable after uninstall: {after!r}")
        elif after != expected and not (
            edited
            and case.ambiguous
            and _meaning(case.agent, after) == _meaning(case.agent, expected)
        ):
            tally.lose(f"{where}: not restored (edited={edited}): {after[:200]!r}")


def file_trials(work: Path, count: int, *, seed: int = 27) -> Tally:
    tally = Tally("hooks install: edge-case files")
    rng = random.Random(seed)
    with timed(tally):
        for n in range(count):
            if tally.out_of_time():
                break
            case = claude_case(rng) if n % 2 == 0 else codex_case(rng)
            file_trial(tally, work / "files", case, n)
    return tally


# --- concurrent editors -------------------------------------------------------------

JSON_EDITOR = r"""
import os, sys, tempfile, time
path, count = sys.argv[1], int(sys.argv[2])
done = 0
while done < count:
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    close = text.rstrip().rfind("}")
    if close < 0:
        continue
    text = text[:close] + f', "edit-{done}": {done}' + text[close:]
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".editor.")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)
    done += 1
    time.sleep(0.005)
"""

JSON_IN_PLACE = r"""
import sys, time
path, count = sys.argv[1], int(sys.argv[2])
done = 0
while done < count:
    with open(path, "r+", encoding="utf-8", newline="") as f:  # held open: read, rewrite
        text = f.read()
        close = text.rstrip().rfind("}")
        if close < 0:
            continue
        f.seek(0)
        f.truncate()
        f.write(text[:close] + f', "edit-{done}": {done}' + text[close:])
    done += 1
    time.sleep(0.005)
"""

TOML_APPENDER = r"""
import sys, time
path, count = sys.argv[1], int(sys.argv[2])
for done in range(count):
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write(f"# edit {done}\n")
    time.sleep(0.005)
"""

DELEGATE_LOOP = r"""
import sys, time
from pathlib import Path
from core.errors import HookSettingsUnusable
from core.hooks.install import install, uninstall
agent, path, data, stop = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
rounds = 0
while not stop.exists():
    rounds += 1
    for step in (install, uninstall):
        try:
            step(agent, path, data)
        except HookSettingsUnusable as exc:
            if "kept changing" not in str(exc) and "another delegate" not in str(exc):
                print(f"refused: {exc}", file=sys.stderr)
                sys.exit(2)
print(rounds)
"""

START_JSON = '{\n  "model": "opus",\n  "n": 1e400,\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "uv run delegate hook claude-code Stop"}]}]\n  }\n}\n'  # noqa: E501
START_TOML = 'model = "o4"\ninstructions = """\nnotify = ["x"]\n"""\n\n[tui]\nx = 1\n'


EDITORS = {
    "replaces settings.json": (ids.CLAUDE_CODE, JSON_EDITOR),
    "rewrites settings.json in place": (ids.CLAUDE_CODE, JSON_IN_PLACE),
    "appends to config.toml": (ids.CODEX, TOML_APPENDER),
}
"""Each concurrent editor: the agent whose file it edits, and its program."""


def concurrent_trial(tally: Tally, work: Path, editor_name: str, edits: int, n: int) -> None:
    agent, script = EDITORS[editor_name]
    folder = work / f"concurrent-{len(editor_name)}-{agent}-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("settings.json" if agent == ids.CLAUDE_CODE else "config.toml")
    start = START_JSON if agent == ids.CLAUDE_CODE else START_TOML
    path.write_text(start, encoding="utf-8", newline="")
    data = work / "data"
    stop = folder / "stop"
    tag = new_tag()
    env = {**os.environ, TAG_VAR: tag, "PYTHONPATH": str(ROOT)}
    editor = subprocess.Popen([sys.executable, "-c", script, str(path), str(edits)], env=env)
    other = subprocess.Popen(
        [sys.executable, "-c", DELEGATE_LOOP, agent, str(path), str(data), str(stop)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    where = f"an editor that {editor_name}, round {n}"
    rounds = 0
    deadline = time.monotonic() + EDITOR_TIMEOUT_S
    try:
        while editor.poll() is None and time.monotonic() < deadline:
            for step in (install, uninstall):
                try:
                    step(agent, path, data)
                except errors.HookSettingsUnusable as exc:
                    if "kept changing" not in str(exc) and "another delegate" not in str(exc):
                        tally.lose(f"{where}: refused: {exc}")
                except Exception as exc:
                    tally.lose(f"{where}: {type(exc).__name__}: {exc}")
            rounds += 1
        if editor.poll() is None:
            tally.hang(f"{where}: the editor did not finish in {EDITOR_TIMEOUT_S:.0f} s")
            editor.kill()
    finally:
        stop.touch()
        try:
            out, err = other.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            other.kill()
            out, err = other.communicate()
            tally.hang(f"{where}: the other delegate process did not stop")
        editor.wait(timeout=60)
    if other.returncode != 0:
        tally.lose(f"{where}: the other delegate process: {err.strip()[-300:]}")
    else:
        rounds += int(out.strip() or 0)
    tally.add_survivors(survivors(tag, grace_s=5.0), where)
    uninstall(agent, path, data)
    final = path.read_bytes().decode()
    tally.trials += edits + rounds
    tally.faults += edits
    if agent == ids.CLAUDE_CODE:
        close = start.rstrip().rfind("}")
        added = "".join(f', "edit-{k}": {k}' for k in range(edits))
        expected = start[:close] + added + start[close:]
    else:
        expected = start + "".join(f"# edit {k}\n" for k in range(edits))
    if final != expected:
        lost = [
            k
            for k in range(edits)
            if (f'"edit-{k}": {k}' if agent == ids.CLAUDE_CODE else f"# edit {k}\n") not in final
        ]
        if lost:
            tally.losses += len(lost)
            tally.note(f"loss: {where}: {len(lost)} of {edits} writes lost, first {lost[:5]}")
        else:
            tally.lose(f"{where}: not restored byte for byte: {final[:300]!r}")
    if not _parses(agent, final):
        tally.lose(f"{where}: the final file does not parse")


def concurrent_trials(work: Path, rounds: int, edits: int) -> Tally:
    tally = Tally("hooks install: concurrent editors")
    with timed(tally):
        for n in range(rounds):
            for editor_name in EDITORS:
                if tally.out_of_time():
                    return tally
                concurrent_trial(tally, work / "concurrent", editor_name, edits, n)
                tally.progress()
    return tally


def hooks_install_trials(work: Path, files: int = 1500, rounds: int = 4, edits: int = 400) -> Tally:
    """Both parts at the given counts, as one row of the figures."""
    tally = Tally("hooks install / uninstall (files, concurrent editors)")
    tally.merge(file_trials(work, files))
    tally.merge(concurrent_trials(work, rounds, edits))
    return tally
