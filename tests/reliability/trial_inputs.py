"""Hostile inputs to the JSON tools, the command line and the importers.

Each input is one trial; it must end in a success or a typed error (a payload
or a ``delegate: CODE: ...`` line whose code is one of ``core.errors``), never
a traceback, an untyped ``internal_error`` or a hang. A batch with one bad item
must start nothing.

- ``tool_inputs``: requests sent through ``core.tools.call_tool`` in process
  (malformed JSON, invalid UTF-8, NUL, huge, deeply nested, every field with
  every wrong JSON type, hostile ids, forged cursors).
- ``cli_inputs``: the same kinds through the console script (bytes on stdin,
  ids shaped like options or paths, forged cursors, absurd numbers).
- ``importer_inputs``: transcripts made of hostile lines, imported, then every
  session listed and previewed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reliability_support import (
    Tally,
    cli_problem,
    new_tag,
    payload_problem,
    run_cli,
    survivors,
    timed,
)
from support import write_config

from core.config import DB_FILENAME
from core.models import SessionScope
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

CALL_TIMEOUT_S = 30.0
IMPORT_TIMEOUT_S = 120.0

HOSTILE_IDS = (
    "--last",
    "-p",
    "--dangerously-skip-permissions",
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "a\nb",
    "id\r\nwith crlf",
    "\x00",
    "nul\x00inside",
    "\x1b[2J\x1b]0;pwned\x07",
    " ",
    "*",
    "%s%n",
    "💥" * 50,
    "\u202egnp.exe",
    "x" * 100_000,
)
WRONG_TYPES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    2**63,
    2**64 + 1,
    -(2**70),
    1.5,
    1e308,
    "",
    [],
    {},
    [1, 2],
    {"a": 1},
    "x" * 100_000,
)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def cursor_of(payload: Any) -> str:
    return b64(json.dumps(payload).encode())


def forged_cursors(conversation_id: str) -> Iterator[str]:
    """Cursors we never minted: garbage, wrong kinds, and every field with a wrong type."""
    yield from ("", "!!!!", "====", "a", "x" * 10_000, "\x00", "é", "--last")
    yield b64(b"\xff\xfe\x00garbage")
    yield b64(b"not json")
    yield b64(b"[" * 100_000 + b"]" * 100_000)
    yield b64(json.dumps([1, 2]).encode())
    yield b64(b"null")
    yield b64(b'"s"')
    yield b64(b"1e999")
    templates: list[dict[str, Any]] = [
        {"v": 1, "k": "s", "t": 1, "id": conversation_id},
        {"v": 1, "k": "m", "c": conversation_id, "s": 1},
        {"v": 1, "k": "t", "c": conversation_id, "o": 0},
    ]
    for template in templates:
        for key in template:
            for bad in (*WRONG_TYPES[:9], "1", -(2**63) - 1, float("nan")):
                yield cursor_of({**template, key: bad})
        yield cursor_of({k: v for k, v in template.items() if k != "v"})
        yield cursor_of({**template, "k": "zz"})
        yield cursor_of({**template, "extra": {"deep": [[[]]]}})
    yield cursor_of({"v": 1, "k": "m", "c": "someone-else", "s": 1})
    yield cursor_of({"v": 1, "k": "t", "c": conversation_id, "o": -1})
    yield cursor_of({"v": 1, "k": "t", "c": conversation_id, "o": 2**62})


def _raw_requests() -> Iterator[str | bytes]:
    """Requests that are not even a valid JSON object."""
    yield from (b"", b" ", b"{", b"}", b"[]", b"null", b"1", b'"x"', b"\x00", b"{}\x00")
    yield b"\xff\xfe{}"
    yield "\ufeff{}".encode()
    yield '{"operation": "list"}'.encode("utf-16")
    yield '{"operation": "list"}'.encode("utf-32")
    yield b'{"operation": "\xff\xfe"}'
    yield b'{"operation": "list", "cursor": "\xc3\x28"}'
    yield b'{"operation": "list"' + b" " * 1000
    yield '{"operation": "list", "x": "\\ud800"}'
    yield '{"operation": "\\u0000list"}'
    yield "[" * 100_000 + "]" * 100_000
    yield '{"a":' * 100_000 + "1" + "}" * 100_000
    yield '{"operation": "list", "pad": "' + "x" * 5_000_000 + '"}'
    yield '{"operation": "list", "limit": 1e999}'
    yield '{"operation": "list", "limit": NaN}'
    yield '{"operation": "list", "limit": Infinity}'
    yield '{"operation": "list", "limit": 99999999999999999999999999999999}'
    yield '{"operation": "list", "operation": "dismiss"}'
    yield '{"operation": "list"} trailing'


def sessions_requests(conversation_id: str) -> Iterator[str | bytes | dict[str, Any]]:
    """Every hostile request to ``delegate_sessions``."""
    yield from _raw_requests()
    for bad in WRONG_TYPES:
        yield {"operation": bad}
        yield {"operation": "list", "limit": bad}
        yield {"operation": "list", "cursor": bad}
        yield {"operation": "messages", "conversation_id": bad}
        yield {"operation": "messages", "conversation_id": conversation_id, "limit": bad}
        yield {"operation": "dismiss", "conversation_id": bad}
    for hostile in HOSTILE_IDS:
        yield {"operation": "messages", "conversation_id": hostile}
        yield {"operation": "dismiss", "conversation_id": hostile}
    yield {"operation": "list", "unknown_field": 1}
    yield {"operation": "dismiss", "conversation_id": conversation_id, "limit": 3}
    for cursor in forged_cursors(conversation_id):
        yield {"operation": "list", "cursor": cursor}
        yield {"operation": "messages", "conversation_id": conversation_id, "cursor": cursor}


def agent_requests(conversation_id: str, cwd: Path) -> Iterator[dict[str, Any] | str]:
    """Every hostile request to ``delegate_agent`` (one that fails may start no run)."""
    yield "{"
    yield "[]"
    for bad in WRONG_TYPES:
        if bad not in ("x" * 100_000,):  # a long prompt is a valid prompt
            yield {"prompt": bad}
        yield {"prompt": "hi", "agent_id": bad}
        yield {"prompt": "hi", "conversation_id": bad}
        yield {"prompt": "hi", "cwd": bad}
        yield {"prompt": "hi", "mode": bad}
        yield {"batch": bad}
    for hostile in HOSTILE_IDS:
        yield {"prompt": "hi", "conversation_id": hostile}
        yield {"prompt": "hi", "agent_id": hostile}
    for where in ("/no/such/folder", "relative/folder", "~nosuchuser/x", "\x00", str(cwd / "f")):
        yield {"prompt": "hi", "cwd": where}
    yield {"prompt": "hi", "conversation_id": conversation_id, "cwd": str(cwd)}
    yield {"prompt": "hi", "batch": [{"prompt": "a"}]}
    yield {"batch": []}
    yield {"batch": [{}]}
    yield {"batch": [{"prompt": "fine"}, {"prompt": ""}]}
    yield {"batch": [{"prompt": "fine"}, {"prompt": "x", "agent_id": "nope"}]}
    yield {"batch": [{"prompt": "fine"}, {"prompt": "x", "cwd": "/no/such/folder"}]}
    yield {"batch": [{"prompt": "fine"}, {"prompt": "x", "extra": 1}]}


def _run_count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


async def tool_inputs(work: Path, *, limit: int | None = None) -> Tally:
    """Hostile requests through ``call_tool`` in this process (``limit``: the first N)."""
    tally = Tally("hostile inputs: JSON tools (in process)")
    with timed(tally):
        data = work / "tools-data"
        shutil.rmtree(data, ignore_errors=True)
        write_config(data)
        (work / "f").write_text("a file, not a folder")
        orch = await AgentOrchestrator.open(data)
        try:
            first = await call_tool(orch, "delegate_agent", {"prompt": "a session to aim at"})
            assert first.get("status") == "ok", first
            conversation = str(first["conversation_id"])
            cases: list[tuple[str, Any]] = [
                *(("delegate_sessions", r) for r in sessions_requests(conversation)),
                *(("delegate_agent", r) for r in agent_requests(conversation, work)),
                ("no_such_tool", "{}"),
                ("", "{}"),
            ]
            for name, raw in cases[:limit]:
                tally.trials += 1
                tally.faults += 1
                before = _run_count(data / DB_FILENAME)
                try:
                    answer = await asyncio.wait_for(call_tool(orch, name, raw), CALL_TIMEOUT_S)
                except TimeoutError:
                    tally.hang(f"{name} {str(raw)[:80]!r}")
                    continue
                except Exception as exc:
                    tally.lose(
                        f"{name} {str(raw)[:80]!r} raised {type(exc).__name__}: {str(exc)[:200]}"
                    )
                    continue
                problem = payload_problem(answer)
                if problem:
                    tally.lose(f"{name} {str(raw)[:80]!r}: {problem}")
                elif answer.get("status") == "error" and _run_count(data / DB_FILENAME) != before:
                    tally.lose(
                        f"{name} {str(raw)[:80]!r} failed but started a run: {answer!r:.200}"
                    )
            page = await orch.list_sessions(100)
            if conversation not in {s.conversation_id for s in page.sessions}:
                tally.lose("the session aimed at is gone (hostile input dismissed it)")
        finally:
            await orch.close(wait=False)
    return tally


# --- the command line -------------------------------------------------------------


def cli_cases(conversation_id: str) -> Iterator[tuple[list[str], bytes | None, bool]]:
    """``(argv, stdin, json_out)`` of every hostile command line."""
    for stdin in (
        b"",
        b"\xff\xfe{}",
        "\ufeff{}".encode(),
        '{"operation": "list"}'.encode("utf-16"),
        b"\x00",
        b'{"operation": "list"}\x00',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"operation": "\xc3\x28"}',
        b"x" * 3_000_000,
    ):
        yield ["tool", "delegate_sessions", "-"], stdin, True
    yield ["tool", "delegate_agent", "-"], b"\xff\xfe\x00\x00", True
    # One 10 MB unbroken token as a prompt: counting it must stay bounded.
    yield ["tool", "delegate_agent", "-"], json.dumps({"prompt": "x" * 10_000_000}).encode(), True
    for hostile in (
        "--last",
        "-p",
        "../x",
        "a\nb",
        "\x1b[2J",
        "x" * 10_000,
        "",
        "\u202e",
    ):
        yield ["sessions", "show", f"--cursor={hostile}", conversation_id], None, False
        yield ["sessions", "show", "--json", "--", hostile], None, True
        yield ["sessions", "dismiss", "--json", "--", hostile], None, True
        yield ["run", f"--session={hostile}", "hello"], None, False
        yield ["run", f"--agent={hostile}", "hello"], None, False
    for cursor in list(forged_cursors(conversation_id))[::4]:
        yield ["sessions", "list", "--json", f"--cursor={cursor}"], None, True
    for number in ("-1", "0", "101", "99999999999999999999999", "1e9", "0x10", "٣"):
        yield ["sessions", "list", "--json", f"--limit={number}"], None, True
        yield ["history", "--json", f"--limit={number}"], None, True
        yield ["sessions", "show", "--json", f"--last={number}", conversation_id], None, True
    yield ["run", "--cwd=/no/such/folder", "hello"], None, False
    yield ["run", "--cwd=~nosuchuser", "hello"], None, False
    yield ["run", "--session", conversation_id, "--cwd=/tmp", "hello"], None, False


def cli_inputs(work: Path, *, limit: int | None = None) -> Tally:
    """Hostile command lines through the console script (``limit``: the first N)."""
    tally = Tally("hostile inputs: command line")
    with timed(tally):
        data = work / "cli-data"
        shutil.rmtree(data, ignore_errors=True)
        write_config(data)
        first = run_cli(
            ["--data-dir", str(data), "tool", "delegate_agent", '{"prompt": "aim here"}'],
            home=work,
            tag=new_tag(),
        )
        assert first.code == 0, first.text
        conversation = json.loads(first.stdout)["conversation_id"]
        for args, stdin, json_out in list(cli_cases(conversation))[:limit]:
            if tally.out_of_time():
                break
            tally.trials += 1
            tally.faults += 1
            tag = new_tag()
            result = run_cli(["--data-dir", str(data), *args], home=work, tag=tag, stdin=stdin)
            tally.add_survivors(survivors(tag, grace_s=2.0), f"{args!r:.80}")
            if result.hung:
                tally.hang(f"{args!r:.120}")
                continue
            problem = cli_problem(result, json_out=json_out)
            if problem:
                tally.lose(f"{args!r:.120}: {problem}")
    return tally


# --- the importers ----------------------------------------------------------------

CLAUDE_ID = "0199aaaa-0000-7000-8000-{:012d}"
CODEX_ID = "0199bbbb-0000-7000-8000-{:012d}"
TS = "2026-03-01T10:00:00.000Z"


def _claude_line(sid: str, **over: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "user",
        "sessionId": sid,
        "uuid": f"{sid}-u",
        "cwd": "/work/x",
        "timestamp": TS,
        "message": {"role": "user", "content": "hello"},
    }
    line.update(over)
    return line


def _hostile_lines(sid: str) -> Iterator[bytes]:
    """One hostile line each (the file around it is otherwise ordinary)."""
    yield b"\xff\xfe not utf-8 \xc3\x28\n"
    yield b"\x00\x00\x00\n"
    yield b"\xef\xbb\xbf" + json.dumps(_claude_line(sid)).encode() + b"\n"
    yield b'{"type":"user","message":{"content":' + b"[" * 100_000 + b"]" * 100_000 + b"}}\n"
    yield b'{"type":"user","message":{"content":"' + b"x" * (9 * 1024 * 1024) + b'"}}\n'
    yield b"[]\n"
    yield b"null\n"
    yield b'"just a string"\n'
    yield b'{"type": 5}\n'
    for key, bad in (
        ("timestamp", "9999-12-31T23:59:59-14:00"),
        ("timestamp", "0001-01-01T00:00:00+14:00"),
        ("timestamp", "2026-03-01T10:00:00+25:00"),
        ("timestamp", 1e308),
        ("timestamp", None),
        ("message", 1),
        ("message", {"role": "user", "content": {"a": 1}}),
        ("message", {"role": "user", "content": [None, 1, {"type": 5}]}),
        ("message", {"role": 7, "content": "x"}),
        ("cwd", 5),
        ("cwd", "\x00"),
        ("sessionId", 5),
        ("sessionId", None),
        ("uuid", ["x"]),
        ("isSidechain", "yes"),
        ("gitBranch", {"x": 1}),
        ("type", "assistant"),
    ):
        yield json.dumps(_claude_line(sid, **{key: bad})).encode() + b"\n"
    for n in (2**63, 2**64, -(2**63) - 1, 10**30, 1.5e308, "lots"):
        usage = {"input_tokens": n, "output_tokens": n, "cache_read_input_tokens": n}
        message = {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "k"}]}
        line = _claude_line(sid, type="assistant", message={**message, "usage": usage})
        yield json.dumps(line).encode() + b"\n"


def _codex_hostile_lines(sid: str) -> Iterator[bytes]:
    yield b"\xff\xfe\n"
    yield b'{"type":"event_msg","payload":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    for payload in (
        None,
        5,
        {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 2**64}}},
        {"type": "token_count", "info": {"model_context_window": 10**30}},
        {"type": "token_count", "info": "x"},
        {"type": "user_message", "message": 5},
        {"type": "user_message", "message": None},
        {"type": "message", "role": "assistant", "content": "not a list"},
    ):
        yield json.dumps({"timestamp": TS, "type": "event_msg", "payload": payload}).encode()
        yield b"\n"
    for ts in ("9999-12-31T23:59:59-14:00", "-001-01-01T00:00:00Z", 5):
        yield json.dumps({"timestamp": ts, "type": "event_msg", "payload": {}}).encode() + b"\n"


def _write_importer_tree(root: Path) -> tuple[Path, Path, set[str]]:
    """One file per hostile line, each an otherwise ordinary session; returns the good ids."""
    claude, codex = root / "claude", root / "codex"
    shutil.rmtree(root, ignore_errors=True)
    project = claude / "projects" / "-work-x"
    day = codex / "sessions" / "2026" / "03" / "01"
    project.mkdir(parents=True)
    day.mkdir(parents=True)
    good: set[str] = set()
    n = 0
    for n, line in enumerate(_hostile_lines("placeholder"), start=1):
        sid = CLAUDE_ID.format(n)
        ordinary = json.dumps(_claude_line(sid)).encode() + b"\n"
        (project / f"{sid}.jsonl").write_bytes(
            ordinary + line.replace(b"placeholder", sid.encode()) + ordinary
        )
        good.add(sid)
    for m, line in enumerate(_codex_hostile_lines("x"), start=n + 1):
        sid = CODEX_ID.format(m)
        meta = {"timestamp": TS, "type": "session_meta", "payload": {"id": sid, "cwd": "/w"}}
        prompt = {
            "timestamp": TS,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "hello"},
        }
        body = json.dumps(meta).encode() + b"\n" + line + json.dumps(prompt).encode() + b"\n"
        (day / f"rollout-2026-03-01T10-00-00-{sid}.jsonl").write_bytes(body)
        good.add(sid)
    return claude, codex, good


async def importer_inputs(work: Path) -> Tally:
    """Import one file per hostile line, then list and preview every session."""
    tally = Tally("hostile inputs: importers")
    with timed(tally):
        claude, codex, good = _write_importer_tree(work / "import-tree")
        tally.trials += len(good)
        tally.faults += len(good)
        data = work / "import-data"
        shutil.rmtree(data, ignore_errors=True)
        orch = await AgentOrchestrator.open(data)
        try:
            try:
                await asyncio.wait_for(orch.import_sources(claude, codex), IMPORT_TIMEOUT_S)
            except TimeoutError:
                tally.hang("the import of hostile lines")
                return tally
            except Exception as exc:
                tally.losses += len(good)
                tally.note(f"loss: the import raised {type(exc).__name__}: {exc}"[:300])
                return tally
            listed: set[str] = set()
            cursor = None
            try:
                while True:
                    page = await orch.list_sessions(
                        100, cursor, scope=SessionScope(top_level=False, warmup=True)
                    )
                    listed |= {s.conversation_id for s in page.sessions}
                    if (cursor := page.next_cursor) is None:
                        break
            except Exception as exc:
                tally.losses += len(good)
                tally.note(f"loss: listing raised {type(exc).__name__}: {exc}"[:300])
                return tally
            for sid in sorted(good):
                if sid not in listed:
                    tally.lose(f"{sid}: one hostile line lost the whole session")
                    continue
                try:
                    await asyncio.wait_for(orch.recent_messages(sid, 20), CALL_TIMEOUT_S)
                except TimeoutError:
                    tally.hang(f"preview of {sid}")
                except Exception as exc:
                    tally.lose(f"preview of {sid} raised {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            await orch.close(wait=False)
    return tally
