"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``.

Stdlib only (worker processes import it). Every line is ``{timestamp, type,
payload}``. The context meter is the latest ``last_token_usage.input_tokens``
against ``model_context_window``; ``total_token_usage`` is cumulative over all
requests and only feeds the session's token total.
"""

from __future__ import annotations

import contextlib
import json
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

SOURCE = "codex"
AGENT_ID = "codex"

KNOWN_TYPES_VERSION = "0.169.0"
"""The Codex release the known types below were taken from (its rollout item, response
item and event enums). ``tests/e2e/test_record_types_real.py`` runs that release and
fails when it writes a type not listed here."""

KNOWN_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "turn_context",
        "compacted",
        "event_msg",
        # Nothing we show or count (token counts come from ``event_msg/token_count``).
        "dynamic_tools_updated",
        "inter_agent_communication",
        "realtime_item",
        "token_usage_record",
        "world_state",
    }
)
"""A rollout line's ``type``; any other is counted as unknown, by name and version."""

KNOWN_ITEM_TYPES = frozenset(
    {
        "additional_tools",
        "agent_message",
        "compaction",
        "compaction_trigger",
        "configuration_update",
        "context_compaction",
        "custom_tool_call",
        "custom_tool_call_output",
        "function_call",
        "function_call_output",
        "image_generation_call",
        "local_shell_call",
        "message",
        "other",
        "reasoning",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "ghost_snapshot",  # earlier releases
    }
)
"""``payload.type`` of a ``response_item`` line."""

KNOWN_EVENT_TYPES = frozenset(
    {
        "agent_message",
        "agent_message_content_delta",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "apply_patch_approval_request",
        "auth_recovery_completed",
        "auth_recovery_started",
        "collab_agent_interaction_begin",
        "collab_agent_interaction_end",
        "collab_agent_spawn_begin",
        "collab_agent_spawn_end",
        "collab_close_begin",
        "collab_close_end",
        "collab_resume_begin",
        "collab_resume_end",
        "collab_waiting_begin",
        "collab_waiting_end",
        "context_compacted",
        "deprecation_notice",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "elicitation_abandoned",
        "elicitation_request",
        "entered_review_mode",
        "environment_connected",
        "environment_disconnected",
        "error",
        "exec_approval_request",
        "exec_command_begin",
        "exec_command_end",
        "exec_command_output_delta",
        "exited_review_mode",
        "guardian_assessment",
        "guardian_warning",
        "hook_completed",
        "hook_started",
        "image_generation_begin",
        "image_generation_end",
        "item_completed",
        "item_started",
        "mcp_startup_complete",
        "mcp_startup_update",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "model_reroute",
        "model_verification",
        "patch_apply_begin",
        "patch_apply_end",
        "patch_apply_updated",
        "plan_delta",
        "plan_update",
        "raw_response_completed",
        "raw_response_item",
        "realtime_conversation_closed",
        "realtime_conversation_list_voices_response",
        "realtime_conversation_realtime",
        "realtime_conversation_sdp",
        "realtime_conversation_started",
        "reasoning_content_delta",
        "reasoning_raw_content_delta",
        "request_permissions",
        "request_user_input",
        "safety_buffering",
        "session_configured",
        "shutdown_complete",
        "stream_error",
        "sub_agent_activity",
        "task_complete",
        "task_started",
        "terminal_interaction",
        "thread_goal_updated",
        "thread_queue_changed",
        "thread_rolled_back",
        "thread_settings_applied",
        "token_count",
        "turn_aborted",
        "turn_diff",
        "turn_moderation_metadata",
        "user_message",
        "view_image_tool_call",
        "warning",
        "web_search_begin",
        "web_search_end",
        # earlier releases
        "agent_message_delta",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content_delta",
        "background_event",
        "undo_completed",
        "undo_started",
    }
)
"""``payload.type`` of an ``event_msg`` line."""

USER, ASSISTANT, TOOL, SYSTEM = "user", "assistant", "tool", "system"

