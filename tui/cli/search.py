"""``delegate sessions search QUERY``: full-content search from the command line.

The query language is the search box's (docs/search.md): words, "phrases",
prefix*, and the filters agent:, state:, branch:, cwd:. ``--json`` prints the
``SearchPage`` the tool returns; otherwise one line per session, then its
snippet with the matched words in bold (plain text when piped).
"""

from __future__ import annotations

import argparse
from typing import Any

from core.models import SearchPage, SearchSnippet, SessionScope
from core.orchestrator import AgentOrchestrator
from tui.cli.arguments import limit
from tui.cli.output import EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """``delegate sessions search QUERY [--limit N] [--cursor C] [--json]``."""
    search = subparsers.add_parser(
        "search",
        help="find sessions by what was said in them (titles, prompts, replies)",
        description='Words, "phrases", prefix*, and filters agent:, state:, branch:, cwd:. '
        "Best matches first.",
    )
    search.add_argument("query", help="what to find, e.g. '\"rename the file\" state:idle'")
    search.add_argument("--limit", type=limit, default=20, help="page size, 1..100 (20)")
    search.add_argument("--cursor", help="next_cursor from a previous page")
    search.add_argument("--json", action="store_true", help="print the tool's JSON")
    search.set_defaults(handler=cmd_sessions_search)


async def cmd_sessions_search(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    # What `sessions list` covers: sub-agents are rows of their own, warm-ups hidden.
    scope = SessionScope(top_level=False)
    page = await orch.search_sessions(args.query, args.limit, args.cursor, scope=scope)
    if args.json:
        print_json(page.model_dump(mode="json"))
        return EXIT_OK
    _print_page(orch, page)
    return EXIT_OK


def _print_page(orch: AgentOrchestrator, page: SearchPage) -> None:
    from rich.text import Text

    from tui.cli import render

    console = render.make_console()
    if not page.results:
        console.print("no session matches")
        return
    for result in page.results:
        s = result.session
        head = Text()
        head.append(s.conversation_id, style="bold")
        head.append(f"  {s.agent_id}  {s.state.value}  ")
        head.append(render.shown(s.title or "(untitled)"))
        console.print(head, soft_wrap=True)
        if result.snippet is not None:
            console.print(_snippet_text(result.snippet), soft_wrap=True)
    if page.next_cursor:
        console.print(f"more: --cursor {page.next_cursor}")


def _snippet_text(snippet: SearchSnippet) -> Any:
    """The snippet indented, each highlighted span bold; every piece escaped on its own."""
    from rich.text import Text

    from tui.cli.render import shown

    text = Text(f"    {snippet.role}: ")
    at = 0
    for span in snippet.highlights:
        text.append(shown(snippet.text[at : span.start]))
        text.append(shown(snippet.text[span.start : span.end]), style="bold reverse")
        at = span.end
    text.append(shown(snippet.text[at:]))
    return text
