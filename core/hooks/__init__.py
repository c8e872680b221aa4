"""The agent CLIs' own hooks (Claude Code settings, Codex notify): install, uninstall,
and what delegate does when one fires."""
