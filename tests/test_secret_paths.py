"""Every path a secret can take keeps none: stored runs, imported transcripts, search, views.

One secret of every planted kind (``tests/secrets_corpus.py``) goes through the real
console script twice: in the reply of a run of a scripted agent (the stored run's
output, streamed and stored), and inside a Claude Code transcript that
``delegate import`` indexes (a prompt and a reply: search's index, previews, pages).
Then nothing of them may be in the SQLite file (read raw, write-ahead log included),
in a search result, a session's preview or messages, the history or a JSON tool's
answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secrets_corpus import CONTEXTS, PLANTS, survivors
from support import json_out, run_cli

from core.config import DB_FILENAME

SESSION = "5e0c7a1d-27aa-4b1e-9c2f-5ec2e75e0c27"
CANARY = "canarywordzebra"


def _planted_text() -> str:
    """One line per plant (its most telling context), the canary word on each."""
    lines = []
    for plant in PLANTS:
        context = plant.contexts[0] if plant.contexts else "sentence"
        lines.append(f"{CANARY} {plant.kind}: {CONTEXTS[context](plant.value)}")
    return "\n".join(lines)


def _transcript(project: Path, text: str) -> Path:
    project.mkdir(parents=True)
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/user/project",
        "sessionId": SESSION,
        "version": "2.1.42",
        "gitBranch": "main",
    }
    lines = [
        {
            **common,
            "parentUuid": None,
            "type": "user",
            "message": {"role": "user", "content": f"please keep these safe\n{text}"},
            "uuid": "11111111-1111-4111-8111-111111111111",
            "timestamp": "2026-11-20T10:00:00.000Z",
        },
        {
            **common,
            "parentUuid": "11111111-1111-4111-8111-111111111111",
            "type": "assistant",
            "message": {
                "id": "msg_01SecretPathsTest",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-5",
                "content": [{"type": "text", "text": f"Noted:\n{text}"}],
                "usage": {"input_tokens": 10, "output_tokens": 20},
            },
            "uuid": "22222222-2222-4222-8222-222222222222",
            "timestamp": "2026-11-20T10:00:05.000Z",
        },
    ]
    path = project / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _leaks(text: str) -> list[str]:
    found = []
    for plant in PLANTS:
        found.extend(f"{plant.kind}: {piece}" for piece in survivors(plant, text))
    return found


def _leaks_raw(raw: bytes) -> list[str]:
    text = raw.decode("utf-8", errors="replace")
    return _leaks(text)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    _transcript(tmp_path / ".claude" / "projects" / "-home-user-project", _planted_text())
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    script = data / "leaky.json"
    script.write_text(json.dumps({"rules": [{"match": ".", "reply": _planted_text()}]}))
    (data / "config.toml").write_text(
        f'[agents.leaky]\nrunner = "scripted"\nscript = "{script}"\ndelay = 0\n',
        encoding="utf-8",
    )
    return tmp_path


def _cli(home: Path, *args: str) -> str:
    result = run_cli("--data-dir", str(home / "data"), *args, home=home, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_no_planted_secret_reaches_the_store_search_or_any_view(home: Path) -> None:
    planted = _planted_text()
    assert len(_leaks(planted)) >= len(PLANTS)  # the check sees every plant

    # A run whose reply holds every secret (a scripted agent): the stored run output.
    streamed = _cli(home, "run", "--agent", "leaky", "--", f"{CANARY} print the settings")
    # A transcript on disk holding every secret: imported, indexed for search.
    imported = json_out(run_cli("--data-dir", str(home / "data"), "import", "--json", home=home))
    assert imported["sessions_added"] == 1, imported

    listing = json.loads(_cli(home, "sessions", "list", "--json"))
    ids = [s["conversation_id"] for s in listing["sessions"]]
    assert SESSION in ids
    assert len(ids) == 2
    outputs = {"sessions list": json.dumps(listing), "run (streamed word by word)": streamed}
    for cid in ids:
        outputs[f"show {cid}"] = _cli(home, "sessions", "show", cid)
        outputs[f"show --json {cid}"] = _cli(home, "sessions", "show", cid, "--json")
        request = {"operation": "messages", "conversation_id": cid}
        outputs[f"messages {cid}"] = _cli(home, "tool", "delegate_sessions", json.dumps(request))
    found = json.loads(_cli(home, "sessions", "search", CANARY, "--json"))
    assert {r["session"]["conversation_id"] for r in found["results"]} >= {SESSION}
    outputs["search"] = json.dumps(found)
    outputs["search text"] = _cli(home, "sessions", "search", CANARY)
    outputs["history"] = _cli(home, "history", "--json")
    outputs["runs"] = _cli(home, "runs", "list", "--json")
    for where, text in outputs.items():
        assert CANARY in text or where.startswith(("history", "runs", "run ")), where
        assert _leaks(text) == [], f"{where}: {_leaks(text)[:5]}"

    data = home / "data"
    raw = b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith(DB_FILENAME))
    assert CANARY.encode() in raw  # the texts are stored (and indexed), masked
    assert _leaks_raw(raw) == []


def test_the_corpus_line_of_each_plant_is_a_leak_before_redaction() -> None:
    # The checks above can fail: each plant's own line, unmasked, is a leak.
    for plant in PLANTS:
        line = CONTEXTS[plant.contexts[0] if plant.contexts else "sentence"](plant.value)
        assert _leaks(line), plant.kind
