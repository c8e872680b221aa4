"""Claude Code transcripts: ``~/.claude/projects/<munged-cwd>/<sessionId>.jsonl``.

Stdlib only (worker processes import it). :class:`ClaudeState` is the running
parse state of one file; it round-trips through JSON so an appended file is
read from its last offset without re-reading the start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from core.one_line import first_line_clipped
from core.sources.common import (
    TITLE_CHARS,
    RunningTotals,
    SessionFacts,
    as_int,
    clamp_int,
    estimate_tokens,
    iso_to_us,
    keep_sample,
    kept_prompt,
)

SOURCE = "claude-code"
AGENT_ID = "claude-code"
CONTEXT_LIMIT = 200_000
"""A Claude model's window; a session that held more runs the 1M-context variant."""
LONG_CONTEXT_SUFFIX = "[1m]"  # how Claude Code names that variant (``sonnet[1m]``)

KNOWN_TYPES_VERSION = "2.1.328"
"""The Claude Code release :data:`KNOWN_TYPES` was taken from: its transcript writer's
table of entry types. ``tests/e2e/test_record_types_real.py`` runs that release and
fails when it writes a type not listed here."""

KNOWN_TYPES = frozenset(
    {
        # What the facts read: the conversation, titles, compaction boundaries.
        "user",
        "assistant",
        "system",
        "summary",
        "custom-title",
        "ai-title",
        # Lines that carry nothing shown or counted: known, so never reported.
        "agent-color",
        "agent-name",
        "agent-setting",
        "api-request",
        "api-request-blob",
        "api-request-resumed",
        "api-request-shape",
        "artifact-autoreact-ledger",
        "artifact-comment-monitor",
        "atis-latch",
        "attachment",
        "attribution-snapshot",
        "bridge-session",
        "content-replacement",
        "continued-in",
        "cost-state",
        "data-flow-incomplete",
        "data-flow-records",
        "derived-from",
        "dev-mods",
        "ended-by-model",
        "file-history-delta",
        "file-history-snapshot",
        "fork-context-ref",
        "frame-link",
        "history-suppression",
        "isolation-latch",
        "last-prompt",
        "memory-mode",
        "mode",
        "observer-ref",
        "permission-mode",
        "pr-link",
        "progress",
        "queue-operation",
        "relocated",
        "repl-mode",
        "resume-head-vouch",
        "session-owner",
        "tag",
        "tools-used",
        "worktree-state",
    }
)
"""Every line type Claude Code writes (as of :data:`KNOWN_TYPES_VERSION`); any other is
counted as unknown, by name and version, never as damage."""

# Message roles, as plain strings so this module stays free of pydantic.
USER, ASSISTANT, TOOL, SYSTEM = "user", "assistant", "tool", "system"

# What a user line carries that is not a prompt a person typed.
_NOISE_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below",
    "[Request interrupted",
)
_NOISE_WORDS = frozenset({"warmup"})
_CONTEXT_BLOCKS = re.compile(
    r"<(ide_selection|ide_opened_file|ide_diagnostics|system-reminder)>.*?</\1>", re.S
)
_RECENT_IDS = 64  # de-duplication window of message ids (one response spans a few lines)


def user_role(line: dict[str, Any]) -> str | None:
    """The role a ``user`` line plays: a prompt, tool results, a compact summary, or noise."""
    if line.get("isMeta"):
        return None
    if line.get("isCompactSummary"):
        return SYSTEM
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return USER
    if isinstance(content, list) and content:
        if all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return TOOL
        return USER
    return None


def role_of(line: dict[str, Any]) -> str | None:
    """The message role a line becomes in a preview, or None when it is not a message."""
    kind = line.get("type")
    if kind == "user":
        return user_role(line)
    if kind == "assistant":
        message = line.get("message")
        return ASSISTANT if isinstance(message, dict) and _visible(message.get("content")) else None
    if kind == "system" and line.get("subtype") == "compact_boundary":
        return SYSTEM
    return None


def _visible(content: Any) -> bool:
    """Whether an assistant line shows anything: text or a tool call (not thinking alone)."""
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, list):
        return any(isinstance(b, dict) and b.get("type") in ("text", "tool_use") for b in content)
    return False


def user_text(line: dict[str, Any]) -> str:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


_COMMAND_TAGS = re.compile(r"<(command-name|command-args|bash-input)>(.*?)</\1>", re.S)
_OUTPUT_TAGS = re.compile(
    r"<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>(.*?)</\1>", re.S
)


