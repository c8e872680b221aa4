"""The span finders under the hooks installer: what they add comes out exactly, and
they see a TOML file's top level as ``tomllib`` does."""

from __future__ import annotations

import json
import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from core.hooks import json_spans, toml_spans

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    value=st.dictionaries(st.text(max_size=4), _json, max_size=4) | st.lists(_json, max_size=4),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    added=_json,
    crlf=st.booleans(),
)
def test_removing_what_was_appended_gives_the_text_back(
    value: object, indent: int | str | None, added: object, crlf: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if crlf:
        text = text.replace("\n", "\r\n")
    box = json_spans.root(text)
    assert box is not None
    if isinstance(value, dict):
        key = "added"

        def render(at: str | None, unit: str, newline: str) -> str:
            return f'"{key}": ' + json_spans.render_value(added, at, unit, newline)
    else:

        def render(at: str | None, unit: str, newline: str) -> str:
            return json_spans.render_value(added, at, unit, newline)

    grown = json_spans.append(text, box, render)
    parsed = json.loads(grown)
    if isinstance(value, dict):
        assert parsed == {**value, "added": added}  # a second "added": the last counts
    else:
        assert parsed == [*value, added]
    grown_box = json_spans.root(grown)
    assert grown_box is not None
    if len(box.items) == 0 and text != "{}" and text != "[]":
        return  # an empty container's inner blank is not kept (the installer keeps the file)
    assert json_spans.remove(grown, grown_box, len(grown_box.items) - 1) == text


_lines = st.sampled_from(
    [
        'a = "x"',
        "# c",
        "",
        'ml = """\nnotify = 1\n"""',
        "lit = '''\nx = 2\n'''",
        'q = """a""""',
        "arr = [\n 1, # c\n 2,\n]",
        "t = { a = 1, b = 'c = 2' }",
        '"k y" = 1',
        "d.e = 1",
        "n = 1979-05-27 07:32:00",
        "[tab]",
    ]
)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_lines, max_size=8))
def test_the_top_level_is_what_tomllib_reads(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    statements = toml_spans.top_level(text)
    top = {s.key[0] for s in statements}
    tables = {k for k, v in config.items() if isinstance(v, dict) and k == "tab"}
    assert top == set(config) - tables
    rebuilt: dict[str, object] = {}
    for statement in statements:  # each span alone is the statement, whole
        rebuilt.update(tomllib.loads(text[statement.start : statement.end]))
    assert rebuilt == {k: v for k, v in config.items() if k not in tables}
