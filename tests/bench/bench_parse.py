"""Where an import's parse spends its CPU, and what faster decoders would buy.

Reads the real main transcripts of ``tests/fixtures/realdata`` (8 Claude Code
sessions, 5 Codex rollouts: the files the import benchmark's corpus copies, so
the same bytes in the same proportions) from memory, in interleaved rounds,
and prints CPU time per pass (``time.process_time``, not wall time: the
machine is shared) as MB/s per core, with the load average:

- the parse itself, built up step by step: splitting lines, + ``orjson``
  decoding, + the session facts (``feed``), ``parse_file`` without and with
  the search texts;
- decoders alone over every line: ``orjson`` to dicts, and, when ``msgspec``
  is installed (``uv run --with msgspec ...``), ``msgspec`` to dicts and
  ``msgspec`` into typed Structs that keep only the keys the facts read and
  skip the rest (tool output, file contents) without building it;
- with ``pysimdjson`` installed (``--with pysimdjson``), the simdjson
  bindings: to dicts, and a lazy document of which only the type is read; and
  the worker's loop (split, decode, facts, texts) with orjson against the same
  loop on simdjson, where a line whose facts are known from a field or two is
  read through the lazy document and never becomes a dict (checked to give the
  same parse states, texts and bad lines first);
- the Claude Code lines alone: ``orjson``, the byte checks a skipping decoder
  would need before it to refuse what ``orjson`` refuses (invalid UTF-8 in a
  skipped string, nesting over 1,024 levels, a lone surrogate escape), and
  those checks plus the ``msgspec`` Structs.
- the floor of reading every line in Python: the cheapest split into lines,
  that split plus ``orjson`` (each line decoded and dropped: no facts), the
  search texts alone (prompts and replies extracted and masked, from lines
  decoded beforehand), every line decoded with its facts and texts found, the
  same behind a byte pre-filter at its best (an oracle, decided before timing,
  says which lines to read; the rest cost one ``bytes.find``), and ``msgspec``'s
  ``decode_lines`` into the Structs (the split done natively), with and without
  reading one field per line.
  Each is also given as the CPU seconds it would take over the import
  benchmark's corpus (``--corpus-bytes``, 1.65 GB), beside the budget the import's
  goal leaves: 2.5 s on every core (``--goal-s``).

Usage::

    uv run --with msgspec --with pysimdjson python tests/bench/bench_parse.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `core` importable
    sys.path.insert(0, str(ROOT))

from core.sources import claude, codex  # noqa: E402
from core.sources.lines import ForwardLines, loads  # noqa: E402
from core.sources.texts import extractor  # noqa: E402
from core.sources.worker import FileTask, parse_file  # noqa: E402

try:  # only to compare: not a dependency (``uv run --with pysimdjson``)
    import simdjson
except ImportError:  # pragma: no cover
    simdjson = None

try:  # only to compare: not a dependency (``uv run --with msgspec``)
    import msgspec
except ImportError:  # pragma: no cover
    msgspec = None
else:

    class _Block(msgspec.Struct):
        type: Any = None
        text: Any = None

    class _Message(msgspec.Struct):
        id: Any = None
        model: Any = None
        usage: Any = None
        content: str | list[_Block] | None = None

    class _ClaudeLine(msgspec.Struct):
        """The keys the session facts and search texts read; the rest is skipped."""

        type: Any = None
        timestamp: Any = None
        version: Any = None
        sessionId: Any = None
        agentId: Any = None
        cwd: Any = None
        gitBranch: Any = None
        isMeta: Any = None
        isCompactSummary: Any = None
        isSidechain: Any = None
        subtype: Any = None
        summary: Any = None
        customTitle: Any = None
        title: Any = None
        aiTitle: Any = None
        message: _Message | None = None

    class _Payload(msgspec.Struct):
        type: Any = None
        role: Any = None
        content: list[_Block] | None = None
        message: Any = None
        info: Any = None
        model: Any = None
        cwd: Any = None
        id: Any = None
        cli_version: Any = None
        timestamp: Any = None
        git: Any = None

    class _CodexLine(msgspec.Struct):
        type: Any = None
        timestamp: Any = None
        payload: _Payload | None = None


def _typed_decoders() -> dict[str, Any]:
    """msgspec decoders into the Structs that keep only what the facts read."""
    return {
        claude.SOURCE: msgspec.json.Decoder(_ClaudeLine),
        codex.SOURCE: msgspec.json.Decoder(_CodexLine),
    }


REALDATA = ROOT / "tests" / "fixtures" / "realdata"
Out = Callable[[str], None]


def main_files() -> list[tuple[str, Path, str]]:
    """(source, file, id) of every main session file: no sub-agents."""
    found = []
    for path in sorted((REALDATA / "claude" / "projects").glob("*/*.jsonl")):
        if not path.name.startswith("agent-"):
            found.append((claude.SOURCE, path, path.stem))
    for path in sorted((REALDATA / "codex" / "sessions").rglob("rollout-*.jsonl")):
        found.append((codex.SOURCE, path, path.stem[-36:]))
    return found


def _steps(files: list[tuple[str, Path, str]]) -> list[tuple[str, Callable[[], object]]]:
    def lines() -> None:
        for _source, path, _id in files:
            with path.open("rb") as f:
                for _at, raw in ForwardLines(f, 0):
                    if raw:
                        pass

    def decode() -> None:
        for _source, path, _id in files:
            with path.open("rb") as f:
                for _at, raw in ForwardLines(f, 0):
                    if raw:
                        loads(raw)

    def facts() -> None:
        for source, path, _id in files:
            state = claude.ClaudeState() if source == claude.SOURCE else codex.CodexState()
            with path.open("rb") as f:
                for _at, raw in ForwardLines(f, 0):
                    if raw:
                        state.feed(loads(raw))

    def parse(search: bool) -> Callable[[], None]:
        def run() -> None:
            for source, path, cid in files:
                size = path.stat().st_size
                parse_file(FileTask(str(path), source, size, 0, cid, search_text=search))

        return run

    return [
        ("split lines", lines),
        ("+ orjson decode", decode),
        ("+ session facts (feed)", facts),
        ("parse_file, no search texts", parse(False)),
        ("parse_file (what a worker runs)", parse(True)),
    ]


def _decoders(raw: list[tuple[str, list[bytes]]]) -> list[tuple[str, Callable[[], object]]]:
    def every_line(decode: Callable[[bytes], object]) -> Callable[[], None]:
        def run() -> None:
            for _source, lines in raw:
                for line in lines:
                    decode(line)

        return run

    found = [("orjson -> dicts", every_line(orjson.loads))]
    if simdjson is not None:
        lazy = simdjson.Parser()
        found += [
            ("pysimdjson -> dicts", every_line(simdjson.loads)),
            # A lazy document: only the values read become Python objects.
            ("pysimdjson lazy, the type read", every_line(lambda ln: lazy.parse(ln).get("type"))),
        ]
    if msgspec is None:
        return found
    typed = _typed_decoders()

    def with_structs() -> None:
        for source, lines in raw:
            decoder = typed[source]
            for line in lines:
                decoder.decode(line)

    return [
        *found,
        ("msgspec -> dicts", every_line(msgspec.json.Decoder().decode)),
        ("msgspec -> typed Structs", with_structs),
    ]


def _guards(line: bytes) -> None:
    """What a skipping decoder must check first to refuse what orjson refuses."""
    if not line.isascii():
        line.decode("utf-8")
    _ = line.count(b"{") + line.count(b"[")
    _ = b"\\ud" in line or b"\\uD" in line


def _claude_only(raw: list[tuple[str, list[bytes]]]) -> list[tuple[str, Callable[[], object]]]:
    lines = [line for source, ls in raw if source == claude.SOURCE for line in ls]

    def with_orjson() -> None:
        for line in lines:
            orjson.loads(line)

    def guards() -> None:
        for line in lines:
            _guards(line)

    found = [("orjson", with_orjson), ("the byte checks alone", guards)]
    if msgspec is None:
        return found
    decoder = msgspec.json.Decoder(_ClaudeLine)

    def checked() -> None:
        for line in lines:
            _guards(line)
            decoder.decode(line)

    return [*found, ("the byte checks + msgspec Structs", checked)]


_CALLS_AND_OUTPUTS = codex._CALLS | codex._OUTPUTS  # a message each, nothing else

PASS, COUNT, READ = 0, 1, 2
"""What a byte pre-filter would do with a line: pass over it, count it, or read it."""


def _needed(source: str, lines: list[dict[str, Any]]) -> list[int]:
    """An oracle for a byte pre-filter: what each line's facts and texts need of it.

    Read: the lines whose values the facts or search texts use. Counted: a tool call,
    a tool output or a tool result, which add a message and nothing else. Passed
    over: the rest (reasoning, progress, snapshots...), and every Codex token count
    but the last before each prompt and at the end, as if the facts kept only those.
    """
    needs: list[int] = []
    token_count: int | None = None
    for i, line in enumerate(lines):
        kind = line.get("type")
        payload = line.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        if source == codex.SOURCE:
            if kind == "event_msg" and sub == "token_count":
                needs.append(PASS)
                token_count = i
                continue
            prompt = kind == "event_msg" and sub == "user_message"
            if prompt and token_count is not None:
                needs[token_count], token_count = READ, None
            if (
                prompt
                or kind in ("session_meta", "turn_context", "compacted")
                or (kind == "response_item" and sub == "message")
            ):
                needs.append(READ)
            elif kind == "response_item" and sub in _CALLS_AND_OUTPUTS:
                needs.append(COUNT)
            else:
                needs.append(PASS)
        elif kind == "user" and claude.user_role(line) == claude.TOOL:
            needs.append(COUNT)
        elif kind in ("user", "assistant", "system", "summary", "custom-title", "ai-title"):
            needs.append(READ)
        else:
            needs.append(PASS)
    if token_count is not None:
        needs[token_count] = READ
    return needs


def _floor(
    buffers: list[tuple[str, bytes]],
) -> list[tuple[str, Callable[[], object]]]:
    """The least a Python reader of every line costs: nothing is done with a line."""

    def split() -> None:
        for _source, buffer in buffers:
            for line in buffer.split(b"\n"):
                if line:
                    pass

    def split_orjson() -> None:
        decode = orjson.loads
        for _source, buffer in buffers:
            for line in buffer.split(b"\n"):
                if line:
                    decode(line)

    # What the index must do with some lines whatever reads them: the prompts and
    # replies search holds, extracted and masked (lines decoded before timing).
    decoded = [
        (source, [orjson.loads(ln) for ln in buffer.split(b"\n") if ln])
        for source, buffer in buffers
    ]

    def search_texts() -> None:
        for source, lines in decoded:
            extract = extractor(source)
            for line in lines:
                extract(line)

    # A byte pre-filter at its best: an oracle (decided before timing) says which
    # lines to read; each line costs one ``bytes.find``, standing in for the check.
    needed = [
        (source, buffer, _needed(source, lines))
        for (source, lines), (_s, buffer) in zip(decoded, buffers, strict=True)
    ]

    def every_line() -> None:
        for source, buffer in buffers:
            _orjson_loop(source, buffer)

    def prefiltered() -> None:
        for source, buffer, needs in needed:
            state, extract = _new_state(source), extractor(source)
            texts: list[Any] = []
            counted = 0
            lines = (line for line in buffer.split(b"\n") if line)
            for line, need in zip(lines, needs, strict=True):
                line.find(b'"type":"')
                if need == COUNT:
                    counted += 1
                elif need == READ:
                    _take(state, extract, orjson.loads(line), texts)

    found = [
        ("bytes.split", split),
        ("bytes.split + orjson, dropped", split_orjson),
        ("search texts alone (decoded before)", search_texts),
        ("every line: decode, facts, texts", every_line),
        ("  an oracle's pre-filter in front", prefiltered),
    ]
    if msgspec is None or not hasattr(msgspec.json.Decoder, "decode_lines"):
        return found
    typed = _typed_decoders()

    def native_lines() -> None:
        for source, buffer in buffers:
            typed[source].decode_lines(buffer)

    def native_lines_typed() -> None:
        for source, buffer in buffers:
            for line in typed[source].decode_lines(buffer):
                if line.type is None:
                    pass

    return [
        *found,
        ("msgspec decode_lines -> Structs", native_lines),
        ("  + each line's type read", native_lines_typed),
    ]


Parsed = tuple[dict[str, Any], list[Any], int]
"""What a loop makes of one file: its parse state, its search texts, its bad lines."""

# Claude Code line types whose only fact is their time (feed returns after it).
_CLAUDE_TIME_ONLY = claude.KNOWN_TYPES - {
    "user",
    "assistant",
    "system",
    "summary",
    "custom-title",
    "ai-title",
}
_ENVELOPE = ("version", "sessionId", "agentId", "cwd", "gitBranch")


def _new_state(source: str) -> claude.ClaudeState | codex.CodexState:
    return claude.ClaudeState() if source == claude.SOURCE else codex.CodexState()


def _orjson_loop(source: str, buffer: bytes) -> Parsed:
    """The worker's loop: every line decoded to a dict, fed and searched."""
    state, extract = _new_state(source), extractor(source)
    texts: list[Any] = []
    bad = 0
    for raw in buffer.split(b"\n"):
        if not raw:
            continue
        try:
            line = orjson.loads(raw)
        except Exception:
            bad += 1
            continue
        bad += _take(state, extract, line, texts)
    return state.to_json(), texts, bad