def shown_user_text(text: str) -> str:
    """A user line as a person would recognise it: a slash command as typed
    (``/model sonnet``), a ``!`` shell command as ``! ls``, command output bare.

    Claude Code wraps these in tags (``<command-name>``, ``<command-args>``,
    ``<local-command-stdout>``, ...); anything else is returned unchanged.
    """
    head = text.lstrip()
    if not head.startswith("<"):
        return text
    tags = {name: value.strip() for name, value in _COMMAND_TAGS.findall(text)}
    if "command-name" in tags:
        return " ".join(part for part in (tags["command-name"], tags.get("command-args")) if part)
    if "bash-input" in tags:
        return f"! {tags['bash-input']}"
    outputs = [value.strip() for _name, value in _OUTPUT_TAGS.findall(text)]
    if outputs:
        return "\n".join(o for o in outputs if o)
    return text


def real_prompt(text: str) -> str | None:
    """The text of a prompt a person typed, or None for commands, caveats and warmups."""
    cleaned = _CONTEXT_BLOCKS.sub("", text).strip()
    if not cleaned or cleaned.startswith(_NOISE_PREFIXES):
        return None
    if cleaned.lower() in _NOISE_WORDS:
        return None
    return cleaned


def usage_context(usage: dict[str, Any]) -> int:
    """What a model call read: the context in use (input, cache creation, cache read)."""
    return clamp_int(
        as_int(usage.get("input_tokens"))
        + as_int(usage.get("cache_creation_input_tokens"))
        + as_int(usage.get("cache_read_input_tokens"))
    )


def usage_total(usage: dict[str, Any]) -> int:
    """Every token a model call used: what it read and what it wrote."""
    return clamp_int(usage_context(usage) + as_int(usage.get("output_tokens")))


