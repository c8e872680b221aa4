"""Forward-only schema migrations, tracked with ``PRAGMA user_version``.

Migration N brings a store from version N-1 to N. Never edit a released
migration; add the next one. Columns that later issues will fill (source ids,
message categories, run roles and groups, capsules) are added by their own
migrations when those issues land.
"""

from __future__ import annotations

MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE agents (
    agent_id       TEXT PRIMARY KEY,
    runner         TEXT NOT NULL,
    context_limit  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE sessions (
    conversation_id     TEXT PRIMARY KEY,
    agent_id            TEXT NOT NULL,
    mode                TEXT NOT NULL CHECK (mode IN ('standard', 'detached')),
    state               TEXT NOT NULL,
    cwd                 TEXT NOT NULL,
    git_branch          TEXT,
    title               TEXT NOT NULL DEFAULT '',
    parent_id           TEXT,
    source              TEXT NOT NULL DEFAULT 'delegate',
    created_at          INTEGER NOT NULL,
    last_interacted_at  INTEGER NOT NULL,
    turns               INTEGER NOT NULL DEFAULT 0,
    message_count       INTEGER NOT NULL DEFAULT 0,
    token_count         INTEGER NOT NULL DEFAULT 0,
    bytes_on_disk       INTEGER NOT NULL DEFAULT 0,
    context_tokens      INTEGER NOT NULL DEFAULT 0,
    context_limit       INTEGER NOT NULL DEFAULT 0,
    next_seq            INTEGER NOT NULL DEFAULT 0,
    active_run_id       TEXT,
    last_run_status     TEXT
);
CREATE INDEX sessions_newest_first ON sessions (last_interacted_at DESC, conversation_id DESC);
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE messages (
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    id               TEXT NOT NULL,
    role             TEXT NOT NULL,
    content          TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    token_count      INTEGER NOT NULL,
    tool             TEXT,
    run_id           TEXT,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE runs (
    run_id           TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE,
    agent_id         TEXT NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('launch', 'follow_up')),
    prompt           TEXT NOT NULL,
    status           TEXT NOT NULL,
    started_at       INTEGER NOT NULL,
    finished_at      INTEGER,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    output           TEXT NOT NULL DEFAULT '',
    error            TEXT,
    owner_pid        INTEGER,
    owner_host       TEXT
);
CREATE INDEX runs_by_conversation ON runs (conversation_id, started_at);

CREATE TABLE history (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    at               INTEGER NOT NULL,
    kind             TEXT NOT NULL,
    conversation_id  TEXT,
    run_id           TEXT,
    payload          TEXT NOT NULL
);

CREATE TABLE dismissed (
    conversation_id  TEXT PRIMARY KEY,
    source           TEXT NOT NULL,
    dismissed_at     INTEGER NOT NULL
)
""",
    # The incremental import index (one row per transcript file another
    # agent wrote) and the last import reports. See docs/import.md.
    2: """
CREATE TABLE source_files (
    path             TEXT PRIMARY KEY,
    source           TEXT NOT NULL,
    size             INTEGER NOT NULL,
    mtime_ns         INTEGER NOT NULL,
    read_offset      INTEGER NOT NULL DEFAULT 0,
    head_len         INTEGER NOT NULL DEFAULT 0,
    head_hash        TEXT NOT NULL DEFAULT '',
    conversation_id  TEXT,
    malformed_lines  INTEGER NOT NULL DEFAULT 0,
    unknown_lines    INTEGER NOT NULL DEFAULT 0,
    oversized_lines  INTEGER NOT NULL DEFAULT 0,
    compactions      INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    parse_state      TEXT NOT NULL DEFAULT '{}',
    scanned_at       INTEGER NOT NULL
);
CREATE INDEX source_files_by_conversation ON source_files (conversation_id)
    WHERE conversation_id IS NOT NULL;

CREATE TABLE import_reports (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    finished_at  INTEGER NOT NULL,
    report       TEXT NOT NULL
)
""",
    # What an agent CLI wrote to stderr (its last 64 KiB), kept on the run.
    3: """
ALTER TABLE runs ADD COLUMN stderr TEXT
""",
    # Robust ownership: a run's owner as host identity + pid + start time (a
    # reused pid or a reboot is a dead owner), and the agent CLI it started.
    # Hot paths answered by indexes and counters: sessions with a run in flight,
    # the fullest contexts, sessions and bytes by state (kept by triggers, so
    # every write keeps them right), id prefixes (the primary key already).
    4: """
ALTER TABLE runs ADD COLUMN owner_host_id TEXT;
ALTER TABLE runs ADD COLUMN owner_started INTEGER;
ALTER TABLE runs ADD COLUMN agent_pid INTEGER;
ALTER TABLE runs ADD COLUMN agent_started INTEGER;

CREATE INDEX sessions_in_flight ON sessions (active_run_id) WHERE active_run_id IS NOT NULL;
CREATE INDEX sessions_fullest
    ON sessions ((CAST(context_tokens AS REAL) / context_limit) DESC, conversation_id)
    WHERE context_limit > 0;

CREATE TABLE session_counts (
    state     TEXT PRIMARY KEY,
    sessions  INTEGER NOT NULL DEFAULT 0,
    bytes     INTEGER NOT NULL DEFAULT 0
);
INSERT INTO session_counts (state, sessions, bytes)
    SELECT state, count(*), total(bytes_on_disk) FROM sessions GROUP BY state;
CREATE TRIGGER session_counts_insert AFTER INSERT ON sessions BEGIN
    INSERT OR IGNORE INTO session_counts (state) VALUES (NEW.state);
    UPDATE session_counts SET sessions = sessions + 1, bytes = bytes + NEW.bytes_on_disk
        WHERE state = NEW.state;
END;
CREATE TRIGGER session_counts_delete AFTER DELETE ON sessions BEGIN
    UPDATE session_counts SET sessions = sessions - 1, bytes = bytes - OLD.bytes_on_disk
        WHERE state = OLD.state;
END;
CREATE TRIGGER session_counts_update AFTER UPDATE OF state, bytes_on_disk ON sessions
    WHEN OLD.state IS NOT NEW.state OR OLD.bytes_on_disk IS NOT NEW.bytes_on_disk
BEGIN
    UPDATE session_counts SET sessions = sessions - 1, bytes = bytes - OLD.bytes_on_disk
        WHERE state = OLD.state;
    INSERT OR IGNORE INTO session_counts (state) VALUES (NEW.state);
    UPDATE session_counts SET sessions = sessions + 1, bytes = bytes + NEW.bytes_on_disk
        WHERE state = NEW.state;
END
""",
    # The change feed and leases. Every insert or update of a session
    # or a run takes the next number of one counter (``change_counter``) into
    # its ``change_seq``; a session deleted (dismissed) or re-keyed leaves its
    # old id in ``session_removals``. A watcher reads only rows past its cursor.
    # History rows carry the process that wrote them, so a supervisor re-publishes
    # only other processes' events. ``leases``: leader election between supervisors.
    5: """
CREATE TABLE change_counter (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL
);
INSERT INTO change_counter (id, seq) VALUES (1, 0);

ALTER TABLE sessions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE history ADD COLUMN origin TEXT;
CREATE INDEX sessions_by_change ON sessions (change_seq);
CREATE INDEX runs_by_change ON runs (change_seq);

CREATE TABLE session_removals (
    change_seq       INTEGER PRIMARY KEY,
    conversation_id  TEXT NOT NULL
);

CREATE TRIGGER sessions_change_insert AFTER INSERT ON sessions BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    UPDATE sessions SET change_seq = (SELECT seq FROM change_counter WHERE id = 1)
        WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER sessions_change_update AFTER UPDATE ON sessions
    WHEN NEW.change_seq IS OLD.change_seq
BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    INSERT INTO session_removals (change_seq, conversation_id)
        SELECT seq, OLD.conversation_id FROM change_counter
        WHERE id = 1 AND OLD.conversation_id IS NOT NEW.conversation_id;
    UPDATE change_counter SET seq = seq + 1
        WHERE id = 1 AND OLD.conversation_id IS NOT NEW.conversation_id;
    UPDATE sessions SET change_seq = (SELECT seq FROM change_counter WHERE id = 1)
        WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER sessions_change_delete AFTER DELETE ON sessions BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    INSERT INTO session_removals (change_seq, conversation_id)
        SELECT seq, OLD.conversation_id FROM change_counter WHERE id = 1;
END;
CREATE TRIGGER runs_change_insert AFTER INSERT ON runs BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    UPDATE runs SET change_seq = (SELECT seq FROM change_counter WHERE id = 1)
        WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER runs_change_update AFTER UPDATE ON runs
    WHEN NEW.change_seq IS OLD.change_seq
BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    UPDATE runs SET change_seq = (SELECT seq FROM change_counter WHERE id = 1)
        WHERE rowid = NEW.rowid;
END;

CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    expires_at  INTEGER NOT NULL
)
""",
    # Full-content search. One row per searchable text (a title, a
    # prompt, the assistant's text; never tool output) in ``search_docs``,
    # indexed by the external-content FTS5 table ``search_fts``. Titles and our
    # own messages are indexed by triggers; imported transcripts by the importer
    # (``origin`` names the transcript file, 0 for what lives in this store),
    # which fills ``search_fts`` with one INSERT ... SELECT per batch: FTS5 in a
    # trigger flushes its buffer on every row, several times slower in bulk.
    # Transcripts are read again once, from the start, to index their text.
    6: """
