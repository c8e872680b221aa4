"""Answering a parsed query from the index: ranked sessions, each with its best snippet.

A session's score is the bm25 rank of its best-matching text (a title, a
prompt or an assistant message; lower is better), ties going to the most
recently active. Pages are keyset positions on ``(score, last activity, id)``.
A query of filters only lists the matching sessions newest first.
"""

from __future__ import annotations

from collections.abc import Sequence

from core import cursors
from core.cursors import SearchCursor
from core.models import SearchPage, SearchResult, SearchSnippet, SessionScope
from core.search.parser import ARCHIVED, ParsedQuery
from core.search.snippets import best_snippet
from core.store.database import Database
from core.store.rows import SESSION_COLUMNS, clamp_time, session_from_row, split_page
from core.store.scope import scope_where

_S_COLUMNS = ", ".join(f"s.{c.strip()}" for c in SESSION_COLUMNS.split(","))
# Every matching text, grouped by session: its best rank and the id of that text
# (SQLite takes a bare column from the row that min() picked).
_HITS = (
    "WITH hits AS ("
    " SELECT d.conversation_id AS cid, min(f.rank) AS score, f.rowid AS best"
    " FROM search_fts f JOIN search_docs d ON d.id = f.rowid"
    " WHERE search_fts MATCH ? GROUP BY d.conversation_id)"
    f" SELECT {_S_COLUMNS}, h.score AS score, h.best AS best"
    " FROM hits h JOIN sessions s ON s.conversation_id = h.cid"
)
_FILTERS_ONLY = f"SELECT {_S_COLUMNS}, 0.0 AS score, NULL AS best FROM sessions s"
_ORDER = " ORDER BY score, s.last_interacted_at DESC, s.conversation_id DESC LIMIT ?"
_AFTER = (
    "(score > ? OR (score = ? AND (s.last_interacted_at < ?"
    " OR (s.last_interacted_at = ? AND s.conversation_id < ?))))"
)
# The matches of a page's best rows in one statement: highlight() runs only for them.
_HIGHLIGHTS = (
    "SELECT f.rowid AS id, d.kind AS kind, d.at AS at, d.marks AS marks,"
    " highlight(search_fts, 0, char(2), char(3)) AS text"
    " FROM search_fts f JOIN search_docs d ON d.id = f.rowid"
    " WHERE search_fts MATCH ? AND f.rowid IN ({marks})"
)


def _filter_sql(query: ParsedQuery) -> tuple[list[str], list[object]]:
    """SQL conditions for the filters: AND across keys, OR among one key's values."""
    clauses: list[str] = []
    params: list[object] = []
    for key, values in sorted(query.filters.items()):
        if key == "agent":  # a prefix: agent:claude finds claude-code
            one = "substr(casefold(s.agent_id), 1, length(?)) = ?"
            args: list[object] = [a for v in values for a in (v, v)]
        elif key == "state":  # with the scope: see _scope_sql
            continue
        elif key == "branch":
            one, args = "instr(casefold(coalesce(s.git_branch, '')), ?) > 0", list(values)
        else:  # cwd
            one, args = "instr(casefold(s.cwd), ?) > 0", list(values)
        clauses.append("(" + " OR ".join([one] * len(values)) + ")")
        params.extend(args)
    return clauses, params


def _scope_sql(scope: SessionScope, states: tuple[str, ...]) -> tuple[str, list[object]]:
    """The scope's condition, with the ``state:`` filter (OR among its values).

    ``state:archived`` adds the archive to what is searched: alone it finds the
    archived sessions in scope; beside other states, those states in the pool
    or any archived session.
    """
    live = [s for s in states if s != ARCHIVED]
    in_live = f"s.state IN ({', '.join('?' * len(live))})"
    if ARCHIVED not in states:
        where, params = scope_where(scope, "s")
        return (f"{where} AND {in_live}", [*params, *live]) if live else (where, params)
    archive, archive_params = scope_where(scope.model_copy(update={"archived": True}), "s")
    if not live:
        return archive, archive_params
    pool, pool_params = scope_where(scope.model_copy(update={"archived": False}), "s")
    return (
        f"(({pool} AND {in_live}) OR ({archive}))",
        [*pool_params, *live, *archive_params],
    )


class SessionSearch:
    """Runs parsed queries against the store's index (reader connection only)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def page(
        self,
        query: ParsedQuery,
        limit: int,
        cursor: str | None,
        scope: SessionScope | None = None,
    ) -> SearchPage:
        """One page of results for ``query`` in ``scope`` after ``cursor`` (a ``next_cursor``)."""
        scope = scope or SessionScope()
        key = query.key(scope.model_dump_json())
        after = cursors.decode_search_cursor(cursor, key) if cursor is not None else None
        match = query.match_expression()
        clauses, params = _filter_sql(query)
        in_scope, scope_params = _scope_sql(scope, query.filters.get("state", ()))
        clauses.append(in_scope)
        params.extend(scope_params)
        sql = _HITS if match is not None else _FILTERS_ONLY
        head: list[object] = [match] if match is not None else []
        if after is not None:
            clauses.append(_AFTER)
            params.extend(_after_params(after))
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = await self._db.fetch_all(sql + where + _ORDER, [*head, *params, limit + 1])
        kept, last_row = split_page(rows, limit)
        best = [int(r["best"]) for r in kept if r["best"] is not None]
        snippets = await self._snippets(match, best) if match is not None and best else {}
        results = [
            SearchResult(
                session=session_from_row(row),
                snippet=snippets.get(int(row["best"])) if row["best"] is not None else None,
                score=float(row["score"]),
            )
            for row in kept
        ]
        next_cursor = None
        if last_row is not None:
            last = results[-1]
            next_cursor = cursors.encode_search_cursor(
                SearchCursor(
                    key,
                    last.score,
                    int(last_row["last_interacted_at"]),
                    last.session.conversation_id,
                )
            )
        return SearchPage(results=results, next_cursor=next_cursor)

    async def _snippets(self, match: str, doc_ids: list[int]) -> dict[int, SearchSnippet]:
        """The best-matching text of each result, as snippets keyed by text id."""
        sql = _HIGHLIGHTS.format(marks=", ".join("?" * len(doc_ids)))
        found: dict[int, SearchSnippet] = {}
        for row in await self._db.fetch_all(sql, [match, *doc_ids]):
            marks = None if row["marks"] is None else str(row["marks"])
            best = best_snippet(str(row["text"]), marks, str(row["kind"]), int(row["at"] or 0))
            if best is None:
                continue
            snippet, at = best
            found[int(row["id"])] = snippet.model_copy(
                update={"at": clamp_time(at) if at > 0 else None}
            )
        return found


def _after_params(after: SearchCursor) -> Sequence[object]:
    return (
        after.score,
        after.score,
        after.last_interacted_us,
        after.last_interacted_us,
        after.conversation_id,
    )
