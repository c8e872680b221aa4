"""Planted secrets: none survives redaction, the lint or a stored run; nothing real is masked.

Secrets in shapes the rules miss. Three kinds of trial, each a planted
secret (``tests/secrets_corpus.py``: over 100 kinds, each in the contexts secrets
leak through) or a real text:

- ``corpus``: every plant in every one of its contexts, its values drawn from a new
  seed each round: :func:`core.redact.redact` must leave nothing of the secret, and
  the capsule lint must flag it. A miss of either is a loss.
- ``realdata``: every string of every real transcript in ``tests/fixtures/realdata``:
  redaction must leave it as it was and the lint flag nothing. A change is a loss
  (a false positive).
- ``stored run``: a run of a scripted agent, through the console script, whose
  reply holds every plant in one context; then the store file (and its write-ahead
  log) read raw. A surviving secret is a loss; a hang, a survivor or an untyped
  error counts as usual.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reliability_support import Tally, cli_problem, new_tag, run_cli, survivors, timed

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: the corpus lives in tests/
    sys.path.insert(0, str(HERE.parent))

from secrets_corpus import CONTEXTS, REALDATA, Plant, planted, plants, realdata_strings  # noqa: E402
from secrets_corpus import survivors as left_of  # noqa: E402

from core.capsules.secrets import secret_problems  # noqa: E402
from core.config import DB_FILENAME  # noqa: E402
from core.redact import redact  # noqa: E402

FIRST_SEED = 27
RUN_TIMEOUT_S = 120.0


def realdata_texts(root: Path = REALDATA) -> list[str]:
    """Every string of every JSON line of every real transcript under ``root``."""
    return [text for _, text in realdata_strings(root)]


def corpus_trials(tally: Tally, rounds: int) -> None:
    for round_ in range(rounds):
        for plant, context, text in planted(plants(FIRST_SEED + round_)):
            if tally.out_of_time():
                return
            tally.trials += 1
            tally.faults += 1
            left = left_of(plant, redact(text))
            if left:
                tally.lose(f"redact missed {plant.kind} in {context}: {len(left)} part(s) left")
            elif not secret_problems(text):
                tally.lose(f"the lint missed {plant.kind} in {context}")


def realdata_trials(tally: Tally) -> None:
    for text in realdata_texts():
        tally.trials += 1
        if redact(text) != text:
            tally.lose(f"a real text was changed (false positive): {text[:120]!r}")
        elif secret_problems(text):
            tally.lose(f"the lint flagged a real text (false positive): {text[:120]!r}")


def _reply(corpus: tuple[Plant, ...], context: str) -> str:
    lines = []
    for plant in corpus:
        name = context if not plant.contexts or context in plant.contexts else plant.contexts[0]
        lines.append(f"{plant.kind}: {CONTEXTS[name](plant.value)}")
    return "\n".join(lines)


def stored_run_trials(tally: Tally, work: Path, contexts: list[str], rounds: int) -> None:
    """One run per (round, context) whose stored reply must hold no planted secret."""
    for round_ in range(rounds):
        corpus = plants(FIRST_SEED + 1000 + round_)
        for context in contexts:
            if tally.out_of_time():
                return
            home = work / f"run-{round_}-{context}"
            data = home / "data"
            data.mkdir(parents=True, mode=0o700)
            script = data / "leaky.json"
            script.write_text(json.dumps({"rules": [{"reply": _reply(corpus, context)}]}))
            (data / "config.toml").write_text(
                f'[agents.leaky]\nrunner = "scripted"\nscript = "{script}"\ndelay = 0\n',
                encoding="utf-8",
            )
            tag = new_tag()
            tally.trials += 1
            tally.faults += len(corpus)
            result = run_cli(
                ["--data-dir", str(data), "run", "--agent", "leaky", "print the settings"],
                home=home,
                tag=tag,
                timeout=RUN_TIMEOUT_S,
            )
            tally.add_survivors(survivors(tag), f"a run ({context})")
            if result.hung:
                tally.hang(f"a run of planted secrets ({context})")
                continue
            problem = cli_problem(result, json_out=False)
            if problem is not None or result.code != 0:
                tally.lose(f"run ({context}) exit {result.code}: {problem}")
                continue
            raw = b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith(DB_FILENAME))
            stored = raw.decode("utf-8", errors="replace")
            left = [plant.kind for plant in corpus if left_of(plant, stored)]
            if left:
                tally.lose(f"stored run ({context}) kept {len(left)} kind(s): {left[:6]}")


def secret_trials(work: Path, *, quick: bool = False) -> Tally:
    """Every trial; ``quick``: one corpus round and one stored run, for CI."""
    tally = Tally("secrets (redact, lint, stored run)")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        corpus_trials(tally, 1 if quick else 20)
        realdata_trials(tally)
        contexts = ["sentence"] if quick else sorted(CONTEXTS)
        stored_run_trials(tally, work, contexts, 1 if quick else 2)
    return tally
