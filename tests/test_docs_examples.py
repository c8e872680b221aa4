"""Every fenced example in ``docs/*.md`` works as written, or says why it is not run.

- A ``toml`` block is a ``config.toml`` example: it is written to a data folder's
  ``config.toml`` and loaded as ``delegate`` loads it (``load_settings``, then the
  keymap check every front end makes). ``<!-- example: runner-script -->`` before the
  fence makes it a scripted runner's script instead, loaded by that runner.
- A shell block (``bash``, ``sh``, ``shell``, ``console``) holds ``delegate`` commands
  (``uv run delegate`` too; ``echo TEXT | delegate ...`` gives TEXT on stdin). Each runs,
  through the CLI's entry, in a sandbox of its page: a git repository as the current
  folder, a data folder whose default agent is a scripted role agent, empty agent
  folders. The page's blocks run in order in one sandbox; placeholders (``<id>``,
  ``SESSION``, ``crp-...``, an example file name) are filled with real ids and paths
  from it. Each command must exit 0 (or the outcome its page documents, listed in
  ``OUTCOMES``), never with a traceback or ``internal_error``. ``delegate watch``
  runs in the foreground until Ctrl+C, so it is started, then interrupted: exit 0.
- ``<!-- not-run: REASON -->`` right before the fence leaves the whole block out;
  ``<!-- not-run "delegate capsule edit": REASON -->`` only its commands starting so.
  A reason is required, and a marker that matches no command is stale.
- Other blocks (JSON shapes, Python, output, trees) are read, not run.

The convention is documented in docs/architecture.md ("Docs examples are tested").
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.config import CONFIG_FILENAME, load_settings
from core.runners.scripted import load_script
from tui.cli import main
from tui.shared.keymap_check import binding_ids, check_keymap

DOCS = Path(__file__).resolve().parents[1] / "docs"
DELEGATE = Path(sys.executable).with_name("delegate")
SHELL = frozenset({"bash", "sh", "shell", "console"})
FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w-]*)")
NOT_RUN = re.compile(r'^<!--\s*not-run(?:\s+"(?P<prefix>[^"]+)")?\s*:\s*(?P<reason>.*?)\s*-->$')
EXAMPLE = re.compile(r"^<!--\s*example:\s*(?P<kind>[\w-]+)\s*-->$")
MARKER = re.compile(r"^<!--\s*(not-run|example)\b")

# Outcomes a page documents besides exit 0: (page, command prefix) -> exit codes.
OUTCOMES: dict[tuple[str, str], frozenset[int]] = {
    # "exit 1 and one line per problem"
    ("capsules.md", "delegate capsule check"): frozenset({0, 1}),
}


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # of the opening fence
    lang: str
    body: str
    not_run: str | None = None  # the whole block's reason
    skipped: dict[str, str] = field(default_factory=dict)  # command prefix -> reason
    kind: str | None = None
    bad_markers: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"docs/{self.doc}:{self.line}"


def _blocks(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index].strip())
        if opened is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(opened["fence"]):
            end += 1
        not_run, kind, skipped, bad = None, None, {}, []
        above = index - 1
        while above >= 0 and MARKER.match(lines[above].strip()):
            comment = lines[above].strip()
            if (marked := NOT_RUN.match(comment)) is not None and marked["reason"]:
                if marked["prefix"]:
                    skipped[marked["prefix"]] = marked["reason"]
                else:
                    not_run = marked["reason"]
            elif (example := EXAMPLE.match(comment)) is not None:
                kind = example["kind"]
            else:
                bad.append(comment)
            above -= 1
        yield Block(
            path.name,
            index + 1,
            opened["lang"].lower(),
            "\n".join(lines[index + 1 : end]),
            not_run,
            skipped,
            kind,
            tuple(bad),
        )
        index = end + 1


def doc_blocks() -> list[Block]:
    """Every fenced block of the docs pages (the README is checked on its own)."""
    return [block for path in sorted(DOCS.glob("*.md")) for block in _blocks(path)]


BLOCKS = doc_blocks()


def commands(block: Block) -> list[str]:
    """The block's command lines (continuations joined, comments and blanks dropped)."""
    joined = block.body.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if shlex.split(line, comments=True):
            found.append(line.strip())
    return found