@dataclass
class ClaudeState(RunningTotals):
    """Running facts of one Claude Code transcript (JSON-serialisable)."""

    sidechain_file: bool = False
    session_id: str | None = None
    agent_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    version: str | None = None  # of Claude Code, from the last line that said
    model: str | None = None  # the last model an API response named
    custom_title: str | None = None
    ai_title: str | None = None
    summary: str | None = None
    prompt_title: str | None = None
    noise_title: str | None = None
    assistant_title: str | None = None
    turns: int = 0
    messages: int = 0
    tokens: int = 0
    context_tokens: int = 0
    compactions: int = 0
    usage_seen: bool = False  # an assistant line recorded usage: the meter is known
    context_estimated: bool = False  # compacted, no usage recorded since
    recent: list[list[Any]] = field(default_factory=list)  # [[message.id, usage total], ...]
    long_context: bool = False  # held more than CONTEXT_LIMIT: the 1M-context variant
    first_prompt_chars: int = 0
    # The system prompt (and tools) every call carries: the first call's context
    # less the first prompt. A compaction keeps it: the estimate after one starts here.
    system_tokens: int = 0
    samples: list[list[int]] = field(default_factory=list)  # [[turn, context], ...]

    def feed(self, line: dict[str, Any]) -> bool:
        """Take one decoded line into account; False for a line type we do not know."""
        kind = line.get("type")
        if kind not in KNOWN_TYPES:
            return False
        self.saw_timestamp(line.get("timestamp"))
        if kind == "summary":
            if isinstance(line.get("summary"), str) and line["summary"].strip():
                self.summary = line["summary"]
            return True
        if kind == "custom-title":
            title = line.get("customTitle", line.get("title"))
            if isinstance(title, str) and title.strip():
                self.custom_title = title
            return True
        if kind == "ai-title":
            title = line.get("aiTitle")
            if isinstance(title, str) and title.strip():
                self.ai_title = title
            return True
        if kind not in ("user", "assistant", "system"):
            return True
        self._envelope(line)
        if kind == "assistant" and isinstance(line.get("message"), dict):
            self._assistant(line)  # usage counts even for a line with thinking only
        role = role_of(line)
        if role is None:
            return True
        self.messages += 1
        if role == USER:
            self.turns += 1
            if self.turns == 1:
                self.first_prompt_chars = len(user_text(line))
            if self.prompt_title is None:
                text = user_text(line)
                prompt = real_prompt(text)
                if prompt is not None:
                    self.prompt_title = first_line_clipped(prompt, TITLE_CHARS)
                elif self.noise_title is None and text.strip():
                    # A command as typed (``/clear``), never Claude Code's tags.
                    self.noise_title = first_line_clipped(shown_user_text(text), TITLE_CHARS)
        elif kind == "system":
            self.compactions += 1
            if not (line.get("isSidechain") and not self.sidechain_file):
                # Until the agent records usage again, the context holds about the
                # system prompt and the summary that follows.
                self.context_estimated = True
                self.context_tokens = kept_prompt(self.system_tokens, self.context_tokens)
        elif line.get("isCompactSummary") and self.context_estimated:
            self.context_tokens += estimate_tokens(len(user_text(line)))
            keep_sample(self.samples, self.turns, self.context_tokens)
        return True

    def _envelope(self, line: dict[str, Any]) -> None:
        if isinstance(line.get("version"), str):
            self.version = line["version"]
        if self.session_id is None and isinstance(line.get("sessionId"), str):
            self.session_id = line["sessionId"]
        if self.agent_id is None and isinstance(line.get("agentId"), str):
            self.agent_id = line["agentId"]
        if self.cwd is None and isinstance(line.get("cwd"), str) and line["cwd"]:
            self.cwd = line["cwd"]
        branch = line.get("gitBranch")
        if isinstance(branch, str) and branch:
            self.branch = branch

    def _assistant(self, line: dict[str, Any]) -> None:
        message = line["message"]
        if self.assistant_title is None:
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                    self.assistant_title = first_line_clipped(str(block["text"]), TITLE_CHARS)
                    break
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>":
            self.model = model[:200]
        usage = message.get("usage")
        if not isinstance(usage, dict) or model == "<synthetic>":
            return
        total = usage_total(usage)
        msg_id = message.get("id")
        if isinstance(msg_id, str):
            # One API response is written as one line per content block, each
            # repeating the usage: count each message.id once (its latest line).
            # Newest first: the lines of one response follow each other.
            for entry in reversed(self.recent):
                if entry[0] == msg_id:
                    self.tokens += total - int(entry[1])
                    entry[1] = total
                    break
            else:
                self.tokens += total
                self.recent.append([msg_id, total])
                if len(self.recent) > _RECENT_IDS:
                    del self.recent[0]
        else:
            self.tokens += total
        if line.get("isSidechain") and not self.sidechain_file:
            return  # a sidechain inside a main transcript does not fill the main context
        context = usage_context(usage)
        if context:
            if not self.usage_seen and self.turns <= 1:
                self.system_tokens = max(0, context - estimate_tokens(self.first_prompt_chars))
            self.context_tokens = context
            self.usage_seen = True
            self.context_estimated = False
            self.long_context = self.long_context or context > CONTEXT_LIMIT
            keep_sample(self.samples, self.turns, context)

    def facts(
        self, conversation_id: str, parent_id: str | None, description: str | None
    ) -> SessionFacts | None:
        """The session this file describes, or None when it holds no conversation."""
        if self.messages == 0:
            return None
        strong = self.custom_title or self.summary or self.ai_title or description
        title = strong or self.prompt_title or self.noise_title or self.assistant_title or ""
        created = iso_to_us(self.first_ts) or 0
        last = iso_to_us(self.last_ts) or created
        model = self.model
        if model and self.long_context and not model.endswith(LONG_CONTEXT_SUFFIX):
            model += LONG_CONTEXT_SUFFIX
        return SessionFacts(
            conversation_id=conversation_id,
            source=SOURCE,
            agent_id=AGENT_ID,
            cwd=self.cwd or "",
            git_branch=self.branch,
            title=first_line_clipped(title, TITLE_CHARS),
            strong_title=bool(strong),
            parent_id=parent_id,
            created_us=created,
            last_us=last,
            turns=self.turns,
            messages=self.messages,
            tokens=clamp_int(self.tokens),
            context_tokens=clamp_int(self.context_tokens),
            context_limit=0,  # Claude Code records no window: the model's family says
            compactions=self.compactions,
            context_known=self.usage_seen or self.context_estimated,
            context_estimated=self.context_estimated,
            warmup=self._is_warmup(parent_id),
            model=model,
            samples=tuple((int(t), int(n)) for t, n in self.samples),
        )

    def _is_warmup(self, parent_id: str | None) -> bool:
        """A sub-agent Claude Code started only to warm its cache: one "Warmup" prompt."""
        return (
            parent_id is not None
            and self.prompt_title is None
            and self.turns == 1
            and (self.noise_title or "").strip().casefold() in _NOISE_WORDS
        )
