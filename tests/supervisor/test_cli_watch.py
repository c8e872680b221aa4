"""``delegate watch`` as a user runs it: a real process, real signals, JSON on stdout."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from supervisor_support import CLAUDE_PROJECT, CLAUDE_SESSION, REALDATA, assistant_line, copy_tree
from support import DELEGATE, cli_env, write_config

DEADLINE_S = 20.0


class Watch:
    """``delegate watch`` in the background; its stdout lines arrive on a queue."""

    def __init__(self, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        """``env``: variables added to the watch's environment."""
        home = data_dir.parent
        self.proc = subprocess.Popen(
            [str(DELEGATE), "--data-dir", str(data_dir), "watch", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=home,
            env=cli_env(home, env),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str) -> str:
        until = time.monotonic() + DEADLINE_S
        while (left := until - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} in {DEADLINE_S} s: {self.seen}")

    def event(self, kind: str) -> dict[str, Any]:
        return dict(json.loads(self.wait_for(f'"kind":"{kind}"')))

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=DEADLINE_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DELEGATE), "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        cwd=data_dir.parent,
        env=cli_env(data_dir.parent),
        timeout=60,
        check=False,
    )


def test_watch_json_prints_events_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    data_dir = write_config(tmp_path / "data")
    empty = tmp_path / "agents"
    watch = Watch(data_dir, "--json", "--claude-dir", str(empty), "--codex-dir", str(empty))
    try:
        status = watch.event("watch_status")
        assert status["leader"] is True
        done = _cli(data_dir, "run", "hello", "--agent", "echo")
        assert done.returncode == 0, done.stderr
        found = re.search(r"in conversation (\S+)", done.stderr)
        assert found is not None
        conversation_id = found.group(1)
        changed = watch.wait_for(f'"kind":"sessions_changed".*{conversation_id}')
        assert json.loads(changed)["conversation_ids"]
        watch.event("delegate_launched")
    finally:
        code = watch.stop(signal.SIGTERM)
    assert code == 0, watch.proc.stderr.read() if watch.proc.stderr else ""
    assert "watching as" in (data_dir / "watch.log").read_text(encoding="utf-8")


def test_watch_prints_short_lines_and_exits_0_on_sigint(tmp_path: Path) -> None:
    data_dir = write_config(tmp_path / "data")
    empty = tmp_path / "agents"
    watch = Watch(
        data_dir, "--force-polling", "--claude-dir", str(empty), "--codex-dir", str(empty)
    )
    try:
        line = watch.wait_for("transcripts: polling")
        assert "force" in line
        assert "leader;" in line
    finally:
        code = watch.stop(signal.SIGINT)
    assert code == 0


def test_two_watch_processes_one_leads_and_the_other_takes_over(tmp_path: Path) -> None:
    data_dir = write_config(tmp_path / "data")
    empty = tmp_path / "agents"
    dirs = ("--json", "--no-transcripts", "--claude-dir", str(empty), "--codex-dir", str(empty))
    first = Watch(data_dir, *dirs)
    second: Watch | None = None
    try:
        assert first.event("watch_status")["leader"] is True
        second = Watch(data_dir, *dirs)
        assert second.event("watch_status")["leader"] is False
        assert first.stop(signal.SIGTERM) == 0  # releases the lease
        taken = second.wait_for('"kind":"watch_status".*"leader":true')
        assert json.loads(taken)["transcripts"] == "off"
    finally:
        first.stop()
        if second is not None:
            assert second.stop() == 0


def test_watch_prints_a_session_whose_transcript_grew(tmp_path: Path) -> None:
    claude = copy_tree(REALDATA / "claude", tmp_path / "home" / ".claude")
    data_dir = write_config(tmp_path / "data")
    watch = Watch(data_dir, "--json", "--claude-dir", str(claude), "--codex-dir", str(tmp_path))
    try:
        assert watch.event("watch_status")["transcripts"] == "watching"
        # The start-up re-scan imports every transcript once: wait for it to name ours.
        watch.wait_for(f'"kind":"sessions_changed".*{CLAUDE_SESSION}')
        transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
        with transcript.open("a", encoding="utf-8") as f:
            f.write(assistant_line(CLAUDE_SESSION, 99_999, 9) + "\n")
        line = watch.wait_for(f'"kind":"sessions_changed".*{CLAUDE_SESSION}')
        assert json.loads(line)["conversation_ids"] == [CLAUDE_SESSION]
    finally:
        assert watch.stop() == 0
