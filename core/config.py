"""Where delegate keeps its data, and the agents it knows.

The data folder's resolution is in ``core.data_folder`` (re-exported here).
"""

# Annotations are evaluated as the classes are made (no `from __future__ import
# annotations`): pydantic would otherwise evaluate each string itself, which costs
# about twice as much, and these classes are made before the panel's first frame.

import tomllib
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.atomic_files import disk_full_as_error

# Re-exported: most callers know the data folder as part of the settings.
from core.data_folder import CONFIG_FILENAME as CONFIG_FILENAME
from core.data_folder import DB_FILENAME as DB_FILENAME
from core.data_folder import resolve_data_dir as resolve_data_dir
from core.errors import InvalidConfig

DEFAULT_CONTEXT_LIMIT = 200_000


def ensure_data_dir(path: Path) -> Path:
    """Create the data folder private to the user (0700) on first use."""
    with disk_full_as_error(path.parent, "cannot create the data folder"):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


class AgentConfig(BaseModel):
    """One configured agent: which runner drives it and how big its context is."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    runner: Literal["scripted", "claude_code", "codex", "openai_compat"] = "scripted"
    description: str = ""
    context_limit: int = Field(default=DEFAULT_CONTEXT_LIMIT, gt=0)
    script: Path | None = Field(default=None, description="TOML/JSON reply script")
    delay: float = Field(default=0.0, ge=0, description="seconds between streamed chunks")
    persona: str = Field(default="", description="prefix of echo replies")
    # The real CLIs (claude_code, codex): see docs/runners.md.
    binary: str | None = Field(
        default=None, description="CLI to run: a path, or a name looked up on PATH"
    )
    args: list[str] = Field(default_factory=list, description="extra CLI arguments")
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment variables for the CLI / endpoint"
    )
    # openai_compat: any Chat Completions endpoint.
    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(default=None, description="model name sent to the endpoint")
    api_key_env: str | None = Field(
        default=None, description="environment variable holding the API key"
    )
    idle_timeout: float = Field(
        default=300.0,
        gt=0,
        description="seconds the endpoint may send nothing (before and during its reply)",
    )


class ContextSettings(BaseModel):
    """``[context]``: thresholds (per cent of a session's window) and hand-off behaviour.

    Overridable per project in ``<repo>/.delegate/config.toml`` (its ``[context]``
    table). Levels must rise: notify < reminder < handoff < force.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    enabled: bool = True
    notify_user_at: int = Field(default=50, ge=1, le=100, description="% that warns")
    reminder: int = Field(default=60, ge=1, le=100, description="% that reminds")
    handoff: int = Field(default=70, ge=1, le=100, description="% that writes a hand-off")
    force: int = Field(default=90, ge=1, le=100, description="% past which no prompt is sent")
    retention_days: int = Field(default=90, ge=1, description="archived hand-offs kept this long")
    auto_continue: bool = Field(
        default=True, description="continue a session delegate drives in a new one, primed"
    )
    windows: dict[str, int] = Field(
        default_factory=dict,
        description="model name prefix -> context window in tokens (extends the built-in table)",
    )

    @model_validator(mode="after")
    def _levels_rise(self) -> Self:
        levels = [self.notify_user_at, self.reminder, self.handoff, self.force]
        if levels != sorted(set(levels)):
            raise ValueError(
                "thresholds must rise: notify_user_at < reminder < handoff < force"
                f" (got {', '.join(map(str, levels))})"
            )
        for prefix, limit in self.windows.items():
            if not prefix or limit <= 0:
                raise ValueError(f"windows: {prefix!r} needs a positive token count")
        return self


def default_routes() -> dict[str, str]:
    """Seed 002's routing: a returned status -> the next role ("end" stops the chain)."""
    return {
        "READY_FOR_QA": "qa_expert",
        "READY_FOR_REVIEW": "tech_lead",
        "PASS": "tech_lead",
        "APPROVED": "project_manager",
        "FAIL": "developer",
        "FLAKY": "developer",
        "CHANGES_REQUESTED": "developer",
        "BLOCKED": "investigator",
        "SPAWN_INVESTIGATOR": "investigator",
        "ESCALATE_SENIOR": "senior_software_engineer",
        "ESCALATE_TO_OPUS": "senior_software_engineer",
        "ROOT_CAUSE_FOUND": "developer",
        "NEED_MORE_INFO": "end",
        "REQUIREMENTS_READY": "developer",
        "NEEDS_CLARIFICATION": "end",
        "CONTINUE": "developer",
        "BAZINGA": "end",
    }


class ReturnsSettings(BaseModel):
    """``[returns]``: compact returns between role agents (seed 002)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    routes: dict[str, str] = Field(
        default_factory=default_routes,
        description=(
            "status -> next role or 'end'; a key 'role:STATUS' overrides it for one role"
            " (merged over the built-in table)"
        ),
    )
    max_return_tokens: int = Field(
        default=400, gt=0, description="a final message longer than this is not passed on"
    )
    max_chain_steps: int = Field(
        default=12, ge=1, description="a chain run by delegate stops after this many steps"
    )
    agents: dict[str, str] = Field(
        default_factory=dict,
        description="role -> agent id a chain launches for it (default: the first step's agent)",
    )
    keep_days: int = Field(
        default=14, ge=0, description="an ended chain's artifacts are cleaned after this many days"
    )

    @field_validator("routes", mode="after")
    @classmethod
    def _over_builtin(cls, routes: dict[str, str]) -> dict[str, str]:
        # A file naming one route changes that route only; core.returns.routing
        # checks each target is a role or "end" when it reads the table.
        return {**default_routes(), **routes}


def builtin_agents() -> dict[str, AgentConfig]:
    """Agents that exist without any configuration: deterministic scripted delegates."""
    return {
        "echo": AgentConfig(description="echoes the prompt back", persona="echo"),
        "reviewer": AgentConfig(description="reviews changes", persona="review"),
        "tester": AgentConfig(description="writes and runs tests", persona="tests"),
        "planner": AgentConfig(
            description="breaks work into steps", persona="plan", context_limit=128_000
        ),
        "scribe": AgentConfig(description="writes docs", persona="docs", context_limit=32_000),
        "claude-code": AgentConfig(
            runner="claude_code", description="Claude Code CLI (claude -p)", context_limit=200_000
        ),
        "codex": AgentConfig(
            runner="codex",
            description="OpenAI Codex CLI (codex exec)",
            context_limit=272_000,
            # delegate already chose the working directory; Codex would refuse one
            # that is not a git checkout without this.
            args=["--skip-git-repo-check"],
        ),
    }


class Settings(BaseModel):
    """The settings file (``config.toml`` in the data folder), merged over built-ins."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    default_agent: str | None = Field(
        default=None,
        description=(
            "the agent a launch without --agent uses; unset: $DELEGATE_AGENT, else the first"
            " of claude-code and codex installed here"
        ),
    )
    agents: dict[str, AgentConfig] = Field(default_factory=builtin_agents)
    keymap: dict[str, str] = Field(
        default_factory=dict, description="binding id -> keys, e.g. picker.archive = 'alt+a'"
    )
    preview_messages: int = Field(default=6, ge=1, le=100, description="messages per preview page")
    run_grace_seconds: float = Field(
        default=30.0,
        gt=0,
        description="a run whose owner has not beaten for this long is marked interrupted",
    )
    scope: Literal["project", "all"] = Field(
        default="project",
        description=(
            "what the panel lists at start: 'project' (started inside a git repository,"
            " that project's sessions, its worktrees included) or 'all' projects"
        ),
    )
    subagents: bool = Field(
        default=True,
        description="show sub-agent sessions under their parents (false hides them entirely)",
    )
    warmup_subagents: bool = Field(
        default=False,
        description="show Claude Code's warm-up sub-agents (a lone 'Warmup' prompt) too",
    )
    context: ContextSettings = Field(default_factory=ContextSettings)
    trusted_folders: list[str] = Field(
        default_factory=list,
        description=(
            "folders whose sessions' hand-offs are written in their own repository without"
            " checking it (other imported sessions: only in a git work tree you own)"
        ),
    )
    returns: ReturnsSettings = Field(default_factory=ReturnsSettings)
    capsule_max_tokens: int = Field(
        default=5_000,
        gt=0,
        description=(
            "a sub-agent's prompt ceiling in tokens: a capsule body over 80% of it is refused"
        ),
    )


