"""Transcript loaders: agent sessions and chat logs from files, with their tool steps recovered.

Formats (names in ``FORMATS``): flattened mini-swe-agent JSONL (``swebench-jsonl``), a
mini-swe-agent ``.traj.json`` (``mini-swe-agent-traj``), OpenAI Chat JSON / JSONL, Anthropic
Messages JSON, abridged's own JSON / JSONL, Claude Code project sessions (``claude-code``) and
Codex CLI rollouts (``codex``). ``load_transcripts`` tells them apart from the
content (order documented in ``loaders``). mini-swe-agent's plain-text tool protocol is turned
into real tool calls and results (``text_protocol``), and ``messages_to_text_protocol`` gives back
the exact text that was sent.
"""

from __future__ import annotations

from abridged.formats.transcripts.claude_code import load_claude_code
from abridged.formats.transcripts.codex import load_codex
from abridged.formats.transcripts.loaders import (
    detect_format,
    load_abridged,
    load_anthropic_messages,
    load_openai_chat,
    load_openai_chat_jsonl,
    load_session,
    load_swebench_jsonl,
    load_traj_json,
    load_transcripts,
    transcript_to_dict,
)
from abridged.formats.transcripts.records import (
    ABRIDGED_JSON,
    ABRIDGED_JSONL,
    ANTHROPIC_MESSAGES,
    CLAUDE_CODE,
    CODEX,
    FORMATS,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    OPENAI_CHAT_JSONL,
    SWEBENCH_JSONL,
    LoaderStats,
    Transcript,
    stats_from_messages,
)
from abridged.formats.transcripts.text_protocol import (
    BASH_TOOL,
    TEXT_PROTOCOL,
    bash_commands,
    messages_from_text_protocol,
    messages_to_text_protocol,
    observation_is_error,
    text_protocol_call_id,
)

__all__ = [
    "ABRIDGED_JSON",
    "ABRIDGED_JSONL",
    "ANTHROPIC_MESSAGES",
    "BASH_TOOL",
    "CLAUDE_CODE",
    "CODEX",
    "FORMATS",
    "MINI_SWE_AGENT_TRAJ",
    "OPENAI_CHAT",
    "OPENAI_CHAT_JSONL",
    "SWEBENCH_JSONL",
    "TEXT_PROTOCOL",
    "LoaderStats",
    "Transcript",
    "bash_commands",
    "detect_format",
    "load_abridged",
    "load_anthropic_messages",
    "load_claude_code",
    "load_codex",
    "load_openai_chat",
    "load_openai_chat_jsonl",
    "load_session",
    "load_swebench_jsonl",
    "load_traj_json",
    "load_transcripts",
    "messages_from_text_protocol",
    "messages_to_text_protocol",
    "observation_is_error",
    "stats_from_messages",
    "text_protocol_call_id",
    "transcript_to_dict",
]
