"""A capsule's structure and size, checked: every problem with its line and stable code.

What is checked (secrets and drift are ``secrets`` and ``drift``; ``check`` runs all):
the front matter's keys and values, the outline (sections missing or out of order),
the transcript highlights (at most ``MAX_HIGHLIGHTS``, each citing a timestamp, a
message or a commit), the body against its ``token_budget``, and the body against
``CEILING_SHARE`` of the sub-agent's prompt ceiling. Unknown sections and extra prose
are a person's to keep: never a problem.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from core.capsules.markdown import (
    CapsuleSyntaxError,
    heading_title,
    lines_of,
    parse_with_problems,
    split_sections,
)
from core.capsules.model import (
    CEILING_SHARE,
    DEFAULT_BUDGET,
    DEFAULT_PROMPT_CEILING,
    MAX_HIGHLIGHTS,
    SECTIONS,
    Capsule,
    Section,
    section_key,
)
from core.documents.problems import Problem
from core.tokens import count_tokens

HIGHLIGHTS = "Transcript Highlights"
EXPLORATORY = "Exploratory Threads & User Preferences"

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ITEM = re.compile(r" ?(?:[-*+]|\d{1,3}[.)])[ \t]+\S")
# What a highlight cites so a reader can find its source (seed 000: "each linking to a
# plan/progress timestamp or commit hash"): a date or clock time, a message id, a commit.
_TIMESTAMP = re.compile(r"(?<!\d)(?:\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?)(?!\d)")
_MESSAGE = re.compile(r"\b(?:message|msg)[ \t]*(?:[#:][ \t]*)?[\w-]*\d", re.IGNORECASE)
_COMMIT = re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,40}\b")


def body_tokens(capsule_or_text: Capsule | str) -> int:
    """Tokens in a capsule's body (everything after the front matter), as the budget
    counts them. Text without front matter is counted whole."""
    if isinstance(capsule_or_text, Capsule):
        return count_tokens(capsule_or_text.body)
    try:
        capsule, _ = parse_with_problems(capsule_or_text)
    except CapsuleSyntaxError:
        return count_tokens(capsule_or_text)
    return count_tokens(capsule.body)


def validate_capsule(text: str, *, prompt_ceiling: int = DEFAULT_PROMPT_CEILING) -> list[Problem]:
    """Every structure and size problem of the capsule in ``text``, sorted by line.

    Never raises: text without front matter is reported (``front_matter_missing``) and
    its sections are still checked against the full outline and default budget.
    """
    try:
        capsule, problems = parse_with_problems(text)
        body_line = _body_first_line(capsule)
        outline, budget, body = capsule.front.outline, capsule.front.token_budget, capsule.body
        sections = capsule.sections
    except CapsuleSyntaxError as missing:
        problems = list(missing.problems)
        _, sections = split_sections(text)
        body_line, outline, budget, body = 1, SECTIONS, DEFAULT_BUDGET, text
    problems += outline_problems(sections, outline, last_line=_last_line(text))
    problems += highlight_problems(sections)
    problems += size_problems(body, body_line, budget=budget, prompt_ceiling=prompt_ceiling)
    return sorted(problems, key=lambda p: (p.line, p.code))


def _body_first_line(capsule: Capsule) -> int:
    return (capsule.front_matter_text or "").count("\n") + 1


def _last_line(text: str) -> int:
    return max(1, len(lines_of(text)))


def outline_problems(
    sections: tuple[Section, ...], outline: tuple[str, ...], *, last_line: int
) -> list[Problem]:
    """Sections of ``outline`` missing, given twice, or out of its order."""
    order = {section_key(title): index for index, title in enumerate(outline)}
    problems: list[Problem] = []
    first: dict[str, Section] = {}
    own: dict[str, Section] = {}
    for section in sections:
        if section.key not in order:
            own.setdefault(section.key, section)  # the writer's own: kept, never a problem
            continue
        if section.key in first:
            problems.append(
                Problem(
                    section.line,
                    "section_order",
                    f"`# {section.title}` appears twice (first on line "
                    f"{first[section.key].line}); merge them into one section",
                )
            )
            continue
        first[section.key] = section
    present = list(first.values())
    in_order = _longest_ordered(present, lambda s: order[s.key])
    for section in present:
        if section not in in_order:
            problems.append(
                Problem(
                    section.line,
                    "section_order",
                    f"`# {section.title}` is out of order: {_placement(outline, section.key)}",
                )
            )
    for index, title in enumerate(outline):
        key = section_key(title)
        if key in first or (key == section_key(EXPLORATORY) and _nested_exploratory(first)):
            continue
        alike = difflib.get_close_matches(key, own, n=1, cutoff=0.75)
        if alike:  # a typo or a reworded title: point at it
            section = own.pop(alike[0])
            problems.append(
                Problem(
                    section.line,
                    "section_missing",
                    f"the capsule has no `# {title}` section; `# {section.title}` looks "
                    "like it: use the outline's title",
                )
            )
            continue
        later = [first[section_key(t)] for t in outline[index + 1 :] if section_key(t) in first]
        line = later[0].line if later else last_line
        problems.append(
            Problem(
                line,
                "section_missing",
                f"the capsule has no `# {title}` section; {_placement(outline, key)}",
            )
        )
    return problems


def _placement(outline: tuple[str, ...], key: str) -> str:
    index = next(i for i, title in enumerate(outline) if section_key(title) == key)
    if index == 0:
        return f"it comes first, before `# {outline[1]}`" if len(outline) > 1 else "add it"
    if index == len(outline) - 1:
        return f"it comes last, after `# {outline[index - 1]}`"
    return f"it goes after `# {outline[index - 1]}` and before `# {outline[index + 1]}`"


def _longest_ordered(items: list[Section], rank: Callable[[Section], int]) -> list[Section]:
    """The longest run of ``items`` (kept in their order) whose ranks increase: the
    sections that are in place; the rest are the ones to move."""
    best: list[list[Section]] = []
    for i, item in enumerate(items):
        before = [best[j] for j in range(i) if rank(items[j]) < rank(item)]
        best.append([*max(before, key=len, default=[]), item])
    return max(best, key=len, default=[])


def _nested_exploratory(first: dict[str, Section]) -> bool:
    """The seed lets Exploratory Threads live inside Transcript Highlights as a
    ``## Exploratory Threads ...`` subsection."""
    highlights = first.get(section_key(HIGHLIGHTS))
    if highlights is None:
        return False
    return any(
        (title := _subheading(line)) is not None
        and section_key(title).startswith("exploratory threads")
        for line in highlights.body.split("\n")
    )


