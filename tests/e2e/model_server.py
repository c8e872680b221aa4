"""A loopback model server for the end-to-end tests: three wire protocols, every request recorded.

- Anthropic Messages API (``POST /v1/messages``, SSE when ``stream`` is true) for Claude Code;
- OpenAI Responses API (``POST /v1/responses``, SSE) for Codex;
- OpenAI Chat Completions (``POST /v1/chat/completions``, SSE) for ``openai_compat``.

Replies are deterministic: ``"pong <n>"`` where ``n`` counts the conversation's messages
the request carried, so a test can see the history grow. A prompt containing the word
``HANG`` makes the server hold the reply until :meth:`ModelServer.stop` (cancellation tests).
Two knobs for the context tests: ``context_tokens`` makes every Anthropic and
Responses reply report that many input tokens (a nearly full window), and ``reply_when(key, text)``
answers ``text`` when the conversation's last user message contains ``key``.
``tool_when(key, call, then)`` makes the Anthropic reply a tool call instead (the model
asks Claude Code to run one of its tools, e.g. ``Write``), and answers ``then`` once the
CLI sends the tool's result back; ``tool_results`` keeps those results.
``context_tokens_until`` ends the full window (``context_tokens`` back to None) at
the first request whose conversation contains that text (a successor's first prompt).

A first path segment picks a misbehaviour for Chat Completions (``base_url =
f"{server.url}/cut/v1"``): ``cut`` closes the connection mid-stream, before
``[DONE]``; ``chunkcut`` does it inside a chunked body (no last chunk);
``stall`` sends the first chunk, then nothing until :meth:`stop`; ``redirect``
answers 307 to the same path without the segment; ``gzip`` sends the whole
stream gzip-compressed.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INPUT_TOKENS_PER_MESSAGE = 100  # fixed so the usage a test asserts does not drift
OUTPUT_TOKENS = 7


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model makes: the tool's name and its input."""

    name: str
    input: dict[str, Any]


@dataclass
class ModelServer:
    """Serves on 127.0.0.1 in a background thread; ``requests`` keeps every request seen."""

    requests: list[Recorded] = field(default_factory=list)
    context_tokens: int | None = None  # reported as the input tokens when set
    context_tokens_until: str | None = None  # a request carrying this clears context_tokens
    replies: list[tuple[str, str]] = field(default_factory=list)
    tools: list[tuple[str, Callable[[str], ToolCall], str]] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    _calls: dict[str, str] = field(default_factory=dict)  # tool_use id -> the reply after it
    _stop: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> ModelServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def reply_when(self, key: str, text: str) -> None:
        """Answer ``text`` to a request whose last user message contains ``key``."""
        self.replies.append((key, text))

    def tool_when(self, key: str, call: Callable[[str], ToolCall], then: str) -> None:
        """Answer a tool call built from the last user message when it contains ``key``;
        answer ``then`` when the CLI sends that call's result back."""
        self.tools.append((key, call, then))

    def model_calls(self, path: str) -> list[Recorded]:
        """Streaming model requests to ``path`` (probes and side requests left out)."""
        return [
            r
            for r in self.requests
            if r.method == "POST"
            and r.path.split("?")[0] == path
            and isinstance(r.body, dict)
            and r.body.get("stream")
        ]