def _take(
    state: claude.ClaudeState | codex.CodexState,
    extract: Callable[[dict[str, Any]], Any],
    line: Any,
    texts: list[Any],
) -> int:
    """Feed one decoded line and keep its search text, as the worker does; 1 for a
    bad line (not an object, or a shape the facts did not foresee), else 0."""
    if type(line) is not dict:
        return 1
    try:
        state.feed(line)
        if (text := extract(line)) is not None:
            texts.append(text)
    except Exception:
        return 1
    return 0


def _simdjson_loop(source: str, buffer: bytes) -> Parsed:
    """Every line parsed (and so checked) by simdjson; a line whose facts are known
    from a field or two is read through the lazy document and never becomes a dict:
    a Codex tool call, output, reasoning or event, a Claude Code tool result, a
    Claude Code line that carries only its time. The rest go through the same feed."""
    state, extract = _new_state(source), extractor(source)
    texts: list[Any] = []
    bad = 0
    parser = simdjson.Parser()
    document = simdjson.Object
    for raw in buffer.split(b"\n"):
        if not raw:
            continue
        try:
            doc = parser.parse(raw)
        except Exception:
            doc = None
        if type(doc) is not document:
            doc = None
            try:
                line = orjson.loads(raw)  # what the worker does with it, error or not
            except Exception:
                bad += 1
                continue
        elif _fast_lane(state, doc):
            del doc  # the parser can take the next line only once the document is gone
            continue
        else:
            line = doc.as_dict()
            del doc
        bad += _take(state, extract, line, texts)
    return state.to_json(), texts, bad