CREATE TABLE search_docs (
    id               INTEGER PRIMARY KEY,
    conversation_id  TEXT NOT NULL,
    origin           INTEGER NOT NULL DEFAULT 0,
    kind             TEXT NOT NULL,
    at               INTEGER NOT NULL DEFAULT 0,
    body             TEXT NOT NULL
);
CREATE INDEX search_docs_by_session ON search_docs (conversation_id, origin);

CREATE VIRTUAL TABLE search_fts USING fts5(
    body, content = 'search_docs', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;

CREATE TRIGGER search_title_insert AFTER INSERT ON sessions WHEN NEW.title != '' BEGIN
    INSERT INTO search_docs (conversation_id, kind, at, body)
        VALUES (NEW.conversation_id, 'title', NEW.created_at,
                replace(replace(NEW.title, char(2), ' '), char(3), ' '));
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid();
END;
CREATE TRIGGER search_title_update AFTER UPDATE OF title ON sessions
    WHEN OLD.title IS NOT NEW.title
BEGIN
    DELETE FROM search_docs
        WHERE conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'title';
    INSERT INTO search_docs (conversation_id, kind, at, body)
        SELECT NEW.conversation_id, 'title', NEW.created_at,
               replace(replace(NEW.title, char(2), ' '), char(3), ' ')
        WHERE NEW.title != '';
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid()
            AND conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'title';
END;
CREATE TRIGGER search_session_rekey AFTER UPDATE OF conversation_id ON sessions
    WHEN OLD.conversation_id IS NOT NEW.conversation_id
BEGIN
    UPDATE search_docs SET conversation_id = NEW.conversation_id
        WHERE conversation_id = OLD.conversation_id;
END;
CREATE TRIGGER search_session_delete AFTER DELETE ON sessions BEGIN
    DELETE FROM search_docs WHERE conversation_id = OLD.conversation_id;
END;
CREATE TRIGGER search_message_insert AFTER INSERT ON messages
    WHEN NEW.role IN ('user', 'assistant') AND trim(NEW.content) != ''
BEGIN
    INSERT INTO search_docs (conversation_id, kind, at, body)
        VALUES (NEW.conversation_id, NEW.role, NEW.created_at,
                substr(replace(replace(NEW.content, char(2), ' '), char(3), ' '), 1, 65536));
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid();
END;

INSERT INTO search_docs (conversation_id, kind, at, body)
    SELECT conversation_id, 'title', created_at,
           replace(replace(title, char(2), ' '), char(3), ' ')
    FROM sessions WHERE title != '';
INSERT INTO search_docs (conversation_id, kind, at, body)
    SELECT conversation_id, role, created_at,
           substr(replace(replace(content, char(2), ' '), char(3), ' '), 1, 65536)
    FROM messages WHERE role IN ('user', 'assistant') AND trim(content) != '';
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
UPDATE source_files SET size = -1, parse_state = '{}'
""",
    # Runs owned and stoppable from anywhere. The owner beats every few
    # seconds (a run whose beat is older than the grace period is interrupted by
    # whoever sees it), a stop from another process sets the cancel flag its
    # owner reads on the next beat, and the live tail of the reply and of the
    # agent's stderr are kept so a panel in another process can show them.
    # A heartbeat alone is not a change a watcher must see: the change feed's
    # trigger now fires for every column but ``heartbeat_at``.
    7: """
ALTER TABLE runs ADD COLUMN heartbeat_at INTEGER;
ALTER TABLE runs ADD COLUMN cancel_requested_at INTEGER;
ALTER TABLE runs ADD COLUMN live_output TEXT;
ALTER TABLE runs ADD COLUMN stderr_tail TEXT;
ALTER TABLE runs ADD COLUMN last_output_at INTEGER;
ALTER TABLE runs ADD COLUMN owner_kind TEXT NOT NULL DEFAULT 'other';

CREATE INDEX runs_newest_first ON runs (started_at DESC, run_id DESC);
CREATE INDEX runs_by_status ON runs (status, started_at DESC, run_id DESC);

DROP TRIGGER runs_change_update;
CREATE TRIGGER runs_change_update AFTER UPDATE OF
    run_id, conversation_id, agent_id, kind, prompt, status, started_at, finished_at,
    input_tokens, output_tokens, output, error, owner_pid, owner_host, stderr,
    owner_host_id, owner_started, agent_pid, agent_started, cancel_requested_at,
    live_output, stderr_tail, last_output_at, owner_kind
ON runs
    WHEN NEW.change_seq IS OLD.change_seq
BEGIN
    UPDATE change_counter SET seq = seq + 1 WHERE id = 1;
    UPDATE runs SET change_seq = (SELECT seq FROM change_counter WHERE id = 1)
        WHERE rowid = NEW.rowid;
END
""",
    # A session's name, the archive, warm-up sub-agents, the created
    # order. Dismissing now archives (``archived_at``, µs) instead of deleting;
    # purging deletes and tombstones as dismissing did. The state counters count
    # only sessions outside the archive. ``sessions_children`` pages a parent's
    # sub-agents oldest first and answers ``child_count`` with one index range.
    8: """
ALTER TABLE sessions ADD COLUMN name TEXT;
ALTER TABLE sessions ADD COLUMN archived_at INTEGER;
ALTER TABLE sessions ADD COLUMN warmup INTEGER NOT NULL DEFAULT 0;

CREATE INDEX sessions_created_first ON sessions (created_at DESC, conversation_id DESC);
CREATE INDEX sessions_children ON sessions (parent_id, created_at, conversation_id)
    WHERE parent_id IS NOT NULL;

DROP TRIGGER session_counts_insert;
DROP TRIGGER session_counts_delete;
DROP TRIGGER session_counts_update;
CREATE TRIGGER session_counts_insert AFTER INSERT ON sessions WHEN NEW.archived_at IS NULL
BEGIN
    INSERT OR IGNORE INTO session_counts (state) VALUES (NEW.state);
    UPDATE session_counts SET sessions = sessions + 1, bytes = bytes + NEW.bytes_on_disk
        WHERE state = NEW.state;
END;
CREATE TRIGGER session_counts_delete AFTER DELETE ON sessions WHEN OLD.archived_at IS NULL
BEGIN
    UPDATE session_counts SET sessions = sessions - 1, bytes = bytes - OLD.bytes_on_disk
        WHERE state = OLD.state;
END;
CREATE TRIGGER session_counts_update AFTER UPDATE OF state, bytes_on_disk, archived_at
ON sessions
    WHEN OLD.state IS NOT NEW.state OR OLD.bytes_on_disk IS NOT NEW.bytes_on_disk
        OR (OLD.archived_at IS NULL) IS NOT (NEW.archived_at IS NULL)
BEGIN
    UPDATE session_counts SET sessions = sessions - 1, bytes = bytes - OLD.bytes_on_disk
        WHERE state = OLD.state AND OLD.archived_at IS NULL;
    INSERT OR IGNORE INTO session_counts (state) VALUES (NEW.state);
    UPDATE session_counts SET sessions = sessions + 1, bytes = bytes + NEW.bytes_on_disk
        WHERE state = NEW.state AND NEW.archived_at IS NULL;
END
""",
    # Search that answers fast and costs little at import. An imported
    # transcript's texts are packed into parts of some KB (``marks``: each
    # text's role and time), so FTS5 writes and ranks far fewer rows; imported
    # sessions' titles are indexed by the importer in its one FTS5 statement
    # per batch (a trigger flushes FTS5 once per session), so the title
    # triggers now index delegate's own sessions only. A session's name (the
    # user's rename) is indexed by triggers, for every session. Transcripts are
    # read once more from the start to index them in parts.
    9: """
ALTER TABLE search_docs ADD COLUMN marks TEXT;

DROP TRIGGER search_title_insert;
CREATE TRIGGER search_title_insert AFTER INSERT ON sessions
    WHEN NEW.title != '' AND NEW.source = 'delegate'
BEGIN
    INSERT INTO search_docs (conversation_id, kind, at, body)
        VALUES (NEW.conversation_id, 'title', NEW.created_at,
                replace(replace(NEW.title, char(2), ' '), char(3), ' '));
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid();
END;
DROP TRIGGER search_title_update;
CREATE TRIGGER search_title_update AFTER UPDATE OF title ON sessions
    WHEN OLD.title IS NOT NEW.title AND NEW.source = 'delegate'
BEGIN
    DELETE FROM search_docs
        WHERE conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'title';
    INSERT INTO search_docs (conversation_id, kind, at, body)
        SELECT NEW.conversation_id, 'title', NEW.created_at,
               replace(replace(NEW.title, char(2), ' '), char(3), ' ')
        WHERE NEW.title != '';
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid()
            AND conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'title';
END;

CREATE TRIGGER search_name_insert AFTER INSERT ON sessions WHEN coalesce(NEW.name, '') != ''
BEGIN
    INSERT INTO search_docs (conversation_id, kind, at, body)
        VALUES (NEW.conversation_id, 'name', NEW.created_at,
                replace(replace(NEW.name, char(2), ' '), char(3), ' '));
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid();
END;
CREATE TRIGGER search_name_update AFTER UPDATE OF name ON sessions
    WHEN OLD.name IS NOT NEW.name
BEGIN
    DELETE FROM search_docs
        WHERE conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'name';
    INSERT INTO search_docs (conversation_id, kind, at, body)
        SELECT NEW.conversation_id, 'name', NEW.created_at,
               replace(replace(NEW.name, char(2), ' '), char(3), ' ')
        WHERE coalesce(NEW.name, '') != '';
    INSERT INTO search_fts (rowid, body)
        SELECT id, body FROM search_docs WHERE id = last_insert_rowid()
            AND conversation_id = NEW.conversation_id AND origin = 0 AND kind = 'name';
END;
INSERT INTO search_docs (conversation_id, kind, at, body)
    SELECT conversation_id, 'name', created_at, replace(replace(name, char(2), ' '), char(3), ' ')
    FROM sessions WHERE coalesce(name, '') != '';

DROP TRIGGER search_docs_delete;
DELETE FROM search_docs WHERE origin != 0;
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
""",
    # How sure a session's context figure is. ``context_known`` is 0 when
    # the agent recorded no usage at all ("usage unknown", never "0 used");
    # ``context_estimated`` is 1 after a compaction until it records usage again
    # (the figure is then the summary's size, shown with "≈"). Transcripts are
    # read again from the start so every imported session gets both.
    10: """
ALTER TABLE sessions ADD COLUMN context_known INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sessions ADD COLUMN context_estimated INTEGER NOT NULL DEFAULT 0;
UPDATE source_files SET size = -1, parse_state = '{}'
""",
    # Never run out of context. A session's model and where its window
    # came from (``window_source``: model | recorded | config | clamp), the parent
    # window a clamp cut it from, its recent tokens per turn; the hand-off chain
    # (``continued_from`` / ``continued_in``) and forks. Per turn a context sample
    # (the trend); per level the threshold crossings already acted on (once each,
    # across restarts); the context documents registry shared by capsules,
    # hand-offs and compact returns; checkpoints; a category per stored message.
    # Transcripts are read again from the start so every imported session gets
    # its model.
    11: """
ALTER TABLE sessions ADD COLUMN model TEXT;
ALTER TABLE sessions ADD COLUMN window_source TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN clamped_from INTEGER;
ALTER TABLE sessions ADD COLUMN tokens_per_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN continued_from TEXT;
ALTER TABLE sessions ADD COLUMN continued_in TEXT;
ALTER TABLE sessions ADD COLUMN forked_from TEXT;
CREATE INDEX sessions_continued_from ON sessions (continued_from)
    WHERE continued_from IS NOT NULL;
CREATE INDEX sessions_forked_from ON sessions (forked_from) WHERE forked_from IS NOT NULL;

ALTER TABLE messages ADD COLUMN category TEXT NOT NULL DEFAULT 'dialog';
UPDATE messages SET category = 'tools' WHERE tool IS NOT NULL OR role = 'tool';
UPDATE messages SET category = 'system' WHERE role = 'system';

CREATE TABLE context_samples (
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE,
    turn             INTEGER NOT NULL,
    used_tokens      INTEGER NOT NULL,
    limit_tokens     INTEGER NOT NULL,
    at               INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, turn)
) WITHOUT ROWID;

