"""The events a ``StreamParser`` emits while reading an assistant's output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

FinishReason = Literal["stop", "tool_calls", "length"]


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ContentDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call begins; its name is complete. ``index`` counts calls from 0."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """A raw fragment of the call's arguments JSON, exactly as the model wrote it."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The call is complete: ``arguments`` is the whole JSON text, ``parsed`` its value
    (``None`` when the text is not valid JSON; a diagnostic says so). ``id`` is set when the
    model wrote the call's id after its start (Mistral writes ``"id"`` after the arguments):
    it replaces the id ``ToolCallStart`` announced."""

    index: int
    arguments: str
    parsed: Any
    id: str | None = None


DiagnosticKind = Literal[
    "malformed_tool_call",
    "unknown_tool",
    "tool_call_in_reasoning",
    "unclosed_reasoning",
    "unclosed_tool_call",
    "stray_delimiter",
    "unexpected_text",
    "noncanonical",
]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something in the model output that does not follow the format; nothing was dropped.

    ``position`` is the character offset in the completion (not counting the prompt).
    """

    kind: str
    position: int
    message: str


@dataclass(frozen=True, slots=True)
class Finish:
    reason: FinishReason


Event = Union[
    ReasoningDelta, ContentDelta, ToolCallStart, ToolCallArgumentsDelta, ToolCallEnd, Diagnostic, Finish
]
