"""Turning the engine's pieces into message events, for any family.

``StreamParser`` is sans-I/O: ``feed(text) -> events``, ``close() -> events``. Parsing a whole
completion is one ``feed`` and a ``close`` on the same object, so streaming and one-shot parsing
share every line of code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatcodec.engine import STRAY, Engine, Piece
from chatcodec.errors import ParseError
from chatcodec.events import (
    ContentDelta,
    Diagnostic,
    Event,
    Finish,
    FinishReason,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from chatcodec.families.base import Family
from chatcodec.json_scan import ObjectScanner, ValueScanner
from chatcodec.messages import FunctionCall, Message, ToolCall, new_tool_call_id

ARGUMENT_KEYS = ("arguments", "parameters")  # some models write Llama's "parameters"
BLOCK = 4096  # deltas between two joins of the text gathered so far


@dataclass(frozen=True, slots=True)
class Span:
    """``text[start:end]`` of the completion is a delimiter, reasoning, content, a tool call's
    body, or ``unparsed`` text the format has no place for. Spans tile the whole text."""

    kind: str  # "delimiter", "reasoning", "content", "tool_call", "unparsed"
    start: int
    end: int
    name: str | None = None  # the delimiter's terminal name
    index: int | None = None  # the tool call's index


@dataclass
class ParseResult:
    """Everything a parse found: the message, how it ended, what was odd, and where."""

    message: Message
    finish_reason: FinishReason
    diagnostics: list[Diagnostic]
    spans: list[Span]
    text: str

    def span_text(self, span: Span) -> str:
        return self.text[span.start : span.end]

    def reassemble(self) -> str:
        """The input, rebuilt from the spans alone (it always equals ``text``)."""
        return "".join(self.text[span.start : span.end] for span in self.spans)


@dataclass
class _Call:
    """A tool-call block being read."""

    start: int
    raw: list[str] = field(default_factory=list)  # every character of the block, delimiters too
    spans: list[tuple[str, int, int, str | None]] = field(default_factory=list)
    scanner: ObjectScanner | None = None
    name_parts: list[str] = field(default_factory=list)
    name: str | None = None
    arguments_key: str | None = None
    arguments_parts: list[str] = field(default_factory=list)
    arguments_as_string: list[str] | None = None
    arguments_done: bool = False
    pending: list[str] = field(default_factory=list)  # argument text read before the name
    value: ValueScanner | None = None  # DeepSeek: the arguments value
    after_value: list[str] = field(default_factory=list)
    index: int | None = None
    id: str | None = None
    rejected: str | None = None
    error: str | None = None
    parsed: Any = None  # the arguments' value, when the scanner decoded it whole
    has_parsed: bool = False


class AssistantAssembler:
    """Builds one assistant message from the engine's pieces of the ``completion`` rule.

    Shared by ``StreamParser`` (a completion) and the transcript reader (each assistant turn
    of a rendered conversation), so both read assistant turns with the same code.
    """

    def __init__(
        self,
        family: Family,
        *,
        tools: Iterable[str] | None = None,
        strict: bool = False,
        base: int = 0,
    ) -> None:
        self.family = family
        self._tool_names = frozenset(tools) if tools is not None else None
        self._strict = strict
        # Text arrives in many small pieces; ``compact`` joins them into blocks, so that a long
        # stream of tiny deltas keeps about its characters, not a list entry per delta.
        self._content: list[str] = []
        self._content_blocks: list[str] = []
        self._reasoning: list[str] = []
        self._reasoning_blocks: list[str] = []
        # LEADING text: reasoning if a reasoning close tag follows it, else content.
        self._undecided: list[Piece] = []
        self._in_reasoning = False
        self._ended = False
        self._calls: list[_Call] = []  # accepted calls, in order
        self._call: _Call | None = None
        self._spans: list[Span] = []
        self._open_span: list[Any] | None = None
        self._diagnostics: list[Diagnostic] = []
        self._events: list[Event] = []
        self._finish: FinishReason | None = None
        self._stray_reported_at = -1
        self._stray_run_start = 0
        self._base = base
        self.silent = False

    def start_after_prefill(self, base: int) -> None:
        """Forget what the prompt's prefill produced; positions now count from ``base``."""
        self._events.clear()
        self._content.clear()
        self._content_blocks.clear()
        self._reasoning.clear()
        self._reasoning_blocks.clear()
        self._spans.clear()
        self._open_span = None
        self._base = base

    @property
    def in_reasoning(self) -> bool:
        return self._in_reasoning

    @property
    def ended(self) -> bool:
        return self._ended

    def handle(self, pieces: Iterable[Piece]) -> list[Event]:
        for piece in pieces:
            kind = piece.kind
            if kind == "CONTENT" and piece.stray_delimiter is None and not self.silent:
                # The hot path of streaming: a delta of visible text.
                text = piece.text
                self._content.append(text)
                self._span("content", piece.start, piece.start + len(text))
                self._events.append(ContentDelta(text))
            elif kind == "REASONING" and piece.stray_delimiter is None and not self.silent:
                text = piece.text
                self._reasoning.append(text)
                self._span("reasoning", piece.start, piece.start + len(text))
                self._events.append(ReasoningDelta(text))
            else:
                self._handle(piece)
        return self._take_events()

    def compact(self) -> None:
        """Join the text pieces gathered so far (called every BLOCK deltas, so linear)."""
        if self._content:
            self._content_blocks.append("".join(self._content))
            self._content.clear()
        if self._reasoning:
            self._reasoning_blocks.append("".join(self._reasoning))
            self._reasoning.clear()

    def finish(self, *, cut_short: bool = False) -> list[Event]:
        """The text ended: settle an open tool call, decide the finish reason.

        ``cut_short``: the grammar says the text ended inside a block it requires closing.
        """
        if self._finish is not None:
            return []
        self._decide_leading(as_reasoning=False)
        reason: FinishReason
        if self._call is not None:
            call = self._call
            self._call = None
            self._diagnose("unclosed_tool_call", call.start, "the text ends inside a tool call")
            self._finish_call(call, closed=False)
            reason = "length"
        elif (self._in_reasoning or cut_short) and not self._ended:
            reason = "length"
        elif self._calls:
            reason = "tool_calls"
        else:
            reason = "stop"
        self._finish = reason
        self._events.append(Finish(reason))
        return self._take_events()

    @property
    def finish_reason(self) -> FinishReason | None:
        return self._finish

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)

    @property
    def spans(self) -> list[Span]:
        spans = list(self._spans)
        if self._open_span is not None:
            kind, start, end, index = self._open_span
            spans.append(Span(kind, start, end, None, index))
        return spans

    @property
    def message(self) -> Message:
        """The assistant message as read so far."""
        content = "".join([*self._content_blocks, *self._content])
        reasoning = "".join([*self._reasoning_blocks, *self._reasoning])
        tool_calls = [
            ToolCall.model_construct(
                id=call.id,
                type="function",
                function=FunctionCall.model_construct(
                    name=call.name or "", arguments="".join(call.arguments_parts) or "{}"
                ),
            )
            for call in self._calls
            if call.index is not None
        ]
        return Message.model_construct(
            role="assistant",
            content=content if content or not tool_calls else None,
            reasoning_content=reasoning or None,
            tool_calls=tool_calls or None,
            tool_call_id=None,
            name=None,
        )

    # -- pieces -> events --------------------------------------------------------------------

    def _take_events(self) -> list[Event]:
        events = self._events
        self._events = []
        return events

    def _emit(self, event: Event) -> None:
        if not self.silent:
            self._events.append(event)

    def _diagnose(self, kind: str, position: int, message: str) -> None:
        if self.silent:
            return
        position -= self._base
        diagnostic = Diagnostic(kind, position, message)
        if self._strict:
            raise ParseError(message, kind=kind, position=position)
        self._diagnostics.append(diagnostic)
        self._events.append(diagnostic)

    def _span(self, kind: str, start: int, end: int, name: str | None = None, index: int | None = None) -> None:
        if self.silent or end <= start:
            return
        start -= self._base
        end -= self._base
        # The span being extended is kept mutable; a run of deltas grows it in place.
        current = self._open_span
        if name is None and current is not None and current[0] == kind and current[3] == index and current[2] == start:
            current[2] = end
            return
        if current is not None:
            self._spans.append(Span(current[0], current[1], current[2], None, current[3]))
            self._open_span = None
        if name is None:
            self._open_span = [kind, start, end, index]
        else:
            self._spans.append(Span(kind, start, end, name, index))

    def _decide_leading(self, *, as_reasoning: bool) -> None:
        """Text read before it could be told apart is now known to be reasoning or content."""
        pieces, self._undecided = self._undecided, []
        for piece in pieces:
            if as_reasoning:
                self._reasoning.append(piece.text)
                self._span("reasoning", piece.start, piece.end)
                self._emit(ReasoningDelta(piece.text))
            else:
                self._content.append(piece.text)
                self._span("content", piece.start, piece.end)
                self._emit(ContentDelta(piece.text))

    def _handle(self, piece: Piece) -> None:
        family = self.family
        call = self._call
        if piece.kind == "LEADING":
            self._undecided.append(piece)
            return
        if piece.delimiter and self._undecided:
            self._decide_leading(as_reasoning=piece.kind in family.reasoning_close)
        if piece.delimiter:
            kind = piece.kind
            if call is not None:
                call.raw.append(piece.text)
                call.spans.append(("delimiter", piece.start, piece.end, kind))
                if kind in family.call_close:
                    self._call = None
                    self._finish_call(call, closed=True)
                elif kind == "CALL_SEP":
                    self._name_complete(call, "".join(call.name_parts).strip(), piece.start)
                return
            if kind in family.call_open:
                if self._in_reasoning:
                    self._in_reasoning = False
                    self._diagnose(
                        "tool_call_in_reasoning", piece.start, "a tool call starts inside an unclosed reasoning block"
                    )
                self._call = _Call(start=piece.start, raw=[piece.text])
                self._call.spans.append(("delimiter", piece.start, piece.end, kind))
                if family.call_body == "object":
                    self._call.scanner = ObjectScanner()
                return
            self._span("delimiter", piece.start, piece.end, kind)
            if kind in family.reasoning_open:
                self._in_reasoning = True
                self._reasoning_seen = True
            elif kind in family.reasoning_close:
                self._in_reasoning = False
            elif kind in family.end:
                if self._in_reasoning:
                    self._in_reasoning = False
                    self._diagnose("unclosed_reasoning", piece.start, "the message ends inside a reasoning block")
                self._ended = True
            return
        if piece.stray_delimiter is not None and piece.kind in ("CONTENT", "REASONING"):
            self._diagnose(
                "stray_delimiter",
                piece.start,
                f"{piece.text!r} ({piece.stray_delimiter}) is not allowed here; kept as text",
            )
        if piece.kind == "REASONING":
            self._reasoning.append(piece.text)
            self._span("reasoning", piece.start, piece.end)
            self._emit(ReasoningDelta(piece.text))
        elif piece.kind == "CONTENT":
            self._content.append(piece.text)
            self._span("content", piece.start, piece.end)
            self._emit(ContentDelta(piece.text))
        elif call is not None:
            call.raw.append(piece.text)
            call.spans.append(("tool_call", piece.start, piece.end, None))
            if piece.kind == "TOOL_CALL":
                self._read_object_body(call, piece.text, piece.start)
            elif piece.kind == "TOOL_NAME":
                call.name_parts.append(piece.text)
            elif piece.kind == "TOOL_ARGUMENTS":
                self._read_arguments_body(call, piece.text)
        else:
            self._span("unparsed", piece.start, piece.end)
            if piece.run_start:
                self._stray_run_start = piece.start
            if piece.kind == STRAY and piece.text.strip() and self._stray_reported_at < 0:
                # Reported once, where the run of such text begins (whatever the chunking).
                self._stray_reported_at = self._stray_run_start
                where = "after the end of the message" if self._ended else "where the format has no place for text"
                self._diagnose("unexpected_text", self._stray_run_start, f"text {where}; kept as an unparsed span")

    # -- tool calls --------------------------------------------------------------------------

    def _read_object_body(self, call: _Call, text: str, position: int) -> None:
        scanner = call.scanner
        assert scanner is not None
        if scanner.error is not None:
            return
        for event in scanner.feed(text):
            if event.kind == "key":
                if event.key in ARGUMENT_KEYS and call.arguments_key is None:
                    call.arguments_key = event.key
            elif event.key == "name" and call.name is None:
                if event.kind == "value_text":
                    call.name_parts.append(event.text)
                else:
                    try:
                        name = json.loads("".join(call.name_parts))
                    except json.JSONDecodeError:
                        name = None
                    if not isinstance(name, str):
                        call.error = "the tool call's name is not a string"
                        call.name = ""
                    else:
                        self._name_complete(call, name, position)
            elif event.key == call.arguments_key and not call.arguments_done:
                if event.kind == "value_text":
                    if call.arguments_as_string is None and not call.arguments_parts and not call.pending:
                        if event.text.startswith('"'):
                            call.arguments_as_string = []
                    if call.arguments_as_string is not None:
                        call.arguments_as_string.append(event.text)
                    else:
                        self._arguments_text(call, event.text)
                else:
                    call.arguments_done = True
                    if call.arguments_as_string is not None:
                        self._string_arguments(call)
                    elif event.value is not None and event.value.has_parsed:
                        call.parsed = event.value.parsed
                        call.has_parsed = True
        if scanner.error is not None and call.error is None:
            call.error = scanner.error

    def _string_arguments(self, call: _Call) -> None:
        # "arguments": "{\"city\": \"Paris\"}" -- the JSON text is the string's value.
        raw = "".join(call.arguments_as_string or [])
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            decoded = raw
        self._arguments_text(call, decoded if isinstance(decoded, str) else raw)

    def _read_arguments_body(self, call: _Call, text: str) -> None:
        pos = 0
        if call.value is None:
            stripped = text.lstrip()
            if not stripped:
                if call.arguments_parts or call.pending:
                    call.after_value.append(text)
                return
            pos = len(text) - len(stripped)
            call.value = ValueScanner()
        if call.value.done:
            call.after_value.append(text[pos:])
            return
        end = call.value.feed(text, pos)
        if end is None:
            self._arguments_text(call, text[pos:])
            return
        self._arguments_text(call, text[pos:end])
        call.arguments_done = True
        call.after_value.append(text[end:])
        if call.value.has_parsed:
            call.parsed = call.value.parsed
            call.has_parsed = True

    def _arguments_text(self, call: _Call, text: str) -> None:
        if not text:
            return
        if call.index is None:
            call.pending.append(text)
            return
        call.arguments_parts.append(text)
        self._emit(ToolCallArgumentsDelta(call.index, text))

    def _name_complete(self, call: _Call, name: str, position: int) -> None:
        call.name = name
        if not name:
            call.error = "the tool call has an empty name"
            return
        if self._tool_names is not None and name not in self._tool_names:
            call.rejected = f"unknown tool {name!r}"
            return
        call.index = len(self._calls)
        call.id = new_tool_call_id()
        self._calls.append(call)
        self._emit(ToolCallStart(call.index, call.id, name))
        pending, call.pending = call.pending, []
        if pending:
            self._arguments_text(call, "".join(pending))

    def _finish_call(self, call: _Call, *, closed: bool) -> None:
        if call.index is None:
            self._call_as_content(call)
            return
        if call.scanner is not None and not call.scanner.complete and call.error is None and closed:
            call.error = "the tool call's JSON object is incomplete"
        if call.after_value and "".join(call.after_value).strip():
            call.error = call.error or "text after the arguments"
        if not call.arguments_parts:
            self._arguments_text(call, "{}")
        arguments = "".join(call.arguments_parts)
        parsed: Any = call.parsed
        if not call.has_parsed:
            try:
                parsed = json.loads(arguments)
            except (json.JSONDecodeError, RecursionError):
                parsed = None
                call.error = call.error or "the arguments are not valid JSON"
        if call.error is not None and closed:
            self._diagnose("malformed_tool_call", call.start, f"tool call {call.index}: {call.error}")
        for kind, start, end, name in call.spans:
            self._span(kind, start, end, name, None if kind == "delimiter" else call.index)
        self._emit(ToolCallEnd(call.index, arguments, parsed))
        # Keep what the message needs; the reading state of a finished call is garbage.
        call.arguments_parts = [arguments]
        call.raw, call.spans, call.name_parts, call.pending, call.after_value = [], [], [], [], []
        call.scanner = None
        call.value = None
        call.parsed = None

    def _call_as_content(self, call: _Call) -> None:
        """A block that never became a tool call (bad JSON, no name, unknown tool) is content."""
        if call.rejected is not None:
            self._diagnose("unknown_tool", call.start, f"{call.rejected}; the block is kept as content")
        else:
            reason = call.error or "no tool name was found"
            self._diagnose("malformed_tool_call", call.start, f"{reason}; the block is kept as content")
        text = "".join(call.raw)
        self._content.append(text)
        for _, start, end, _ in call.spans:
            self._span("content", start, end)
        self._emit(ContentDelta(text))