CREATE TABLE context_crossings (
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE,
    level            TEXT NOT NULL,
    used_tokens      INTEGER NOT NULL,
    limit_tokens     INTEGER NOT NULL,
    crossed_at       INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, level)
) WITHOUT ROWID;

CREATE TABLE documents (
    document_id     TEXT PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('capsule', 'handoff', 'return')),
    path            TEXT NOT NULL,
    digest          TEXT NOT NULL DEFAULT '',
    source_session  TEXT,
    run_id          TEXT,
    previous_id     TEXT,
    status          TEXT NOT NULL DEFAULT 'final',
    producer        TEXT NOT NULL DEFAULT '',
    token_estimate  INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL
);
CREATE INDEX documents_by_source ON documents (source_session, created_at)
    WHERE source_session IS NOT NULL;
CREATE INDEX documents_by_kind ON documents (kind, created_at);

CREATE TABLE document_consumers (
    document_id      TEXT NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
    conversation_id  TEXT NOT NULL,
    PRIMARY KEY (document_id, conversation_id)
) WITHOUT ROWID;
CREATE INDEX document_consumers_by_session ON document_consumers (conversation_id);

CREATE TABLE checkpoints (
    checkpoint_id    TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    label            TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL
);
CREATE INDEX checkpoints_by_session ON checkpoints (conversation_id, created_at);

