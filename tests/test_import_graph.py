"""No import circles among the modules of core/ and tui/.

The graph is every import statement grimp finds: at module level, under
``if TYPE_CHECKING:`` and inside functions (a deferred import still ties two
modules together). A circle means neither module can be read, tested or moved
without the other; the fix is a third module both depend on, or a protocol.
"""

from __future__ import annotations

import grimp


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Each group of modules that import each other in a ring (Tarjan's strongly
    connected components with more than one member), each sorted."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a long chain of imports cannot exhaust the recursion limit.
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def _one_ring(graph: grimp.ImportGraph, group: list[str]) -> str:
    """A readable ring through the group's first module: a -> b -> ... -> a."""
    first = group[0]
    for imported in sorted(graph.find_modules_directly_imported_by(first)):
        if imported in group:
            back = graph.find_shortest_chain(importer=imported, imported=first)
            if back is not None:
                return " -> ".join((first, *back))
    return ", ".join(group)


def test_core_and_tui_have_no_import_circles() -> None:
    graph = grimp.build_graph("core", "tui", cache_dir=None)
    rings = [_one_ring(graph, group) for group in _circles(graph)]

    assert rings == [], "import circles:\n" + "\n".join(rings)


def test_the_circle_finder_sees_a_ring_through_a_deferred_import() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")  # say, inside a function

    assert _circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert _one_ring(graph, ["pkg.a", "pkg.b", "pkg.c"]) == "pkg.a -> pkg.b -> pkg.c -> pkg.a"
