"""The query language: any text parses or is a typed error, and never becomes FTS syntax."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InvalidRequest
from core.search.parser import ParsedQuery, Term, as_typed, parse_query

# Pieces that mean something to FTS5 or to our parser, mixed into random text.
SYNTAX = st.sampled_from(
    [
        '"',
        "*",
        "(",
        ")",
        "OR",
        "AND",
        "NOT",
        "NEAR",
        ":",
        "^",
        "-",
        "+",
        "{",
        "}",
        "agent:",
        "state:",
        "cwd:",
        "branch:",
        "state:ready",
        " ",
        "\x00",
        "\ud800",
        "é",
    ]
)
QUERIES = st.lists(st.one_of(st.text(max_size=12), SYNTAX), max_size=12).map("".join)


def _fts() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute("INSERT INTO t (body) VALUES ('hello world'), ('near the OR end')")
    return db


FTS = _fts()


@settings(max_examples=400, deadline=None)
@given(QUERIES)
def test_any_text_parses_or_is_invalid_request_and_runs_as_data(text: str) -> None:
    try:
        parsed = parse_query(text)
    except InvalidRequest as exc:
        message = str(exc)  # a message a person can act on
        assert message
        return
    assert isinstance(parsed, ParsedQuery)
    assert parsed.terms or parsed.filters
    match = parsed.match_expression()
    if match is not None:
        FTS.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()
    assert len(parsed.key()) == 16


def test_terms_phrases_prefixes_and_filters() -> None:
    parsed = parse_query('Fix "the login bug" auth* AGENT:Codex state:READY cwd:"my dir" x:y')
    assert parsed.terms == (
        Term("Fix"),
        Term("the login bug"),
        Term("auth", prefix=True),
        Term("x:y"),
    )
    assert parsed.filters == {"agent": ("codex",), "state": ("ready",), "cwd": ("my dir",)}
    assert parsed.match_expression() == '"Fix" "the login bug" "auth" * "x:y"'


def test_quotes_and_keywords_are_quoted_data() -> None:
    parsed = parse_query('foo" OR * NEAR(')
    assert parsed.match_expression() == '"foo""" "OR" "NEAR("'
    assert FTS.execute(
        "SELECT rowid FROM t WHERE t MATCH ?", (parse_query("near OR").match_expression(),)
    ).fetchall() == [(2,)]


def test_a_phrase_prefix_and_an_unterminated_quote() -> None:
    assert parse_query('"two wor"*').terms == (Term("two wor", prefix=True),)
    assert parse_query('"runs to the end').terms == (Term("runs to the end"),)


@pytest.mark.parametrize("text", ["", "  ", "***", '""', "!!! ---", "state:", "branch:  x"])
def test_nothing_to_search_for_is_a_typed_error(text: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_query(text)


def test_the_cursor_key_depends_on_the_query() -> None:
    assert parse_query("a b").key() == parse_query("a   b").key()
    assert parse_query("a b").key() != parse_query('"a b"').key()
    assert parse_query("state:idle").key() != parse_query("state:ready").key()


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("teammat", "teammat*"),
        ("retry logic", "retry logic*"),
        ("retry logic ", "retry logic "),  # a space: the word is finished
        ("pref*", "pref*"),
        ('"a phrase"', '"a phrase"'),
        ('"a phra', '"a phra'),  # inside an open quote
        ("words agent:codex", "words agent:codex"),
        ("state:ready", "state:ready"),
        ("what?!", "what?!*"),
        ("...", "..."),
        ("", ""),
    ],
)
def test_the_last_word_typed_searches_as_a_prefix(typed: str, sent: str) -> None:
    assert as_typed(typed) == sent
    try:
        parse_query(typed)
    except InvalidRequest:
        return
    parse_query(sent)  # a query that runs typed still runs as sent


def test_a_word_typed_so_far_finds_what_the_whole_word_finds() -> None:
    parsed = parse_query(as_typed("teammat"))
    assert parsed.terms == (Term("teammat", prefix=True),)