UPDATE source_files SET size = -1, parse_state = '{}'
""",
    # Per-agent windows: a parent's next prompt carries the notes recorded for it
    # since its last run (a sub-agent clamped below its window): found by session
    # and time, without scanning the whole history.
    12: """
CREATE INDEX history_child_notes ON history (conversation_id, at) WHERE kind = 'child_clamped'
""",
    # Capsules (seed 000): the run that launched a session with a capsule, and the session,
    # record which one (its registry id and the digest of the body injected).
    13: """
ALTER TABLE sessions ADD COLUMN capsule_id TEXT;
ALTER TABLE sessions ADD COLUMN capsule_digest TEXT;
ALTER TABLE runs ADD COLUMN capsule_id TEXT;
ALTER TABLE runs ADD COLUMN capsule_digest TEXT;
""",
    # Compact returns (seed 002): each role's run in a group's chain, what it returned
    # (its status and three lines, or INVALID_RETURN and the rule it broke), the
    # hand-off file it wrote (a ``return`` document) and where the chain goes next.
    14: """
CREATE TABLE return_steps (
    step_id            TEXT PRIMARY KEY,
    artifacts_session  TEXT NOT NULL,
    group_id           TEXT NOT NULL,
    role               TEXT NOT NULL,
    seq                INTEGER NOT NULL,
    status             TEXT NOT NULL,
    summary            TEXT NOT NULL DEFAULT '[]',
    run_id             TEXT,
    conversation_id    TEXT,
    document_id        TEXT REFERENCES documents (document_id) ON DELETE SET NULL,
    handoff_path       TEXT,
    next_role          TEXT,
    rule               TEXT,
    reason             TEXT NOT NULL DEFAULT '',
    tokens             INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    UNIQUE (artifacts_session, group_id, seq)
);
CREATE INDEX return_steps_by_run ON return_steps (run_id) WHERE run_id IS NOT NULL;
""",
    # Scale: a re-scan reads every file's (path, size, mtime_ns) from an index
    # instead of the table (whose rows carry the parse state), and the files with
    # problems, which the import report lists, from a partial index.
    15: """