def _argv(tokens: list[str]) -> list[str] | None:
    """The arguments after ``delegate`` (or ``uv run delegate``); None: not delegate."""
    if tokens[:2] == ["uv", "run"]:
        tokens = tokens[2:]
    return tokens[1:] if tokens[:1] == ["delegate"] else None


def parse_command(line: str) -> tuple[list[str], str | None] | None:
    """``(argv, stdin)`` of a ``delegate`` command line; None when it is something else."""
    tokens = shlex.split(line, comments=True)
    stdin = None
    if "|" in tokens:
        at = tokens.index("|")
        left, tokens = tokens[:at], tokens[at + 1 :]
        if left[:1] != ["echo"] or "|" in tokens:
            return None
        stdin = " ".join(left[1:]) + "\n"
    argv = _argv(tokens)
    return None if argv is None else (argv, stdin)


def _interactive(argv: list[str]) -> bool:
    """The panel (no command) or the capsule editor: full-screen, they wait for a person."""
    words = [arg for arg in argv if not arg.startswith("-")]
    return not words or words[:2] == ["capsule", "edit"]


def _skipped_by(block: Block, line: str) -> str | None:
    return next((p for p in block.skipped if line.startswith(p)), None)


# --- every block is run, or says why -------------------------------------------


def test_every_shell_block_is_run_or_marked_with_a_reason() -> None:
    problems = []
    for block in BLOCKS:
        problems += [
            f"{block.where}: a marker this test does not know: {m}" for m in block.bad_markers
        ]
        if block.lang not in SHELL or block.not_run is not None:
            continue
        lines = commands(block)
        for prefix in block.skipped:
            if not any(line.startswith(prefix) for line in lines):
                problems.append(f"{block.where}: not-run {prefix!r} matches no command")
        for line in lines:
            if _skipped_by(block, line) is not None:
                continue
            parsed = parse_command(line)
            if parsed is not None and _interactive(parsed[0]):
                problems.append(
                    f"{block.where}: {line!r} opens a full-screen app: mark it"
                    ' <!-- not-run "PREFIX": REASON -->'
                )
            if parsed is None:
                problems.append(
                    f"{block.where}: {line!r} is not a delegate command: mark the block"
                    ' <!-- not-run: REASON --> (or the command <!-- not-run "PREFIX": REASON -->)'
                )
    assert not problems, "\n".join(problems)


def test_the_examples_are_found() -> None:
    """The extraction sees the blocks it must (a broken fence would hide them)."""
    by_kind = {(b.doc, b.lang) for b in BLOCKS}
    assert ("configuration.md", "toml") in by_kind
    assert ("returns.md", "bash") in by_kind
    assert sum(1 for b in BLOCKS if b.lang in SHELL and b.not_run is None) >= 10


# --- config examples ------------------------------------------------------------

TOML_BLOCKS = [b for b in BLOCKS if b.lang == "toml" and b.not_run is None]


@pytest.mark.parametrize("block", TOML_BLOCKS, ids=[b.where for b in TOML_BLOCKS])
def test_a_toml_example_loads_as_delegate_loads_it(block: Block, tmp_path: Path) -> None:
    if block.kind == "runner-script":
        script = tmp_path / "script.toml"
        script.write_text(block.body, encoding="utf-8")
        load_script(script)
        return
    assert block.kind is None, f"{block.where}: unknown example kind {block.kind!r}"
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / CONFIG_FILENAME).write_text(block.body, encoding="utf-8")
    settings = load_settings(data)
    check_keymap(settings.keymap)


