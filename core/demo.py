"""Deterministic demo sessions, so a newcomer (and a benchmark) has data to look at.

The same ``n`` always yields the same sessions, ids and contents; timestamps are
anchored at the moment the demo runs so "3m ago" reads naturally. Replies come
from the scripted runner's echo rule, as a real scripted run would write them.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from core.config import builtin_agents
from core.demo_ids import DEMO_NAMESPACE, demo_id
from core.models import Role, RunStatus, SessionMode
from core.store import FinishedSession, NewMessage, NewSession, Store, ready_state

_NAMESPACE = DEMO_NAMESPACE
_PROJECTS = [
    ("/home/dev/src/payments-api", "main"),
    ("/home/dev/src/payments-api", "fix/idempotency-keys"),
    ("/home/dev/src/web-console", "feature/session-picker"),
    ("/home/dev/src/web-console", "main"),
    ("/home/dev/src/infra", "chore/bump-terraform"),
    ("/home/dev/src/mobile-app", "release/4.2"),
    ("/home/dev/notes", None),
]
_PROMPTS = [
    "Review the retry logic in the payment client and list risky paths",
    "Write property tests for the cursor encoder",
    "Plan the migration from REST polling to server-sent events",
    "Document the deploy checklist for the on-call rotation",
    "Find why the nightly build flakes on the integration suite",
    "Refactor the settings loader to validate with pydantic",
    "Summarise open TODOs in the auth module",
    "Check the new rate limiter against the load-test numbers",
    "Draft release notes for 4.2 from the merged pull requests",
    "Trace the memory growth in the websocket gateway",
    # A prime count of prompts: a title comes back only every 37 rows.
    "Port the billing cron jobs to the task queue",
    "Explain why the cache hit rate dropped after Tuesday's deploy",
    "Add structured logging to the checkout service",
    "Split the monolithic settings page into tabs",
    "Audit the IAM roles the CI runner assumes",
    "Make the search endpoint paginate with keyset cursors",
    "Reproduce the crash on Android 12 when the camera opens",
    "Write a runbook for rotating the database credentials",
    "Benchmark JSON parsing in the ingest worker",
    "Remove the feature flag for the new onboarding flow",
    "Find the N+1 queries on the orders page",
    "Upgrade the Terraform AWS provider to v5",
    "Sketch an API for bulk-editing user roles",
    "Fix the timezone bug in the weekly report",
    "Tighten the Content-Security-Policy headers",
    "Triage the crash reports from the 4.2 beta",
    "Convert the build scripts from Make to just",
    "Review the error budget policy draft",
    "Add a dark mode toggle to the web console",
    "Shrink the Docker image of the API service",
    "Investigate the slow cold start of the lambda",
    "Write integration tests for the webhook retries",
    "Document the event schema for the analytics pipeline",
    "Replace the hand-rolled CSV parser",
    "Check the accessibility of the sign-up form",
    "Move the notes on the incident into a postmortem",
    "Profile the image resizer under load",
]
# How full a demo session's context is, as a share of its window: every meter
# level appears (ok under 70%, warn, hand-off from 85%, forced from 95%).
_CONTEXT_SHARES = [0.02, 0.08, 0.15, 0.3, 0.45, 0.6, 0.72, 0.78, 0.87, 0.91, 0.96, 0.99]
_FOLLOW_UPS = [
    "Good. Now apply the smallest fix and show the diff.",
    "Add a test that fails without that change.",
    "What did you leave out, and why?",
    "Shorten that to five bullet points.",
    "Run it again against the staging config.",
]
_TOOLS = ["shell", "read_file", "apply_patch", "search"]
# Only scripted agents: resuming a demo session must never start a real CLI.
_DEMO_AGENTS = [
    name
    for name, agent in builtin_agents().items()
    if agent.runner == "scripted" and name != "echo"
] + ["echo"]


def generate(
    n: int,
    now_us: int,
    count_tokens: Callable[[str], int],
    *,
    messages_per_session: int | None = None,
    start: int = 0,
) -> Iterator[FinishedSession]:
    """Yield ``n`` demo sessions; ``messages_per_session`` fixes their size (benchmarks)."""
    for index in range(start, start + n):
        rng = random.Random(index)
        agent = _DEMO_AGENTS[index % len(_DEMO_AGENTS)]
        persona = builtin_agents()[agent].persona
        cwd, branch = _PROJECTS[rng.randrange(len(_PROJECTS))]
        prompt = _PROMPTS[index % len(_PROMPTS)]
        mode = SessionMode.DETACHED if index % 7 == 3 else SessionMode.STANDARD
        last_us = now_us - (index * 7 * 60 + rng.randrange(0, 300)) * 1_000_000
        turns = 1 + (rng.randrange(12) if index % 11 else 40)  # a few long sessions
        target = messages_per_session
        cid = demo_id(index)
        messages: list[NewMessage] = []
        span = max(1, turns * 3)
        created_us = last_us - span * 45_000_000
        for turn in range(1, turns + 1):
            ask = prompt if turn == 1 else _FOLLOW_UPS[(index + turn) % len(_FOLLOW_UPS)]
            batch: list[tuple[Role, str, dict[str, Any] | None]] = [(Role.USER, ask, None)]
            if rng.random() < 0.4:
                tool = _TOOLS[rng.randrange(len(_TOOLS))]
                batch.append((Role.TOOL, f"{tool}: ok", {"name": tool, "input": {"turn": turn}}))
            batch.append((Role.ASSISTANT, f"[{persona}] turn {turn}: {ask}", None))
            for role, content, tool_meta in batch:
                at = created_us + len(messages) * 45_000_000
                messages.append(
                    NewMessage(
                        str(uuid.uuid5(_NAMESPACE, f"{cid}/{len(messages)}")),
                        role,
                        content,
                        min(at, last_us),
                        count_tokens(content),
                        tool_meta,
                    )
                )
                if target is not None and len(messages) >= target:
                    break
            if target is not None and len(messages) >= target:
                break
        while target is not None and len(messages) < target:
            content = f"[{persona}] note {len(messages)}: {ask}"
            messages.append(
                NewMessage(
                    str(uuid.uuid5(_NAMESPACE, f"{cid}/{len(messages)}")),
                    Role.ASSISTANT if len(messages) % 2 else Role.USER,
                    content,
                    min(created_us + len(messages) * 1_000_000, last_us),
                    count_tokens(content),
                )
            )
        limit = builtin_agents()[agent].context_limit
        share = _CONTEXT_SHARES[rng.randrange(len(_CONTEXT_SHARES))]
        used = max(sum(m.token_count for m in messages), round(limit * share))
        session = NewSession(
            conversation_id=cid,
            agent_id=agent,
            mode=mode,
            cwd=cwd,
            title=prompt,
            created_us=created_us,
            context_limit=limit,
            git_branch=branch,
        )
        status = RunStatus.FAILED if index % 13 == 5 else RunStatus.COMPLETED
        # The state as if the run completed: demo data (and the snapshots drawn from it)
        # predate the rule that a detached session whose run failed rests idle.
        state = ready_state(mode, RunStatus.COMPLETED)
        yield FinishedSession(session, messages, last_us, state, status, used)


async def fill(
    store: Store,
    n: int,
    now_us: int,
    count_tokens: Callable[[str], int],
    *,
    batch_size: int = 500,
    messages_per_session: int | None = None,
) -> int:
    """Insert the demo sessions that are not in the store yet; returns how many were added."""
    added = 0
    pending: list[FinishedSession] = []

    async def flush() -> None:
        nonlocal added
        fresh = [d for d in pending if not await store.sessions.exists(d.session.conversation_id)]
        await store.bulk.insert(fresh)
        added += len(fresh)
        pending.clear()

    for demo in generate(n, now_us, count_tokens, messages_per_session=messages_per_session):
        pending.append(demo)
        if len(pending) >= batch_size:
            await flush()
    await flush()
    return added