def _subheading(line: str) -> str | None:
    """The title of a ``##`` to ``######`` heading, or None."""
    level = len(line) - len(line.lstrip("#"))
    return heading_title(line, level) if 2 <= level <= 6 else None


def highlights(section: Section) -> list[tuple[int, str]]:
    """The highlights of a Transcript Highlights section: each top-level list item with
    its nested lines, and the line it starts on (HTML comments, such as the template's
    hints, ignored; a ``##`` subheading ends the list)."""
    body = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), section.body)
    items: list[tuple[int, list[str]]] = []
    for number, line in enumerate(body.split("\n"), start=section.line + 1):
        if _subheading(line) is not None:
            break
        if _ITEM.match(line):
            items.append((number, [line]))
        elif items and (line[:1] in " \t" and line.strip()):
            items[-1][1].append(line)
    return [(number, "\n".join(lines)) for number, lines in items]


def highlight_problems(sections: tuple[Section, ...]) -> list[Problem]:
    """More highlights than ``MAX_HIGHLIGHTS``, and highlights that cite nothing."""
    section = next((s for s in sections if s.key == section_key(HIGHLIGHTS)), None)
    if section is None:
        return []
    found = highlights(section)
    problems = [
        Problem(
            number,
            "highlight_unreferenced",
            "this highlight cites no source; add a timestamp (2025-10-23T18:05Z), "
            "`message <id>` or `commit <hash>` so a reader can find it",
        )
        for number, text in found
        if not any(p.search(text) for p in (_TIMESTAMP, _MESSAGE, _COMMIT))
    ]
    if len(found) > MAX_HIGHLIGHTS:
        problems.append(
            Problem(
                found[MAX_HIGHLIGHTS][0],
                "highlights_too_many",
                f"{len(found)} transcript highlights; keep the {MAX_HIGHLIGHTS} most pivotal "
                f"(this is number {MAX_HIGHLIGHTS + 1})",
            )
        )
    return problems


def size_problems(body: str, first_line: int, *, budget: int, prompt_ceiling: int) -> list[Problem]:
    """The body over its token budget, and over ``CEILING_SHARE`` of the prompt ceiling;
    each reported on the line where the body crosses the limit."""
    used = count_tokens(body)
    problems: list[Problem] = []
    if used > budget:
        problems.append(
            Problem(
                _crossing_line(body, first_line, budget),
                "over_budget",
                f"the body is {used:,} tokens, over its token_budget of {budget:,} from this "
                "line on; cut it (reference files instead of quoting them) or raise token_budget",
            )
        )
    ceiling = int(prompt_ceiling * CEILING_SHARE)
    if used > ceiling:
        problems.append(
            Problem(
                _crossing_line(body, first_line, ceiling),
                "over_prompt_ceiling",
                f"the body is {used:,} tokens, over {CEILING_SHARE:.0%} of the sub-agent's "
                f"prompt ceiling ({ceiling:,} of {prompt_ceiling:,}) from this line on; "
                "it would crowd out the task: cut it",
            )
        )
    return problems


def _crossing_line(body: str, first_line: int, limit: int) -> int:
    """The line of ``body`` on which its running token count first exceeds ``limit``."""
    lines = lines_of(body)
    low, high = 1, len(lines)  # the shortest prefix of lines over the limit
    while low < high:
        middle = (low + high) // 2
        if count_tokens("".join(lines[:middle])) > limit:
            high = middle
        else:
            low = middle + 1
    return first_line + low - 1
