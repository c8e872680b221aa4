"""A CLI opened on the terminal that fails keeps its own words: what it printed before
exiting non-zero (on its standard output or error, as the real Claude Code prints "No
conversation found ...") is kept, bounded, made plain text and redacted.

The CLI is a stand-in executable named by the agent's ``binary`` setting; it runs on a
terminal of its own (it must see one) mirrored to this process's output.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import pytest
from test_reopen import CLAUDE_ID, session

from core.config import AgentConfig, Settings
from core.reopen import reopen_plan, run_attached_keeping_words
from core.terminal_mirror import TAIL_BYTES, last_words, run_mirrored

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")

SECRET = "sk-ant-api03-" + "Q" * 40

# Prints a banner drawn like a TUI (colours, a cursor move, a line rewritten with \r),
# then its error on stdout and a hint with a secret on stderr, then exits with 1. It
# also says whether it had a terminal.
FAILING = """#!{python}
import os, sys
tty = "tty" if os.isatty(0) and os.isatty(1) else "no tty"
sys.stdout.write("\\x1b[2J\\x1b[1;1H\\x1b[1;32mStand-in CLI\\x1b[0m " + tty + "\\n")
sys.stdout.write("loading 10%\\rloading 100%\\n")
sys.stdout.write("No conversation found with session ID: " + sys.argv[-1] + "\\n")
sys.stdout.flush()
sys.stderr.write("hint: ANTHROPIC_API_KEY={secret} was rejected\\n")
sys.exit(1)
"""


def failing_cli(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "failing-claude"
    exe.write_text(FAILING.format(python=sys.executable, secret=SECRET))
    exe.chmod(0o755)
    return exe


def settings_with(binary: Path) -> Settings:
    """The claude-code agent's CLI is ``binary`` (the public ``binary`` setting)."""
    return Settings(agents={"claude-code": AgentConfig(runner="claude_code", binary=str(binary))})


def test_a_failing_cli_s_own_words_are_kept_plain_and_redacted(tmp_path: Path) -> None:
    plan = reopen_plan(session(cwd=str(tmp_path)), settings_with(failing_cli(tmp_path / "bin")))
    ended = asyncio.run(run_attached_keeping_words(plan))
    assert ended.code == 1
    lines = ended.said.splitlines()
    assert lines[-2] == f"No conversation found with session ID: {CLAUDE_ID}"
    assert lines[-1] == "hint: ANTHROPIC_API_KEY=[REDACTED] was rejected"
    assert "Stand-in CLI tty" in lines  # it had a terminal; no escape sequence is left
    assert "loading 100%" in lines  # a line rewritten in place keeps its last writing
    assert SECRET not in ended.said
    assert "\x1b" not in ended.said


def test_a_cli_that_succeeds_says_nothing_to_show(tmp_path: Path) -> None:
    exe = tmp_path / "bin" / "fine-claude"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\nprint('bye')\n")
    exe.chmod(0o755)
    plan = reopen_plan(session(cwd=str(tmp_path)), settings_with(exe))
    ended = asyncio.run(run_attached_keeping_words(plan))
    assert (ended.code, ended.said) == (0, "")


def test_what_is_kept_is_bounded_and_mirrored_whole(tmp_path: Path) -> None:
    """Everything goes to the terminal; only the last TAIL_BYTES are kept."""
    exe = tmp_path / "chatty"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "for n in range(40000): sys.stdout.write(f'line {n}\\n')\n"
        "sys.stdout.write('the last words\\n'); sys.exit(2)\n"
    )
    exe.chmod(0o755)
    read, write = os.pipe()
    copied = bytearray()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        os.set_blocking(read, False)

        def take() -> None:
            with contextlib.suppress(BlockingIOError):
                copied.extend(os.read(read, 1 << 20))

        loop.add_reader(read, take)
        nothing = os.open(os.devnull, os.O_RDONLY)  # no one types: input is not a terminal
        try:
            ended = await run_mirrored(
                [str(exe)], tmp_path, dict(os.environ), stdin=nothing, stdout=write
            )
        finally:
            os.close(nothing)
        await asyncio.sleep(0.05)
        take()
        loop.remove_reader(read)
        assert ended.code == 2
        assert len(ended.tail) <= TAIL_BYTES
        assert last_words(ended.tail).splitlines()[-1] == "the last words"

    try:
        asyncio.run(run())
    finally:
        os.close(read)
        os.close(write)
    assert b"line 0\r\n" in copied
    assert copied.rstrip().endswith(b"the last words")


def test_last_words_drop_what_a_terminal_would_not_print() -> None:
    tail = (
        b"\x1b]0;title\x07\x1b[?1049h\x1b[38;2;1;2;3mhello\x1b[0m\r\n"
        b"\x1bP1$r0m\x1b\\\x07\x08   \r\n" + "error: \u009b31mbad\u009bm thing\r\n".encode()
    )
    assert last_words(tail) == "hello\nerror: bad thing"


def test_a_line_ended_by_two_carriage_returns_is_kept() -> None:
    """As the real Claude Code ends its "No conversation found" line."""
    tail = b"\x1b[38;5;211mNo conversation found\x1b[39m\r\r\n\x1b[?25h\x1b(B\x0f\x1b]0;\x07"
    assert last_words(tail) == "No conversation found"


def test_last_words_keep_only_the_last_lines_each_bounded() -> None:
    tail = "".join(f"line {n}\r\n" for n in range(100)).encode() + b"x" * 1000
    said = last_words(tail).splitlines()
    assert said[0] == "line 89"
    assert len(said) == 12
    assert len(said[-1]) == 240


def test_words_spaced_by_cursor_moves_keep_their_spaces() -> None:
    """A terminal UI may move the cursor forward instead of writing spaces (as Claude Code
    did when it ran with delegate's hooks): the words keep the gaps a terminal shows."""
    tail = b"\x1b[38;5;211mNo\x1b[1Cconversation\x1b[Cfound\x1b[2Cwith\x1b[1Cit\x1b[39m\r\r\n"
    assert last_words(tail) == "No conversation found  with it"


def test_words_placed_at_columns_read_as_a_terminal_shows_them() -> None:
    """The real Claude Code places each word at its column (``\\x1b[9G``) on its error
    screens: the words keep their gaps, and a move back lets later text overwrite."""
    tail = (
        b"\x1b[31mWelcome\x1b[9Gto\x1b[12GClaude\x1b[19GCode\x1b[39m\r\r\n"
        b"\x1b[2G\x1b[95mFailed\x1b[9Gto\x1b[12Gconnect\x1b[39m\r\r\n"
        b"abcdef\x1b[3GXY\r\r\n"
    )
    assert last_words(tail) == "Welcome to Claude Code\n Failed to connect\nabXYef"
