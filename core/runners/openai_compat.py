"""The ``openai_compat`` runner: any OpenAI-compatible Chat Completions endpoint.

``POST {base_url}/chat/completions`` with ``stream: true`` and
``stream_options: {include_usage: true}``; the reply arrives as server-sent
events (``data: {chunk}`` lines, ending with ``data: [DONE]``) and the usage in
the last chunk. The endpoint keeps no state: the conversation lives in our
store and is sent again on every run (:attr:`RunRequest.history`).

HTTP is ``httpx2`` (the maintained successor of ``httpx``): proxies from the
environment, TLS with the system's trust store, redirects and compressed
bodies. A stream is complete only with its ``[DONE]``: one the server cuts
short fails the run, and one that goes quiet for longer than the agent's
``idle_timeout`` fails it too. Cancelling a run closes the connection at once.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import httpx2

from core.config import AgentConfig
from core.errors import RunnerUnavailable
from core.models import Message, Role, Usage
from core.redact import redact
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
MAX_LINE_BYTES = 16 * 1024 * 1024  # one SSE line; a longer one fails the run


class StreamBroken(Exception):
    """The endpoint's reply cannot be read to its end (cut, stalled, absurd)."""


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
    idle_timeout: float = 300.0
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
        return cls(
            agent_id,
            config.base_url.rstrip("/"),
            config.model,
            api_key,
            idle_timeout=config.idle_timeout,
        )

    @property
    def endpoint(self) -> str:
        """The base URL as shown in errors: without any user name or password."""
        return without_userinfo(self.base_url)

    def body(self, request: RunRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": chat_messages(request.history, request.prompt),
            "stream": True,
            "stream_options": {"include_usage": True},
        }

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        parser = ChatStreamParser()
        answered = False  # the response started: a later error broke it off
        # ``read`` bounds every wait for bytes (headers, then each chunk): the idle timeout.
        timeout = httpx2.Timeout(
            CONNECT_TIMEOUT_S, connect=CONNECT_TIMEOUT_S, read=self.idle_timeout
        )
        try:
            async with (
                httpx2.AsyncClient(timeout=timeout, follow_redirects=True) as client,
                client.stream(
                    "POST",
                    f"{self.base_url}/chat/completions",
                    json=self.body(request),
                    headers=headers,
                ) as response,
            ):
                answered = True
                if response.status_code != 200:
                    body = await _error_body(response)
                    yield RunFailed(
                        redact(f"endpoint answered HTTP {response.status_code}: {body}".strip())
                    )
                    return
                async for line in _lines(response.aiter_bytes()):
                    for event in parser.feed(line):
                        yield event
                    if parser.finished:
                        break
        except httpx2.ReadTimeout:
            yield RunFailed(
                f"{self.endpoint} sent nothing for {self.idle_timeout:g} s: set "
                f"agents.{self.agent_id}.idle_timeout in config.toml to wait longer"
            )
            return
        except (httpx2.HTTPError, httpx2.InvalidURL, StreamBroken) as exc:
            yield RunFailed(self._failure(exc, answered))
            return
        if not parser.finished and parser.error is None:
            got = sum(map(len, parser.text))
            yield RunFailed(
                f"{self.endpoint} ended the stream before [DONE] "
                f"({got} characters of reply received): the reply is incomplete"
            )
            return
        for event in parser.finish():
            yield event

    def _failure(self, exc: Exception, answered: bool) -> str:
        """A transport error, naming the endpoint without its credentials."""
        detail = str(exc).replace(self.base_url, self.endpoint) or "no detail"
        what = (
            f"{self.endpoint} broke off its reply" if answered else f"cannot reach {self.endpoint}"
        )
        return redact(f"{what}: {type(exc).__name__}: {detail}")


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (kept whole when it cannot be parsed)."""
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=host))
    except ValueError:
        return redact(url)


async def _error_body(response: httpx2.Response) -> str:
    """The start of an error response's body, read no further than needed."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= ERROR_BODY_CHARS:
            break
    return data[:ERROR_BODY_CHARS].decode("utf-8", "replace")


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The body's lines (``\n`` or ``\r\n``), each at most :data:`MAX_LINE_BYTES`."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace").rstrip("\r")
        if len(buffer) > MAX_LINE_BYTES:
            raise StreamBroken(f"a line of the stream is longer than {MAX_LINE_BYTES} bytes")
    if buffer:
        yield buffer.decode("utf-8", "replace").rstrip("\r")