def _pointer(doc: Any, path: str) -> Any:
    try:
        return doc.at_pointer(path)
    except Exception:  # not there, or not an object on the way
        return None


def _fast_lane(state: claude.ClaudeState | codex.CodexState, doc: Any) -> bool:
    """Take ``doc`` into account without a dict, when its facts allow; else False."""
    kind = doc.get("type")
    if isinstance(state, codex.CodexState):
        sub = _pointer(doc, "/payload/type")
        if type(sub) is not str:
            return False
        if kind == "response_item" and sub != "message":
            state.saw_timestamp(doc.get("timestamp"))
            state.messages += sub in _CALLS_AND_OUTPUTS
            return True
        if kind == "event_msg" and sub != "user_message":
            state.saw_timestamp(doc.get("timestamp"))
            if sub == "token_count":
                info = _pointer(doc, "/payload/info")
                state._tokens(info.as_dict() if type(info) is simdjson.Object else info)
            return True
        return False
    if kind in _CLAUDE_TIME_ONLY:
        state.saw_timestamp(doc.get("timestamp"))
        return True
    if kind != "user" or doc.get("isMeta") or doc.get("isCompactSummary"):
        return False
    content = _pointer(doc, "/message/content")
    tool_results = (
        type(content) is simdjson.Array
        and len(content) > 0
        and all(type(b) is simdjson.Object and b.get("type") == "tool_result" for b in content)
    )
    del content
    if not tool_results:
        return False
    state.saw_timestamp(doc.get("timestamp"))
    state._envelope({key: doc.get(key) for key in _ENVELOPE})
    state.messages += 1  # a tool result: a message, not a turn, no search text
    return True


