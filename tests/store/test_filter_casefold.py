"""The picker's filter folds case for all of Unicode, not only ASCII."""

from __future__ import annotations

import dataclasses

import pytest
from support import BASE_US, finished

from core.orchestrator import AgentOrchestrator


def titled(cid: str, title: str, at: int):  # type: ignore[no-untyped-def]
    base = finished(cid, at)
    return dataclasses.replace(base, session=dataclasses.replace(base.session, title=title))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("überprüfung", ["umlaut"]),
        ("ÜBER", ["umlaut", "lower"]),
        ("über", ["umlaut", "lower"]),
        ("strasse", ["sharp-s"]),
        ("STRAßE", ["sharp-s"]),
        ("ΣΟΦΊΑ", ["greek"]),
        ("deploy", ["ascii"]),
        ("DEPLOY", ["ascii"]),
        ("nothing like it", []),
    ],
)
async def test_the_filter_folds_case_beyond_ascii(
    orch: AgentOrchestrator, query: str, expected: list[str]
) -> None:
    await orch.store.bulk.insert(
        [
            titled("umlaut", "Überprüfung der Rechnungen", BASE_US + 6),
            titled("lower", "über alles", BASE_US + 5),
            titled("sharp-s", "Straße reparieren", BASE_US + 4),
            titled("greek", "σοφία", BASE_US + 3),
            titled("ascii", "Deploy the app", BASE_US + 2),
        ]
    )
    page = await orch.list_sessions(limit=10, query=query)
    assert [s.conversation_id for s in page.sessions] == expected
    assert await orch.count_sessions(query=query) == len(expected)
