"""Summaries: prompts, transcripts, redaction, file tracking, extractive and model summarizers.

- ``ExtractiveSummarizer``: deterministic, no model; the default and the fallback.
- ``LLMSummarizer``: a ``ChatModel`` prompted to write the summary, sized to its own input budget
  (map-reduce when needed), with an output ceiling, a cache-reusing mode and the extractive
  fallback.
- ``prompts``: the sections (``SECTIONS``) and the prompts; ``transcript``: how messages are
  rendered for a summarizer; ``redact``: secrets out of summaries; ``fileops``: files read and
  modified, cumulative across compactions.
"""

from abridged.engine.summarize.extractive import (
    ExtractiveSummarizer,
    harvest_references,
    is_constraint,
    user_request_text,
)
from abridged.engine.summarize.fileops import (
    DEFAULT_EXTRACTORS,
    FileOpsExtractor,
    extract_file_ops,
    file_ops_of_call,
    format_file_ops,
    parse_file_ops,
    shell_file_ops,
)
from abridged.engine.summarize.llm import DEFAULT_FALLBACK, LLMSummarizer, call_tokens
from abridged.engine.summarize.prompts import (
    SECTION_KEYS,
    SECTIONS,
    SYSTEM_PROMPT,
    Section,
    parse_sections,
    render_sections,
)
from abridged.engine.summarize.redact import PATTERNS, SecretPattern, find_secrets, redact
from abridged.engine.summarize.transcript import (
    RESERVED_TAGS,
    Transcript,
    TranscriptOptions,
    clip_middle,
    escape_tags,
    render_message,
    render_transcript,
)

__all__ = [
    "DEFAULT_EXTRACTORS",
    "DEFAULT_FALLBACK",
    "PATTERNS",
    "RESERVED_TAGS",
    "SECTIONS",
    "SECTION_KEYS",
    "SYSTEM_PROMPT",
    "ExtractiveSummarizer",
    "FileOpsExtractor",
    "LLMSummarizer",
    "SecretPattern",
    "Section",
    "Transcript",
    "TranscriptOptions",
    "call_tokens",
    "clip_middle",
    "escape_tags",
    "extract_file_ops",
    "file_ops_of_call",
    "find_secrets",
    "format_file_ops",
    "harvest_references",
    "is_constraint",
    "parse_file_ops",
    "parse_sections",
    "redact",
    "render_message",
    "render_sections",
    "render_transcript",
    "shell_file_ops",
    "user_request_text",
]
