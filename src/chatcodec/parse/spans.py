"""Where each part of a parsed text lies: spans tile the input exactly."""

from __future__ import annotations

from typing import NamedTuple


class Span(NamedTuple):
    """``text[start:end]`` of the completion is a delimiter, reasoning, content, a tool call's
    body, or ``unparsed`` text the format has no place for. Spans tile the whole text.

    Immutable and cheap to build: a parse makes one per delimiter and per run of text."""

    kind: str  # "delimiter", "reasoning", "content", "tool_call", "unparsed"
    start: int
    end: int
    name: str | None = None  # the delimiter's terminal name
    index: int | None = None  # type: ignore[assignment]  # the tool call's index (shadows tuple.index)
