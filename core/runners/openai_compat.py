"""The ``openai_compat`` runner: any OpenAI-compatible Chat Completions endpoint.

``POST {base_url}/chat/completions`` with ``stream: true`` and
``stream_options: {include_usage: true}``; the reply arrives as server-sent
events (``data: {chunk}`` lines, ending with ``data: [DONE]``) and the usage in
the last chunk. The endpoint keeps no state: the conversation lives in our
store and is sent again on every run (:attr:`RunRequest.history`).

HTTP is a small HTTP/1.1 client over asyncio streams (stdlib only): a run is
a plain coroutine, so cancelling it closes the connection at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from core.config import AgentConfig
from core.errors import RunnerUnavailable
from core.models import Message, Role, Usage
from core.runners.base import (
    MessageOut,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequest,
    RunStarted,
    TextDelta,
    json_object,
)

CONNECT_TIMEOUT_S = 30.0
ERROR_BODY_CHARS = 2000


def chat_messages(history: Sequence[Message], prompt: str) -> list[dict[str, str]]:
    """The request's ``messages``: stored user/assistant turns, then the prompt.

    Tool and system messages (our own run notes) are not part of what the model said.
    """
    messages = [
        {"role": m.role.value, "content": m.content}
        for m in history
        if m.role in (Role.USER, Role.ASSISTANT)
    ]
    messages.append({"role": "user", "content": prompt})
    return messages


@dataclass
class ChatStreamParser:
    """Turns Chat Completions SSE lines into run events."""

    text: list[str] = field(default_factory=list)
    usage: Usage | None = None
    context_tokens: int | None = None
    error: str | None = None
    finished: bool = False  # saw ``[DONE]``
    skipped: int = 0

    def feed(self, line: str) -> list[RunEvent]:
        if not line.startswith("data:"):
            return []  # comments, ``event:`` and blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            self.finished = True
            return []
        chunk = json_object(data)
        if chunk is None:
            self.skipped += 1
            return []
        if isinstance(chunk.get("error"), dict):
            self.error = str(chunk["error"].get("message") or chunk["error"])
            return []
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt_tokens = int(usage.get("prompt_tokens") or 0)
            completion = int(usage.get("completion_tokens") or 0)
            self.usage = Usage(input_tokens=prompt_tokens, output_tokens=completion)
            self.context_tokens = prompt_tokens + completion
        events: list[RunEvent] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and content:
                self.text.append(content)
                events.append(TextDelta(content))
        return events

    def finish(self) -> list[RunEvent]:
        if self.error is not None:
            return [RunFailed(f"endpoint error: {self.error}")]
        reply = "".join(self.text)
        events: list[RunEvent] = [MessageOut(Role.ASSISTANT, reply)] if reply else []
        events.append(RunCompleted(self.usage or Usage(), context_tokens=self.context_tokens))
        return events


@dataclass(frozen=True, slots=True)
class OpenAICompatRunner:
    """Streams a Chat Completions reply; the history comes from our store."""

    agent_id: str
    base_url: str
    model: str
    api_key: str | None
    headers: Mapping[str, str] = field(default_factory=dict)
    owns_transcript: ClassVar[bool] = False  # our store is the transcript
    wants_history: ClassVar[bool] = True

    @classmethod
    def from_config(cls, agent_id: str, config: AgentConfig) -> OpenAICompatRunner:
        if not config.base_url:
            raise RunnerUnavailable(
                f"openai_compat needs an endpoint: set agents.{agent_id}.base_url in config.toml"
            )
        if not config.model:
            raise RunnerUnavailable(
                f"openai_compat needs a model: set agents.{agent_id}.model in config.toml"
            )
        api_key = None
        if config.api_key_env:
            env = {**os.environ, **config.env}
            api_key = env.get(config.api_key_env)
            if not api_key:
                raise RunnerUnavailable(
                    f"environment variable {config.api_key_env} is empty: set it, or change "
                    f"agents.{agent_id}.api_key_env in config.toml"
                )
        return cls(agent_id, config.base_url.rstrip("/"), config.model, api_key)

    def body(self, request: RunRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": chat_messages(request.history, request.prompt),
            "stream": True,
            "stream_options": {"include_usage": True},
        }

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        payload = json.dumps(self.body(request)).encode()
        parser = ChatStreamParser()
        try:
            async with _post(f"{self.base_url}/chat/completions", headers, payload) as response:
                status, lines = response
                if status != 200:
                    body = "\n".join([line async for line in lines])[:ERROR_BODY_CHARS]
                    yield RunFailed(f"endpoint answered HTTP {status}: {body}".strip())
                    return
                async for line in lines:
                    for event in parser.feed(line):
                        yield event
                    if parser.finished:
                        break
        except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError) as exc:
            yield RunFailed(f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}")
            return
        for event in parser.finish():
            yield event


@contextlib.asynccontextmanager
async def _post(
    url: str, headers: Mapping[str, str], body: bytes
) -> AsyncIterator[tuple[int, AsyncIterator[str]]]:
    """POST ``body`` over HTTP/1.1; yields the status and the response body's lines."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"unsupported URL {url!r}")
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(
            parts.hostname,
            port,
            ssl=ssl.create_default_context() if tls else None,
            limit=16 * 1024 * 1024,
        ),
        CONNECT_TIMEOUT_S,
    )
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
        head = [f"POST {target} HTTP/1.1", f"host: {host}", f"content-length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        head.append("connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        status_line = (await reader.readline()).decode("latin-1")
        fields = status_line.split(" ", 2)
        if len(fields) < 2 or not fields[1].isdigit():
            raise ValueError(f"not an HTTP response: {status_line.strip()!r}")
        response_headers: dict[str, str] = {}
        while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = raw.decode("latin-1").partition(":")
            response_headers[name.strip().lower()] = value.strip()
        chunked = "chunked" in response_headers.get("transfer-encoding", "").lower()
        yield int(fields[1]), _lines(_body(reader, chunked))
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _body(reader: asyncio.StreamReader, chunked: bool) -> AsyncIterator[bytes]:
    if not chunked:  # ``connection: close``: the body runs to EOF
        while data := await reader.read(65536):
            yield data
        return
    while True:
        size_line = await reader.readline()
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        yield await reader.readexactly(size)
        await reader.readexactly(2)  # the CRLF after each chunk


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace").rstrip("\r")
    if buffer:
        yield buffer.decode("utf-8", "replace").rstrip("\r")