def load_settings(data_dir: Path) -> Settings:
    """Read ``config.toml`` if present; a broken file is one line naming the file and field.

    Unknown keys are errors (``extra="forbid"``), not ignored: a typo in a setting
    would otherwise silently leave the default in place.
    """
    path = data_dir / CONFIG_FILENAME
    if not path.exists() and not path.is_symlink():
        return Settings()
    if not path.is_file():  # a FIFO or a device would block or never end
        raise InvalidConfig(f"settings file {path} is not a regular file")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        tables = raw.pop("agents", {})
        if not isinstance(tables, dict):
            raise InvalidConfig(f"settings file {path} is invalid: agents: must be a table")
        agents = builtin_agents()
        for name, table in tables.items():
            if not isinstance(table, dict):
                raise InvalidConfig(
                    f"settings file {path} is invalid: agents.{name}: must be a table"
                )
            # A table naming a built-in agent adjusts it (``[agents.claude-code]
            # binary = ...``) rather than replacing it with a scripted default.
            base = agents[name].model_dump(exclude_defaults=True) if name in agents else {}
            try:
                agents[name] = AgentConfig.model_validate({**base, **table})
            except ValidationError as exc:
                raise InvalidConfig(
                    f"settings file {path} is invalid: {_problems(exc, f'agents.{name}.')}"
                ) from None
        return Settings(agents=agents, **raw)
    except ValidationError as exc:
        raise InvalidConfig(f"settings file {path} is invalid: {_problems(exc)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidConfig(f"settings file {path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InvalidConfig(f"settings file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidConfig(f"settings file {path} cannot be read: {exc.strerror}") from None


def _problems(exc: ValidationError, prefix: str = "") -> str:
    """``field: what is wrong`` for each error, on one line; never the values (secrets)."""
    problems = []
    for err in exc.errors():
        where = prefix + ".".join(str(p) for p in err["loc"])
        what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{where}: {what}")
    return "; ".join(problems)
