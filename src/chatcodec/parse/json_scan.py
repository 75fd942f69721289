"""Incremental JSON scanning for tool-call bodies.

Tool-call arguments must stream as raw fragments of exactly the text the model wrote, so the
scanner never re-serializes: it finds where values start and end and hands back slices of the
input. It keeps no text of its own beyond the current member's key, examines each character at
most a bounded number of times, and uses no recursion (100,000 nested brackets are just a
counter). When a whole value is already present (one-shot parsing), the C JSON decoder finds its
end in one call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_decoder = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_STRUCTURE = re.compile(r'["{}\[\]]')
_STRING_SPECIAL = re.compile(r'["\\]')
_SCALAR_END = re.compile(r"[,}\]\s]")


class ValueScanner:
    """Finds the end of one JSON value fed in pieces (the first piece starts at the value)."""

    __slots__ = ("depth", "done", "escaped", "has_parsed", "in_string", "mode", "parsed")

    def __init__(self) -> None:
        self.mode = ""  # "container", "string" or "scalar", set by the first character
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.done = False
        # The decoded value, when the C decoder read it whole (saves decoding it again).
        self.parsed: object = None
        self.has_parsed = False

    def feed(self, text: str, pos: int) -> int | None:
        """Scan ``text`` from ``pos``; return the index just past the value, or None (need more)."""
        if not self.mode:
            first = text[pos]
            if first in "{[":
                self.mode = "container"
            elif first == '"':
                self.mode = "string"
            else:
                self.mode = "scalar"
            # One-shot fast path: the C decoder, when the whole value is already here.
            decoded = _try_decode(text, pos, self_delimiting=self.mode != "scalar")
            if decoded is not None:
                self.done = True
                self.parsed, end = decoded
                self.has_parsed = True
                return end
            if self.mode == "string":
                self.in_string = True
                pos += 1
            elif self.mode == "container":
                self.depth = 1
                pos += 1
        if self.mode == "scalar":
            match = _SCALAR_END.search(text, pos)
            if match is None:
                return None
            self.done = True
            return match.start()
        return self._scan_nested(text, pos)

    def _scan_nested(self, text: str, pos: int) -> int | None:
        stop = len(text)
        while pos < stop:
            if self.escaped:
                self.escaped = False
                pos += 1
                continue
            if self.in_string:
                special = _STRING_SPECIAL.search(text, pos)
                if special is None:
                    return None
                pos = special.end()
                if special.group() == "\\":
                    self.escaped = True
                    continue
                self.in_string = False
                if self.mode == "string":
                    self.done = True
                    return pos
                continue
            structure = _STRUCTURE.search(text, pos)
            if structure is None:
                return None
            pos = structure.end()
            char = structure.group()
            if char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    self.done = True
                    return pos
        return None


def _try_decode(text: str, pos: int, *, self_delimiting: bool) -> tuple[object, int] | None:
    try:
        value, end = _decoder.raw_decode(text, pos)
    except (json.JSONDecodeError, RecursionError):
        return None
    # A number at the very end of the text may still grow ("12" then "3").
    if not self_delimiting and end >= len(text):
        return None
    return value, end


@dataclass
class MemberEvent:
    """Something the object scanner found: a value starting, a slice of it, or its end."""

    kind: str  # "key", "value_text", "value_end"
    key: str
    text: str = ""
    value: ValueScanner | None = None  # on "value_end": the finished scanner


@dataclass
class ObjectScanner:
    """Walks the top level of one JSON object fed in pieces: ``{"name": ..., "arguments": ...}``.

    For each member it reports the key, then slices of the value's raw text as they arrive, then
    the value's end. Anything that is not a JSON object sets ``error`` and stops the walk.
    """

    state: str = "before_object"
    error: str | None = None
    key_parts: list[str] = field(default_factory=list)
    key: str = ""
    key_escaped: bool = False
    value: ValueScanner | None = None
    consumed: int = 0  # characters fed so far (for error positions)

    def feed(self, text: str) -> list[MemberEvent]:
        events: list[MemberEvent] = []
        pos = 0
        stop = len(text)
        while pos < stop and self.error is None:
            state = self.state
            if state == "value":
                assert self.value is not None
                end = self.value.feed(text, pos)
                if end is None:
                    events.append(MemberEvent("value_text", self.key, text[pos:]))
                    pos = stop
                    break
                if end > pos:
                    events.append(MemberEvent("value_text", self.key, text[pos:end]))
                events.append(MemberEvent("value_end", self.key, value=self.value))
                self.value = None
                self.state = "after_value"
                pos = end
                continue
            if state == "key":
                if self.key_escaped:
                    self.key_parts.append(text[pos])
                    self.key_escaped = False
                    pos += 1
                    continue
                special = _STRING_SPECIAL.search(text, pos)
                if special is None:
                    self.key_parts.append(text[pos:])
                    pos = stop
                    break
                if special.group() == "\\":
                    self.key_parts.append(text[pos : special.end()])
                    self.key_escaped = True
                    pos = special.end()
                    continue
                self.key_parts.append(text[pos : special.start()])
                pos = special.end()
                raw = "".join(self.key_parts)
                self.key_parts = []
                try:
                    self.key = json.loads('"' + raw + '"')
                except json.JSONDecodeError:
                    self._fail(pos, "invalid key string")
                    break
                events.append(MemberEvent("key", self.key))
                self.state = "colon"
                continue
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= stop:
                break
            char = text[pos]
            if state == "before_object":
                if char != "{":
                    self._fail(pos, "a tool call must be a JSON object")
                    break
                self.state = "before_key"
            elif state == "before_key":
                if char == '"':
                    self.state = "key"
                elif char == "}":
                    self.state = "done"
                else:
                    self._fail(pos, "expected a member name")
                    break
            elif state == "colon":
                if char != ":":
                    self._fail(pos, "expected ':' after a member name")
                    break
                self.state = "before_value"
            elif state == "before_value":
                self.value = ValueScanner()
                self.state = "value"
                continue  # the value's first character is scanned by the value scanner
            elif state == "after_value":
                if char == ",":
                    self.state = "before_key"
                elif char == "}":
                    self.state = "done"
                else:
                    self._fail(pos, "expected ',' or '}' after a value")
                    break
            elif state == "done":
                self._fail(pos, "text after the JSON object")
                break
            pos += 1
        self.consumed += stop
        return events

    def _fail(self, pos: int, message: str) -> None:
        self.error = f"{message} (character {self.consumed + pos} of the call)"

    @property
    def complete(self) -> bool:
        return self.state == "done" and self.error is None

