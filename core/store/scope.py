"""The SQL condition of a :class:`~core.models.SessionScope`: which sessions a view covers.

One function used by every listing, count and search, so they always agree on
what "this project", "this branch", "the archive" and "sub-agents" mean.
"""

from __future__ import annotations

from core.models import SessionScope

# The character right after "/" in code point (and UTF-8 byte) order: every path
# under "ROOT/" sorts in the range ["ROOT/", "ROOT0"), an exact index-friendly
# test where LIKE would fold ASCII case and read "%" and "_" as wildcards.
_AFTER_SLASH = chr(ord("/") + 1)


def scope_where(scope: SessionScope, alias: str = "s") -> tuple[str, list[object]]:
    """The condition (and its parameters) keeping the sessions ``scope`` covers.

    ``alias`` names the ``sessions`` table in the query the condition goes in.
    The sort is not part of it: the caller orders by ``scope.sort``.
    """
    conditions: list[str] = []
    params: list[object] = []
    if scope.roots is not None:
        in_roots, root_params = _under_roots(scope.roots, alias)
        conditions.append(in_roots)
        params += root_params
    if scope.branch is not None:
        conditions.append(f"{alias}.git_branch = ?")
        params.append(scope.branch)
    conditions.append(f"{alias}.archived_at IS {'NOT NULL' if scope.archived else 'NULL'}")
    if not scope.subagents:
        conditions.append(f"{alias}.parent_id IS NULL")
    elif scope.top_level:
        # A sub-agent is read under its parent; one whose parent is not stored
        # (not imported, purged) would be listed nowhere, so it counts as top-level.
        conditions.append(
            f"({alias}.parent_id IS NULL OR NOT EXISTS (SELECT 1 FROM sessions AS scope_parent"
            f" WHERE scope_parent.conversation_id = {alias}.parent_id))"
        )
    if not scope.warmup:
        conditions.append(f"{alias}.warmup = 0")
    return " AND ".join(conditions), params


def _under_roots(roots: tuple[str, ...], alias: str) -> tuple[str, list[object]]:
    """Sessions whose cwd is one of ``roots`` or inside one; none when ``roots`` is empty."""
    if not roots:
        return "0", []
    parts: list[str] = []
    params: list[object] = []
    for root in roots:
        folder = root.rstrip("/")
        if not folder:  # the file system's root holds every path
            return "1", []
        parts.append(f"{alias}.cwd = ? OR ({alias}.cwd >= ? AND {alias}.cwd < ?)")
        params += [folder, folder + "/", folder + _AFTER_SLASH]
    return "(" + " OR ".join(f"({p})" for p in parts) + ")", params