_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_REQUEST_MARK = "## My request for Codex:"


def is_injected(text: str) -> bool:
    """Context Codex adds as ``user`` items (instructions, environment, AGENTS.md)."""
    head = text.lstrip()
    return head.startswith(("<", "# AGENTS.md")) or not head


def user_item_text(payload: dict[str, Any]) -> str | None:
    """A person's prompt carried by a ``user`` response item, else None.

    Interactive rollouts repeat each prompt as ``event_msg/user_message``;
    ``codex exec`` rollouts carry it only as this item.
    """
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    content = payload.get("content")
    parts = content if isinstance(content, list) else []
    text = "".join(str(b.get("text", "")) for b in parts if isinstance(b, dict) and "text" in b)
    return None if is_injected(text) else text


def role_of(line: dict[str, Any]) -> str | None:
    """The message role a line becomes in a preview, or None when it is not a message.

    A person's prompts come from ``event_msg/user_message`` or from ``user``
    response items that are not injected context (the preview drops the echo
    when both carry the same prompt).
    """
    kind = line.get("type")
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return SYSTEM if kind == "compacted" else None
    sub = payload.get("type")
    if kind == "response_item":
        if sub == "message":
            if payload.get("role") == "assistant":
                return ASSISTANT
            return USER if user_item_text(payload) is not None else None
        if sub in _CALLS:
            return ASSISTANT
        if sub in _OUTPUTS:
            return TOOL
        return None
    if kind == "event_msg":
        return USER if sub == "user_message" else None
    if kind == "compacted":
        return SYSTEM
    return None


def prompt_title(message: str) -> str:
    """Codex wraps mentioned files around the request; the title is the request."""
    if _REQUEST_MARK in message:
        message = message.split(_REQUEST_MARK, 1)[1]
    return first_line_clipped(message, TITLE_CHARS)