def _loops(buffers: list[tuple[str, bytes]], out: Out) -> list[tuple[str, Callable[[], object]]]:
    """The worker's loop with orjson, and with simdjson's fast lanes when installed."""

    def loop(parse: Callable[[str, bytes], Parsed]) -> Callable[[], None]:
        def run() -> None:
            for source, buffer in buffers:
                parse(source, buffer)

        return run

    found = [("orjson, every line a dict", loop(_orjson_loop))]
    if simdjson is None:
        return found
    same = all(_orjson_loop(s, b) == _simdjson_loop(s, b) for s, b in buffers)
    out(
        f"simdjson fast lanes: the same states, texts and bad lines as orjson: {same}"
        + ("" if same else " -> BAD")
    )
    return [*found, ("simdjson, fast lanes for known lines", loop(_simdjson_loop))]


def measure(
    name: str,
    runs: list[tuple[str, Callable[[], object]]],
    size: int,
    rounds: int,
    out: Out,
    corpus_bytes: float = 0,
) -> None:
    spent = dict.fromkeys((n for n, _ in runs), 0.0)
    for _name, run in runs:
        run()  # warm: files in the page cache, caches filled
    load = []
    for _ in range(rounds):
        for n, run in runs:
            t0 = time.process_time()
            run()
            spent[n] += time.process_time() - t0
        load.append(os.getloadavg()[0])
    lo, hi = min(load), max(load)
    out(f"{name} ({size / 1e6:.1f} MB, {rounds} interleaved rounds, load {lo:.2f}-{hi:.2f}):")
    for n, _run in runs:
        per_pass = spent[n] / rounds
        rate = size / per_pass / 1e6
        line = f"  {n:36s} {per_pass * 1000:7.1f} ms CPU  {rate:6.0f} MB/s per core"
        if corpus_bytes:
            line += f"  {corpus_bytes * per_pass / size:5.2f} s CPU for the corpus"
        out(line)


