"""The events a ``StreamParser`` emits while reading an assistant's output."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Union

FinishReason = Literal["stop", "tool_calls", "length"]


# A stream makes one delta event per delta it is fed, so the three delta events set their slots
# directly: the ``__init__`` a frozen dataclass writes goes through ``object.__setattr__`` per
# field, which doubles the cost of making one. They stay frozen (``__setattr__`` refuses).


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str

    def __init__(self, text: str) -> None:
        _set_reasoning_text(self, text)


@dataclass(frozen=True, slots=True)
class ContentDelta:
    text: str

    def __init__(self, text: str) -> None:
        _set_content_text(self, text)


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call begins; its name is complete. ``index`` counts calls from 0."""

    index: int
    id: str
    name: str

    def __init__(self, index: int, id: str, name: str) -> None:
        _set_start_index(self, index)
        _set_start_id(self, id)
        _set_start_name(self, name)


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """A raw fragment of the call's arguments JSON, exactly as the model wrote it."""

    index: int
    text: str

    def __init__(self, index: int, text: str) -> None:
        _set_arguments_index(self, index)
        _set_arguments_text(self, text)


# (The slots' descriptors, read by name: a type checker takes a slot read off the class for
# the instance attribute.)
_set_reasoning_text = getattr(ReasoningDelta, "text").__set__
_set_content_text = getattr(ContentDelta, "text").__set__
_set_arguments_index = getattr(ToolCallArgumentsDelta, "index").__set__
_set_arguments_text = getattr(ToolCallArgumentsDelta, "text").__set__
_set_start_index = getattr(ToolCallStart, "index").__set__
_set_start_id = getattr(ToolCallStart, "id").__set__
_set_start_name = getattr(ToolCallStart, "name").__set__

_UNREAD = object()  # ``ToolCallEnd.parsed`` not decoded yet


class ToolCallEnd:
    """The call is complete: ``arguments`` is the whole JSON text, ``parsed`` its value
    (``None`` when the text is not valid JSON; a diagnostic says so). ``id`` is set when the
    model wrote the call's id after its start (Mistral writes ``"id"`` after the arguments):
    it replaces the id ``ToolCallStart`` announced.

    Without a ``parsed`` given, the value is decoded from ``arguments`` when first read: a
    completion read at once holds its events until the end, and decoded arguments take several
    times the memory of their text.
    """

    __slots__ = ("index", "arguments", "id", "_parsed")
    __match_args__ = ("index", "arguments", "parsed", "id")

    index: int
    arguments: str
    id: str | None
    _parsed: Any

    def __init__(self, index: int, arguments: str, parsed: Any = _UNREAD, id: str | None = None) -> None:
        _set_end_index(self, index)
        _set_end_arguments(self, arguments)
        _set_end_id(self, id)
        _set_end_parsed(self, parsed)

    @property
    def parsed(self) -> Any:
        parsed = self._parsed
        if parsed is _UNREAD:
            try:
                parsed = json.loads(self.arguments)
            except (ValueError, RecursionError):
                parsed = None
            _set_end_parsed(self, parsed)
        return parsed

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolCallEnd is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCallEnd):
            return NotImplemented
        return (self.index, self.arguments, self.id, self.parsed) == (other.index, other.arguments, other.id, other.parsed)

    def __hash__(self) -> int:
        return hash((self.index, self.arguments, self.id))

    def __repr__(self) -> str:
        return f"ToolCallEnd(index={self.index!r}, arguments={self.arguments!r}, parsed={self.parsed!r}, id={self.id!r})"


# (Set through the slots, read by name as above: the class refuses ``__setattr__``.)
_set_end_index = getattr(ToolCallEnd, "index").__set__
_set_end_arguments = getattr(ToolCallEnd, "arguments").__set__
_set_end_id = getattr(ToolCallEnd, "id").__set__
_set_end_parsed = getattr(ToolCallEnd, "_parsed").__set__


DiagnosticKind = Literal[
    "malformed_tool_call",
    "unknown_tool",
    "tool_call_in_reasoning",
    "unclosed_reasoning",
    "unclosed_tool_call",
    "unclosed_delimiter",
    "stray_delimiter",
    "unexpected_text",
    "noncanonical",
]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something in the model output that does not follow the format; nothing was dropped.

    ``position`` is the character offset in the completion (not counting the prompt); what
    began in the prompt (a tool call a prefill opened) is reported at 0.
    """

    kind: str
    position: int
    message: str


@dataclass(frozen=True, slots=True)
class Finish:
    reason: FinishReason


# A stream ends with one of these; being immutable, the same event can end every stream.
FINISHED: dict[str, Finish] = {reason: Finish(reason) for reason in ("stop", "tool_calls", "length")}


Event = Union[
    ReasoningDelta, ContentDelta, ToolCallStart, ToolCallArgumentsDelta, ToolCallEnd, Diagnostic, Finish
]
