"""Reading tool-call blocks: names, raw argument text as it streams, and what becomes of a
block that is not a valid call.

``ToolCallReading`` is mixed into ``AssistantAssembler``; it emits through the assembler's
``_emit``, ``_diagnose`` and ``_span``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chatcodec.events import ContentDelta, Event, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.parse.json_scan import ObjectScanner, ValueScanner
from chatcodec.messages import new_tool_call_id

ARGUMENT_KEYS = ("arguments", "parameters")  # some models write Llama's "parameters"


@dataclass
class ToolCallBlock:
    """A tool-call block being read: its text, and what has been read of its name and arguments."""

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


class ToolCallReading:
    """The tool-call half of ``AssistantAssembler``."""

    _tool_names: frozenset[str] | None
    _calls: list[ToolCallBlock]
    _content: list[str]

    def _emit(self, event: Event) -> None:
        raise NotImplementedError

    def _diagnose(self, kind: str, position: int, message: str) -> None:
        raise NotImplementedError

    def _span(self, kind: str, start: int, end: int, name: str | None = None, index: int | None = None) -> None:
        raise NotImplementedError

    def _read_object_body(self, call: ToolCallBlock, text: str, position: int) -> None:
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

    def _string_arguments(self, call: ToolCallBlock) -> None:
        # "arguments": "{\"city\": \"Paris\"}" -- the JSON text is the string's value.
        raw = "".join(call.arguments_as_string or [])
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            decoded = raw
        self._arguments_text(call, decoded if isinstance(decoded, str) else raw)

    def _read_arguments_body(self, call: ToolCallBlock, text: str) -> None:
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

    def _arguments_text(self, call: ToolCallBlock, text: str) -> None:
        if not text:
            return
        if call.index is None:
            call.pending.append(text)
            return
        call.arguments_parts.append(text)
        self._emit(ToolCallArgumentsDelta(call.index, text))

    def _name_complete(self, call: ToolCallBlock, name: str, position: int) -> None:
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

    def _finish_call(self, call: ToolCallBlock, *, closed: bool) -> None:
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

    def _call_as_content(self, call: ToolCallBlock) -> None:
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