def conversation_length(path: str, body: dict[str, Any]) -> int:
    """How many conversation messages (user/assistant turns) a model request carries."""
    if path == "/v1/responses":
        items = body.get("input") or []
        return sum(
            1
            for i in items
            if isinstance(i, dict)
            and i.get("type", "message") == "message"
            and i.get("role") in ("user", "assistant")
        )
    return sum(1 for m in body.get("messages") or [] if m.get("role") in ("user", "assistant"))


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last user message (Anthropic, Chat or Responses shapes)."""
    items = body.get("messages") or body.get("input") or []
    users = [m for m in items if isinstance(m, dict) and m.get("role") == "user"]
    return json.dumps(users[-1].get("content")) if users else ""


def _text_of(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages") or body.get("input") or [])


# The word alone: a status such as CHANGES_REQUESTED must not hold a reply.
HANG = re.compile(r"\bHANG\b")

MISBEHAVIOURS = frozenset({"cut", "chunkcut", "stall", "redirect", "gzip"})


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"
    mode = ""  # one of MISBEHAVIOURS, for the request being answered

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _record(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.owner.requests.append(
            Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        return body

    def _json(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, name: str | None, payload: Any) -> None:
        head = f"event: {name}\n" if name else ""
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.wfile.write(f"{head}data: {data}\n\n".encode())
        self.wfile.flush()

    def do_HEAD(self) -> None:
        self._record()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record()
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            self._json({"object": "list", "data": [], "models": []})
        else:
            self._json({})

    def do_POST(self) -> None:
        body = self._record()
        path = self.path.split("?")[0]
        mode, _, rest = path[1:].partition("/")
        if mode in MISBEHAVIOURS:
            path = "/" + rest
            if mode == "redirect":
                self.send_response(307)
                self.send_header("location", path)
                self.send_header("content-length", "0")
                self.end_headers()
                return
        else:
            mode = ""
        self.mode = mode
        if not isinstance(body, dict):
            self._json({"error": "expected a JSON object"}, 400)
            return
        if path == "/v1/messages/count_tokens":
            self._json({"input_tokens": INPUT_TOKENS_PER_MESSAGE})
            return
        n = conversation_length(path, body)
        if HANG.search(_text_of(body)):
            self.owner._stop.wait(120)
            return
        reply = f"pong {n}"
        last = last_user_text(body)
        for key, text in self.owner.replies:
            if key in last:
                reply = text
        tool: tuple[str, ToolCall] | None = None
        if path == "/v1/messages":
            reply, tool = self._tool_turn(body, last, reply)
        input_tokens = INPUT_TOKENS_PER_MESSAGE * n
        until = self.owner.context_tokens_until
        if until is not None and until in _text_of(body):
            self.owner.context_tokens = None
        if self.owner.context_tokens is not None and path != "/v1/chat/completions":
            input_tokens = self.owner.context_tokens
        if path == "/v1/messages" and tool is not None:
            self._anthropic_tool_use(body, *tool, input_tokens)
        elif path == "/v1/messages":
            self._anthropic(body, reply, input_tokens)
        elif path == "/v1/responses":
            self._responses(body, reply, input_tokens)
        elif path == "/v1/chat/completions":
            self._chat(body, reply, input_tokens)
        else:
            self._json({})

    # --- Anthropic Messages ---------------------------------------------

    def _tool_turn(
        self, body: dict[str, Any], last: str, reply: str
    ) -> tuple[str, tuple[str, ToolCall] | None]:
        """(the text reply, or the tool call to make instead) for this request."""
        messages = body.get("messages") or []
        content = messages[-1].get("content") if messages else None
        results = [
            block
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        for result in results:
            then = self.owner._calls.get(str(result.get("tool_use_id")))
            if then is not None:
                self.owner.tool_results.append(result)
                return then, None
        if results:
            return reply, None
        for key, make_call, then in self.owner.tools:
            if key in last:
                call_id = f"toolu_{uuid.uuid4().hex[:24]}"
                self.owner._calls[call_id] = then
                return reply, (call_id, make_call(last))
        return reply, None

    def _anthropic_tool_use(
        self, body: dict[str, Any], call_id: str, call: ToolCall, input_tokens: int
    ) -> None:
        """One streamed reply whose only content is a ``tool_use`` block."""
        self._sse_start()
        message = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
        self._event("message_start", {"type": "message_start", "message": message})
        block = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
        self._event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.input)}
        self._event(
            "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        )
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _anthropic(self, body: dict[str, Any], reply: str, input_tokens: int) -> None:
        msg_id = f"msg_{uuid.uuid4().hex[:24]}"
        model = body.get("model", "claude-test")
        if not body.get("stream"):
            self._json(
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": reply}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": OUTPUT_TOKENS},
                }
            )
            return
        self._sse_start()
        self._event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            },
        )
        self._event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        for chunk in (reply[:3], reply[3:]):
            self._event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": chunk},
                },
            )
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    # --- OpenAI Responses -----------------------------------------------

    def _responses(self, body: dict[str, Any], reply: str, input_tokens: int) -> None:
        resp_id = f"resp_{uuid.uuid4().hex[:24]}"
        item_id = f"msg_{uuid.uuid4().hex[:24]}"
        model = body.get("model", "test-model")
        self._sse_start()
        base = {"id": resp_id, "object": "response", "model": model, "output": []}
        self._event(
            "response.created",
            {"type": "response.created", "response": {**base, "status": "in_progress"}},
        )
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        self._event(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        )
        for chunk in (reply[:3], reply[3:]):
            self._event(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": chunk,
                },
            )
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": reply, "annotations": []}],
        }
        self._event(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": done},
        )
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": OUTPUT_TOKENS,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + OUTPUT_TOKENS,
        }
        self._event(
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [done], "usage": usage},
            },
        )

    # --- OpenAI Chat Completions ----------------------------------------

    def _chat(self, body: dict[str, Any], reply: str, input_tokens: int) -> None:
        chat_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        model = body.get("model", "test-model")
        if self.mode == "gzip":
            self._gzip_stream(reply, input_tokens)
            return
        if self.mode == "chunkcut":
            self._chunked_cut(reply)
            return
        self._sse_start()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": chat_id,
                "object": "chat.completion.chunk",
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        self._event(None, chunk({"role": "assistant", "content": ""}))
        for part in (reply[:3], reply[3:]):
            self._event(None, chunk({"content": part}))
            if self.mode == "stall":
                self.owner._stop.wait(120)
                return
            if self.mode == "cut":
                return  # the connection closes: no finish_reason, no usage, no [DONE]
        self._event(None, chunk({}, "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event(
                None,
                {
                    "id": chat_id,
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": input_tokens,
                        "completion_tokens": OUTPUT_TOKENS,
                        "total_tokens": input_tokens + OUTPUT_TOKENS,
                    },
                },
            )
        self._event(None, "[DONE]")

    def _gzip_stream(self, reply: str, input_tokens: int) -> None:
        """The same stream as one gzip-compressed body (``content-encoding: gzip``)."""
        usage = {"prompt_tokens": input_tokens, "completion_tokens": OUTPUT_TOKENS}
        events = [
            {"choices": [{"index": 0, "delta": {"content": reply}}]},
            {"choices": [], "usage": usage},
        ]
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        data = gzip.compress(text.encode())
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-encoding", "gzip")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunked_cut(self, reply: str) -> None:
        """One chunk of a chunked body, then the connection closes mid-body."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        event = {"choices": [{"index": 0, "delta": {"content": reply}}]}
        data = f"data: {json.dumps(event)}\n\n".encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
        self.close_connection = True