class StreamParser:
    """Reads one assistant completion for a family, incrementally: ``feed(text) -> events``,
    ``close() -> events``; ``message`` is the message so far."""

    def __init__(
        self,
        family: Family,
        *,
        prefill: str = "",
        tools: Iterable[str] | None = None,
        strict: bool = False,
        start: str = "completion",
    ) -> None:
        self.family = family
        self._engine = Engine(family.grammar, start)
        self._assembler = AssistantAssembler(family, tools=tools, strict=strict)
        self._chunks: list[str] = []
        self._chunk_blocks: list[str] = []  # every BLOCK chunks, joined
        self._closed = False
        if prefill:
            # The prompt's own opening of the assistant turn (``<think>``, a prefill): it sets
            # the state but is not part of the completion.
            self._assembler.silent = True
            self._assembler.handle(self._engine.feed(prefill) + self._engine.settle())
            self._assembler.silent = False
            self._assembler.start_after_prefill(self._engine.position)

    def feed(self, text: str) -> list[Event]:
        if self._closed:
            raise ValueError("feed() after close()")
        chunks = self._chunks
        chunks.append(text)
        if len(chunks) >= BLOCK:
            self._chunk_blocks.append("".join(chunks))
            chunks.clear()
            self._assembler.compact()
        return self._assembler.handle(self._engine.feed(text))

    def close(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        events = self._assembler.handle(self._engine.close())
        return events + self._assembler.finish(cut_short=not self._engine.accepts_end())

    @property
    def finish_reason(self) -> FinishReason | None:
        return self._assembler.finish_reason

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._assembler.diagnostics

    @property
    def message(self) -> Message:
        """The assistant message as read so far (complete after ``close()``)."""
        return self._assembler.message

    def result(self) -> ParseResult:
        reason = self._assembler.finish_reason
        if reason is None:
            raise ValueError("result() before close()")
        return ParseResult(
            message=self.message,
            finish_reason=reason,
            diagnostics=self._assembler.diagnostics,
            spans=self._assembler.spans,
            text="".join([*self._chunk_blocks, *self._chunks]),
        )
