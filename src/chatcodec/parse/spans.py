"""Where each part of a parsed text lies: spans tile the input exactly."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """``text[start:end]`` of the completion is a delimiter, reasoning, content, a tool call's
    body, or ``unparsed`` text the format has no place for. Spans tile the whole text."""

    kind: str  # "delimiter", "reasoning", "content", "tool_call", "unparsed"
    start: int
    end: int
    name: str | None = None  # the delimiter's terminal name
    index: int | None = None  # the tool call's index