@dataclass
class CodexState(RunningTotals):
    """Running facts of one rollout (JSON-serialisable)."""

    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    cli_version: str | None = None
    model: str | None = None
    title: str | None = None
    created_ts: str | None = None
    turns: int = 0
    item_turns: int = 0  # prompts seen only as user response items (codex exec)
    item_title: str | None = None
    messages: int = 0
    tokens: int = 0
    context_tokens: int = 0
    context_limit: int = 0
    compactions: int = 0
    usage_seen: bool = False  # a token count measured the context: the meter is known
    context_estimated: bool = False  # compacted, not measured since
    # What every request carries and a compaction keeps: the first request's measured
    # context (instructions, environment), else the rollout's ``base_instructions``.
    system_tokens: int = 0
    samples: list[list[int]] = field(default_factory=list)  # [[turn, context], ...]

    def feed(self, line: dict[str, Any]) -> bool:
        """Take one decoded line into account; False for a line type we do not know.

        Counts as :func:`role_of` assigns roles, one branch per line type (a
        rollout has about a million lines in a big history: this is the hot path).
        """
        kind = line.get("type")
        if kind not in KNOWN_TYPES:
            return False
        self.saw_timestamp(line.get("timestamp"))
        payload = line.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        if kind == "response_item":
            sub = payload.get("type")
            if sub == "message":
                if payload.get("role") == "assistant":
                    self.messages += 1
                elif (text := user_item_text(payload)) is not None:
                    # Counted apart: interactive rollouts also log it as user_message.
                    self.item_turns += 1
                    if self.item_title is None:
                        self.item_title = prompt_title(text)
            elif sub in _CALLS or sub in _OUTPUTS:
                self.messages += 1
            elif sub not in KNOWN_ITEM_TYPES:
                return False
        elif kind == "event_msg":
            sub = payload.get("type")
            if sub == "token_count":
                self._tokens(payload.get("info"))
            elif sub == "user_message":
                self._prompt(payload.get("message"))
            elif sub not in KNOWN_EVENT_TYPES:
                return False
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str) and payload["model"]:
                self.model = payload["model"][:200]
            if self.cwd is None and isinstance(payload.get("cwd"), str):
                self.cwd = payload["cwd"]
        elif kind == "session_meta":
            self._meta(payload)
        elif kind == "compacted":
            self.compactions += 1
            self._compacted(payload)
            self.messages += 1
        return True

    def _prompt(self, message: Any) -> None:
        self.messages += 1
        self.turns += 1
        if self.title is None and isinstance(message, str) and message.strip():
            self.title = prompt_title(message)

    def _meta(self, payload: dict[str, Any]) -> None:
        if self.session_id is not None:
            return  # a forked rollout repeats its parent's meta after its own
        if isinstance(payload.get("id"), str):
            self.session_id = payload["id"]
        if isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        if isinstance(payload.get("cli_version"), str):
            self.cli_version = payload["cli_version"]
        if isinstance(payload.get("timestamp"), str):
            self.created_ts = payload["timestamp"]
        instructions = payload.get("base_instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions:
            self.system_tokens = estimate_tokens(len(instructions))
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
            self.branch = git["branch"]

    def _tokens(self, info: Any) -> None:
        if not isinstance(info, dict):
            return  # ``info`` is null before the first response
        total = info.get("total_token_usage")
        if isinstance(total, dict):
            self.tokens = as_int(total.get("total_tokens"))
        last = info.get("last_token_usage")
        used = as_int(last.get("input_tokens")) if isinstance(last, dict) else 0
        if used:  # Codex logs a zero around a compaction: no measurement
            if not self.usage_seen and (self.turns or self.item_turns) <= 1:
                # The first request: instructions, environment context, first prompt.
                self.system_tokens = max(self.system_tokens, used)
            self.context_tokens = used
            self.usage_seen = True
            self.context_estimated = False
            keep_sample(self.samples, self.turns or self.item_turns, used)
        window = as_int(info.get("model_context_window"))
        if window:
            self.context_limit = window

    def _compacted(self, payload: dict[str, Any]) -> None:
        """The context now holds the summary and the kept history: about their size."""
        message = payload.get("message")
        chars = len(message) if isinstance(message, str) else 0
        history = payload.get("replacement_history")
        if isinstance(history, list):
            # Too deep to measure (orjson allows 1,024 levels): the summary alone.
            with contextlib.suppress(ValueError, TypeError, RecursionError):
                chars += len(json.dumps(history, ensure_ascii=False))
        kept = kept_prompt(self.system_tokens, self.context_tokens)
        self.context_tokens = kept + estimate_tokens(chars)
        self.context_estimated = True
        keep_sample(self.samples, self.turns or self.item_turns, self.context_tokens)

    def facts(self, fallback_id: str) -> SessionFacts | None:
        """The session this rollout describes, or None when it holds nothing yet."""
        if self.session_id is None and self.messages + self.item_turns == 0:
            return None
        created = iso_to_us(self.created_ts) or iso_to_us(self.first_ts) or 0
        last = iso_to_us(self.last_ts) or created
        return SessionFacts(
            conversation_id=self.session_id or fallback_id,
            source=SOURCE,
            agent_id=AGENT_ID,
            cwd=self.cwd or "",
            git_branch=self.branch,
            title=self.title or self.item_title or "",
            strong_title=False,
            parent_id=None,
            created_us=min(created, last),
            last_us=max(created, last),
            # Prompts come from user_message events when the rollout has them.
            turns=self.turns or self.item_turns,
            messages=self.messages + (0 if self.turns else self.item_turns),
            tokens=clamp_int(self.tokens),
            context_tokens=clamp_int(self.context_tokens),
            context_limit=clamp_int(self.context_limit),
            compactions=self.compactions,
            context_known=self.usage_seen or self.context_estimated,
            context_estimated=self.context_estimated,
            model=self.model,
            samples=tuple((int(t), int(n)) for t, n in self.samples),
        )
