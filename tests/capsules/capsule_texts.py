"""Capsules the capsule tests share: the seed's example and one written by hand."""

from __future__ import annotations

# The seed's "Capsule Structure" example, verbatim.
SEED_EXAMPLE = """\
---
branch: feature/context-capsule-design
source_session: 20251023-171812-20251023171813-bc1df3
created_at: 2025-10-23T18:05:00Z
primary_objective: "Design context capsule workflow for subagents"
token_budget: 1200
version: 0.1
---
# Mission Snapshot
- **User intent:** ...
- **Current status:** ...

# Key Decisions & Rationale
1. ...

# Active Workstreams
- Workstream name → scope, owners, blockers.

# Pending Actions
- [ ] Pending item (owner, due trigger)

# Knowledge Base
- Code references, relevant files, API contracts.

# Risks & Watchpoints
- Risk, mitigation, monitoring plan.

# Transcript Highlights
- Timestamped bullet capturing pivotal dialogue or conclusions.
"""

# A full capsule written by hand, with prose of the writer's own: a note before the
# first section, a subsection, a fenced shell snippet whose comment looks like a
# heading, and a section outside the outline. It validates clean.
HAND_WRITTEN = """\
---
branch: feature/auth
source_session: 0f3a9c1e-1111-2222-3333-444455556666
created_at: 2026-01-21T14:30:45Z
primary_objective: "JWT authentication for the API, tested end to end"
token_budget: 1200
version: 0.1
references:
  - path: src/middleware/auth.ts
    blob: 3b18e512dba79e4c8300dd08aeb37f8e728b8dad
  - path: docs/auth-plan.md
---
Written by hand after the 14:00 review; read the plan first.

# Mission Snapshot
- **User intent:** JWT auth, no OAuth (the user said so twice).
- **Current status:** middleware done, endpoint tests half written.

# Key Decisions & Rationale
1. JWT over sessions: the API is stateless.
2. Tokens live 15 minutes; refresh through `/auth/refresh`.

## Rejected
- Cookie sessions: they need sticky load balancing.

# Active Workstreams
- Endpoint tests → `tests/api/test_auth.py`, owner: sub-agent, blocked on fixtures.

# Pending Actions
- [ ] Finish the endpoint tests (sub-agent, now)
- [ ] Document the refresh flow (main, after tests)

# Knowledge Base
- `src/middleware/auth.ts`: verifies and decodes the token.
- Run the suite:

```sh
# this is a shell comment, not a heading
npm test -- auth
```

# Risks & Watchpoints
- Clock skew between services: allow 30 s leeway; watch the 401 rate.

# Transcript Highlights
- 2026-01-21T13:02Z: the user rejected OAuth ("too heavy for now").
- message msg_01HX9 settled the 15-minute lifetime.
- commit 9f2c1ab added the middleware.

# Exploratory Threads & User Preferences
- Topic: key rotation. Hypothesis: a JWKS endpoint. Next step: ask ops.
  - Preference: the user likes short PRs.

# Notes for the reviewer
Nothing in here is secret.
"""