def test_the_keymap_ids_the_docs_name_exist() -> None:
    """The remapping section lists ids: each is one this version has."""
    text = (DOCS / "tui.md").read_text(encoding="utf-8")
    section = text.split("## Remapping keys", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", section)) - {CONFIG_FILENAME}
    assert named
    assert named <= binding_ids(), sorted(named - binding_ids())


# --- command examples -------------------------------------------------------------

ROLES = {
    "developer": ("READY_FOR_QA", {"files_modified": ["src/auth.py"], "tests": {"total": 3}}),
    "qa_expert": ("PASS", {"total_tests": {"passed": 3, "failed": 0}}),
    "tech_lead": ("APPROVED", {"decision": "APPROVED"}),
    "project_manager": ("BAZINGA", {"groups_completed": ["{group}"]}),
}


def _capsule_reply() -> str:
    """The capsule capsules.md shows as its format, as an agent would answer it: on the
    sandbox's branch, naming its references without blob ids (delegate fills them)."""
    [example] = [b for b in BLOCKS if b.doc == "capsules.md" and b.lang == "markdown"][:1]
    body = example.body.replace("branch: feature/auth", "branch: main")
    return re.sub(r"\n\s*blob: [0-9a-f]+", "", body)


def _agent_script() -> dict[str, object]:
    """A role agent: each role writes its hand-off file and answers the minimal JSON;
    asked for a capsule, it answers the documented one; anything else is echoed."""
    rules: list[dict[str, object]] = []
    for role, (status, fields) in ROLES.items():
        handoff = {"from_agent": role, "status": status, "summary": f"{role} done", **fields}
        rules.append(
            {
                "match": (
                    r"(?s)hand-off file `(?P<file>\.delegate/artifacts/[\w.-]+/(?P<group>[\w.-]+)"
                    rf"/handoffs/handoff_{role}\.json)`"
                ),
                "reply": json.dumps(
                    {"status": status, "summary": [f"{role} did it", "one file", "fine"]}
                ),
                "write": [{"path": "{file}", "content": json.dumps(handoff)}],
            }
        )
    rules.append({"match": "# Write your context capsule", "reply": _capsule_reply()})
    return {"rules": rules}


@dataclass
class Sandbox:
    """One page's world: a repository, a data folder, agent folders, found ids."""

    root: Path
    monkeypatch: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]
    found: dict[str, str] = field(default_factory=dict)

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.root / "home"),
            "DELEGATE_HOME": str(self.data),
            "CLAUDE_CONFIG_DIR": str(self.root / "claude"),
            "CODEX_HOME": str(self.root / "codex"),
            "DELEGATE_AGENT": "doc-agent",  # over the suite's scripted echo
        }

    def set_up(self) -> None:
        for folder in ("home", "claude", "codex", "repo/src"):
            (self.root / folder).mkdir(parents=True)
        self.data.mkdir(mode=0o700)
        script = self.root / "agent.json"
        script.write_text(json.dumps(_agent_script()), encoding="utf-8")
        agents = "\n".join(f'{role} = "doc-agent"' for role in ROLES)
        (self.data / CONFIG_FILENAME).write_text(
            'default_agent = "doc-agent"\n'
            f'[agents.doc-agent]\nrunner = "scripted"\ndelay = 0\nscript = "{script}"\n'
            f"[returns.agents]\n{agents}\n",
            encoding="utf-8",
        )
        (self.repo / "src" / "auth.py").write_text("def login():\n    return True\n")
        # The files capsules.md's example capsule references.
        (self.repo / "src" / "middleware").mkdir()
        (self.repo / "src" / "middleware" / "auth.ts").write_text("export const auth = 1;\n")
        (self.repo / "docs").mkdir()
        (self.repo / "docs" / "auth-plan.md").write_text("# The auth plan\n")
        (self.repo / "handoff.json").write_text(  # returns.md writes "handoff.json"
            json.dumps({"from_agent": "developer", "status": "READY_FOR_QA", "summary": "done"})
        )
        git = ["git", "-c", "user.name=doc", "-c", "user.email=doc@example.invalid"]
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
            subprocess.run([*git, *args], cwd=self.repo, check=True, capture_output=True)
        (self.repo / "src" / "auth.py").write_text("def login():\n    return False\n")
        for name, value in self.env().items():
            self.monkeypatch.setenv(name, value)
        self.monkeypatch.chdir(self.repo)

    def delegate(self, argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
        """``delegate ARGV`` through the CLI's entry, in this process."""
        self.capsys.readouterr()
        given = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
        self.monkeypatch.setattr(sys, "stdin", given)
        code = main(argv)
        out = self.capsys.readouterr()
        return code, out.out, out.err

    # -- what placeholders stand for ---------------------------------------------------

    def session(self) -> str:
        """A session the doc agent ran (launched once, then reused)."""
        if "session" not in self.found:
            code, out, err = self.delegate(["run", "--json", "Start the sandbox session"])
            assert code == 0, err
            self.found["session"] = json.loads(out)["conversation_id"]
        return self.found["session"]

    def artifacts_session(self) -> str:
        code, out, err = self.delegate(["returns", "show", "--json"])
        assert code == 0, err
        return str(json.loads(out)["sessions"][0]["artifacts_session"])

    def newest(self, pattern: str) -> str:
        found = sorted(self.repo.glob(pattern))
        assert found, f"no {pattern} in the sandbox yet"
        return found[-1].relative_to(self.repo).as_posix()


# A placeholder (regex) and what fills it.
FILLS: list[tuple[str, Callable[[Sandbox], str]]] = [
    (r"<id>|\bSESSION\b|\b1a2b3c4d\b", Sandbox.session),
    (r"\bcrp-\.\.\.", Sandbox.artifacts_session),
    (r"(?<=--claude-dir )DIR\b", lambda box: str(box.root / "claude")),
    (r"(?<=--codex-dir )DIR\b", lambda box: str(box.root / "codex")),
    (
        r"\.delegate/handoffs/handoff-[\d-]+\.md",
        lambda box: box.newest(".delegate/handoffs/handoff-*.md"),
    ),
    (
        r"\.delegate/capsules/main/\d{8}T\d{6}Z\.md",
        lambda box: box.newest(".delegate/capsules/main/*.md"),
    ),
]


def fill(line: str, box: Sandbox) -> str:
    for pattern, value in FILLS:
        if re.search(pattern, line):
            line = re.sub(pattern, lambda _m, v=value: v(box), line)
    return line


def _foreground(box: Sandbox, argv: list[str]) -> tuple[int, str, str]:
    """A command that runs until Ctrl+C: started, given a moment, then interrupted."""
    env = {**os.environ, **box.env()}
    process = subprocess.Popen(
        [str(DELEGATE), *argv],
        cwd=box.repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)  # its first line: it is up
        assert ready, f"delegate {' '.join(argv)} printed nothing in 30 s"
        first = process.stdout.readline()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:  # a failed check above: leave nothing running
            process.kill()
            process.communicate()
    return process.returncode, first + out, err


# What a page's first block takes as already there (a reader of the page has it).
PREPARE: dict[str, list[str]] = {
    # "Launching with a capsule" comes before the page shows how to get one.
    "capsules.md": ["capsule", "request", "{session}"],
}


SHELL_PAGES = sorted(
    {b.doc for b in BLOCKS if b.lang in SHELL and b.not_run is None and commands(b)}
)


@pytest.mark.parametrize("doc", SHELL_PAGES)
def test_a_page_s_commands_run_as_written(
    doc: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    box = Sandbox(tmp_path, monkeypatch, capsys)
    box.set_up()
    if doc in PREPARE:
        argv = [arg.replace("{session}", box.session()) for arg in PREPARE[doc]]
        code, _, err = box.delegate(argv)
        assert code == 0, err
    failures = []
    for block in (b for b in BLOCKS if b.doc == doc and b.lang in SHELL and b.not_run is None):
        for line in commands(block):
            if _skipped_by(block, line) is not None:
                continue
            parsed = parse_command(fill(line, box))
            assert parsed is not None, f"{block.where}: {line!r}"
            argv, stdin = parsed
            if [arg for arg in argv if not arg.startswith("-")][:1] == ["watch"]:
                code, _out, err = _foreground(box, argv)
            else:
                code, _out, err = box.delegate(argv, stdin)
            allowed = next(
                (
                    codes
                    for (page, prefix), codes in OUTCOMES.items()
                    if page == doc and line.startswith(prefix)
                ),
                frozenset({0}),
            )
            if code not in allowed or "Traceback" in err or "internal_error" in err:
                failures.append(f"{block.where}: {line}\n  exit {code}\n  {err.strip()[-600:]}")
    assert not failures, "\n".join(failures)
