"""One message of a conversation as the preview and the transcript view draw it.

A person's and an agent's text is Markdown with every line break kept (a
prompt typed on two lines shows on two lines); a tool call and a tool result
are one quiet line each. Content is sanitised first, and Markdown never
interprets Rich markup, so transcript text cannot style or move the screen.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from core.models import Message, MessageCategory, Role
from tui.shared import formatting as fmt
from tui.shared.safe_text import clip_lines, first_line, visible

if TYPE_CHECKING:
    from rich.markdown import Markdown

MAX_MESSAGE_LINES = 12
"""A message longer than this is cut in the preview until it is expanded (ctrl+o)."""

ROLE_STYLES = {
    Role.USER: "bold blue",
    Role.ASSISTANT: "bold green",
    Role.SYSTEM: "bold red",
    Role.TOOL: "bold magenta",
}
QUIET = "dim"
CONTEXT_STYLE = "bold yellow"


def lines_kept_markdown(markup: str) -> Markdown:
    """Rich's Markdown, except that a single newline is a line break, not a space.

    Chat text is written line by line; CommonMark's soft breaks would join a
    list typed without blank lines, or a prompt's two lines, into one.
    """
    # Deferred: rich.markdown pulls in markdown_it and pygments, which the panel's
    # first frame (the list) never needs; the first message drawn pays for them.
    from rich.markdown import Markdown

    markdown = Markdown(markup)
    for token in markdown.parsed:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
    return markdown


def _where(number: int | None, message: Message, now: datetime) -> str:
    """``#3 · 2m ago`` (no number when the message's place is not known)."""
    return (f"#{number} · " if number is not None else "") + fmt.ago(message.created_at, now)


def _quiet_line(message: Message, name: str, number: int | None, now: datetime) -> Text:
    """``▸ Bash: ls -la  #3 · 2m ago``, dim: there to be skipped over."""
    summary = first_line(message.content, 90)
    if summary.startswith(f"{name}:") or summary.startswith(f"{name} "):
        summary = summary[len(name) + 1 :].strip()
    line = Text(style=QUIET)
    line.append("▸ ", "magenta")
    line.append(name, "bold")
    if summary:
        line.append(f": {summary}")
    line.append(f"  {_where(number, message, now)}")
    return line


def _is_bare_call(message: Message, name: str) -> bool:
    """Whether a message is only a tool call or result (its text is the call itself)."""
    if message.role is Role.TOOL:
        return True
    return message.content.startswith(name.split(",")[0].removesuffix(" (error)"))


def message_renderable(
    message: Message, now: datetime, *, number: int | None, expanded: bool = False
) -> RenderableType:
    """A role label with the message's number in the conversation (None: not known),
    then its content.

    ``expanded``: the whole text; otherwise cut after :data:`MAX_MESSAGE_LINES`.
    """
    name = fmt.tool_label(message)
    if name is not None and _is_bare_call(message, name):
        return _quiet_line(message, name, number, now)
    label = Text()
    label.append(message.role.value, ROLE_STYLES[message.role])
    if message.category is MessageCategory.CONTEXT:
        # Material the session was given (a capsule, a hand-off): not something said.
        label.append(" · context", CONTEXT_STYLE)
    label.append(f"  {_where(number, message, now)}", "dim")
    text = visible(message.content)
    body, hidden = (text, 0) if expanded else clip_lines(text, MAX_MESSAGE_LINES)
    parts: list[RenderableType] = [
        label,
        lines_kept_markdown(body) if body.strip() else Text("(empty)", "dim italic"),
    ]
    if hidden:
        parts.append(Text(f"… {hidden} more lines · ctrl+o shows them", "dim italic"))
    if name is not None:  # text and a tool call in one message: the call after the text
        parts.append(_quiet_line(message.model_copy(update={"content": ""}), name, number, now))
    return Group(*parts)
