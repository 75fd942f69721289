"""Readers of a tool call's body, one per call shape. A call syntax names its reader.

A reader is told each piece of text inside a call block and each delimiter inside it (not the
ones that open and close the block), and reports the function's name and the raw fragments of
the arguments to ``ToolCalls``. Arguments stay the model's own text: a reader slices, it never
re-serializes.
"""

from __future__ import annotations

import json

from chatcodec.parse.engine import Piece
from chatcodec.parse.json_scan import ValueScanner
from chatcodec.parse.toolcalls import ToolCallBlock, ToolCalls

ARGUMENT_KEYS = ("arguments", "parameters")  # some models write Llama's "parameters"


class CallReader:
    """Reads the body of one call shape."""

    def __init__(self, calls: ToolCalls) -> None:
        self.calls = calls

    def open(self, call: ToolCallBlock) -> None:
        """A call block opened."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        raise NotImplementedError

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        """A delimiter inside the block (a separator between name and arguments)."""


class JsonObjectReader(CallReader):
    """``{"name": "f", "arguments": {...}}``: one JSON object per call (Hermes). The members come
    from the engine's walk of the body."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is None:
            return
        call.walk = walk
        calls = self.calls
        for event in walk.take():
            if event.kind == "key":
                if event.key in ARGUMENT_KEYS and call.arguments_key is None:
                    call.arguments_key = event.key
            elif event.key == "name" and call.name is None:
                if event.kind == "value_text":
                    call.name_parts.append(event.text)
                else:
                    name = _string_value(call.name_parts, event.value)
                    if not isinstance(name, str):
                        call.error = "the tool call's name is not a string"
                        call.name = ""
                    else:
                        calls.name_complete(call, name, piece.start)
            elif event.key == call.arguments_key and not call.arguments_done:
                if event.kind == "value_text":
                    if call.arguments_as_string is None and not call.arguments_parts and not call.pending:
                        if event.text.startswith('"'):
                            call.arguments_as_string = []
                    if call.arguments_as_string is not None:
                        call.arguments_as_string.append(event.text)
                    else:
                        calls.arguments_text(call, event.text)
                else:
                    call.arguments_done = True
                    if call.arguments_as_string is not None:
                        self._string_arguments(call)
                    elif event.value is not None and event.value.has_parsed:
                        call.parsed = event.value.parsed
                        call.has_parsed = True
        if walk.error is not None and call.error is None:
            call.error = walk.error

    def _string_arguments(self, call: ToolCallBlock) -> None:
        # "arguments": "{\"city\": \"Paris\"}" -- the JSON text is the string's value.
        raw = "".join(call.arguments_as_string or [])
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            decoded = raw
        self.calls.arguments_text(call, decoded if isinstance(decoded, str) else raw)


class NameThenArgumentsReader(CallReader):
    """``NAME <separator> {...}``: the name as text, then the arguments JSON (DeepSeek)."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "TOOL_NAME":
            call.name_parts.append(piece.text)
        elif piece.kind == "TOOL_ARGUMENTS":
            self._arguments(call, piece)

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        if call.name is None:
            self.calls.name_complete(call, "".join(call.name_parts).strip(), piece.start)

    def _arguments(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is None:
            return
        call.walk = walk
        for event in walk.take():
            if event.kind == "value_text":
                self.calls.arguments_text(call, event.text)
            elif event.kind == "value_end":
                call.arguments_done = True
                if event.value is not None and event.value.has_parsed:
                    call.parsed = event.value.parsed
                    call.has_parsed = True
        end = walk.value_end
        if 0 <= end < piece.end:
            # Text after the arguments' value (its own whitespace aside) is not part of them.
            call.after_value.append(piece.text[max(0, end - piece.start) :])


def _string_value(parts: list[str], value: ValueScanner | None) -> object:
    """The decoded value of a member (as the walk decoded it, else from its raw text)."""
    if value is not None and value.has_parsed:
        return value.parsed
    try:
        return json.loads("".join(parts))
    except json.JSONDecodeError:
        return None


READERS: dict[str, type[CallReader]] = {
    "json_object": JsonObjectReader,
    "name_then_arguments": NameThenArgumentsReader,
}