CREATE INDEX source_files_stat ON source_files (path, size, mtime_ns);
CREATE INDEX source_files_problems ON source_files (path)
    WHERE malformed_lines + unknown_lines + oversized_lines > 0 OR last_error IS NOT NULL;
""",
    # Every session listed first: a session listed from its transcript's head
    # and tail has its turns, messages and tokens counted once the file is read in full.
    16: """
ALTER TABLE sessions ADD COLUMN counting INTEGER NOT NULL DEFAULT 0;
""",
    # An id delegate printed names its session for life: the ids a session
    # had before its agent re-keyed it (Codex names its own threads), each pointing at
    # the session's id now; they go with the session.
    17: """
CREATE TABLE session_aliases (
    alias            TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES sessions (conversation_id) ON DELETE CASCADE
);
CREATE INDEX session_aliases_by_session ON session_aliases (conversation_id);
""",
    # Capsule gaps reach the main agent (seed 000): a session's next prompt carries the
    # gaps reported to it since its last run, found by time without scanning the history.
    18: """
CREATE INDEX history_capsule_gaps ON history (at) WHERE kind = 'capsule_gap';
""",
    # A session whose hand-off was continued is handed_off: those continued
    # before the state was set stayed idle or ready.
    19: """
UPDATE sessions SET state = 'handed_off'
    WHERE continued_in IS NOT NULL AND state IN ('idle', 'ready');
""",
    # Clocks: a heartbeat and a lease carry the monotonic reading they were
    # made at and the clock it compares in (boot id and time namespace), so processes
    # of one host judge them by a clock that does not jump; the wall times stay for
    # other hosts. Not in the change feed's trigger: a beat is not a change.
    20: """
ALTER TABLE runs ADD COLUMN heartbeat_mono INTEGER;
ALTER TABLE runs ADD COLUMN heartbeat_clock TEXT;
ALTER TABLE leases ADD COLUMN expires_mono INTEGER;
ALTER TABLE leases ADD COLUMN expires_clock TEXT;
""",
}

SCHEMA_VERSION = max(MIGRATIONS)
