"""The floor for bench_startup.py: a bare Textual app that shows a 50-row DataTable.

Run as a script (``python tests/bench/bare_table_app.py``) for the tmux figures;
``bench_startup.py`` imports ``BareTable`` for the in-process ones.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

ROWS = 50


class BareTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("name", "age", "turns", "where")
        table.add_rows(
            (f"bare-row-{i}", f"{i}m ago", str(i % 17), f"/work/project-{i % 7}")
            for i in range(ROWS)
        )
        table.focus()


if __name__ == "__main__":
    BareTable().run()