def main(argv: list[str] | None = None, out: Out = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--corpus-bytes",
        type=float,
        default=1.65e9,
        help="the import benchmark's corpus, which copies these files (default 1.65 GB)",
    )
    parser.add_argument("--goal-s", type=float, default=2.5, help="the import's goal (2.5 s)")
    args = parser.parse_args(argv)
    files = main_files()
    raw = [
        (source, [ln for ln in path.read_bytes().split(b"\n") if ln]) for source, path, _id in files
    ]
    size = sum(path.stat().st_size for _source, path, _id in files)
    claude_size = sum(len(ln) for source, ls in raw if source == claude.SOURCE for ln in ls)
    out(f"{len(files)} transcripts, {size / 1e6:.1f} MB; {os.cpu_count()} cores")
    measure("the parse, step by step", _steps(files), size, args.rounds, out)
    measure("decoders alone, every line", _decoders(raw), size, args.rounds, out)
    measure("Claude Code lines alone", _claude_only(raw), claude_size, args.rounds, out)
    buffers = [(source, path.read_bytes()) for source, path, _id in files]
    cores = os.cpu_count() or 1
    budget = args.goal_s * cores
    measure(
        "the floor of reading every line in Python",
        _floor(buffers),
        size,
        args.rounds,
        out,
        args.corpus_bytes,
    )
    out(
        f"  the goal's budget for the corpus ({args.corpus_bytes / 1e9:.2f} GB): "
        f"{args.goal_s} s on {cores} cores = {budget:.1f} s CPU"
    )
    measure(
        "the worker's loop (split, decode, facts, texts)",
        _loops(buffers, out),
        size,
        args.rounds,
        out,
        args.corpus_bytes,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
