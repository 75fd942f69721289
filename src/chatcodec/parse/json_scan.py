"""One incremental JSON scan per JSON body, shared by the lexer and the call readers.

A tool call's body (``{"name": ..., "arguments": ...}``, a list of such objects, or an arguments
value after a separator) is scanned once, by a ``JsonWalk`` the engine owns:

* the lexer asks it whether a position lies inside the JSON, so that a delimiter spelled inside a
  string (``"<tool_call>"`` quoted in an argument) stays text;
* the call readers take the members it found: each key, raw slices of each value as they
  arrive, and the value's end (with its decoded value when the C decoder read it whole).

Arguments must stream as raw fragments of exactly the text the model wrote, so nothing is ever
re-serialized: values are slices of the input. Each character is examined a bounded number of
times, and nothing recurses (100,000 nested brackets are a counter). When a whole value is
already present (one-shot parsing, a large delta), the C decoder reads it in one call and its
decoded value is kept, so no reader decodes it again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from pydantic_core import SchemaValidator, core_schema



def _refuse_constant(name: str) -> object:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


# Python's json module reads NaN, Infinity and -Infinity, which JSON has not: a call's arguments
# holding them would be no JSON to any other reader.
_decoder = STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (_INFINITY, -_INFINITY):
        raise ValueError(f"{literal} is too large for a float")  # (it would be written Infinity)
    return value


_INFINITY = float("inf")
# As strict, and every number a float holds: what ``json.dumps`` writes back as the same JSON.
FINITE_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant)


# As strict, but a string may hold control characters as they are (a raw newline): a model
# writing multi-line code into a list or an object of an XML parameter writes them so.
CONTROL_CHARACTERS_DECODER = json.JSONDecoder(strict=False, parse_constant=_refuse_constant)


def loads_json(text: str) -> object:
    """``text`` as JSON, strictly (NaN and Infinity refused with a ``ValueError``)."""
    return _decoder.decode(text)


# What a JSON literal or number cut short may end with (``tru``, ``-1.``, ``2e+``).
_CUT_SHORT_ATOM = re.compile(r"t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?|-?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]*)?")


def first_wrong_character(text: str) -> int | None:
    """Where text stops being the start of any JSON value (``foo`` at 0, ``{"a": 1 x`` at 8),
    or None where more text could make it JSON (it was cut short)."""
    try:
        STRICT_DECODER.decode(text)
        return None
    except json.JSONDecodeError as exc:
        if exc.doc is not text:  # (NaN or Infinity, which the strict decoder refuses)
            return max(text.find(exc.doc), 0)
        rest = text[exc.pos :].rstrip()
        if not rest or exc.msg.startswith("Unterminated string") or _CUT_SHORT_ATOM.fullmatch(rest):
            return None
        return exc.pos
    except (ValueError, RecursionError):
        return None


def dumps_finite(value: object) -> str | None:
    """``value`` as JSON text (see ``dumps_text``); None where it holds a number JSON cannot
    write (an infinite float, from a number too large such as ``1e999``, or NaN), or is nested
    too deep to write from here (a value decoded higher up the stack, a few levels short of the
    limit)."""
    try:
        return _escape_lone_surrogates(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (ValueError, RecursionError):
        return None


def dumps_text(value: object) -> str:
    """``value`` as JSON text, its characters written as themselves, except a lone surrogate:
    decoded from an escape the model wrote (``"\\ud800"``), it is no character UTF-8 can carry,
    and a message holding it could not be sent; it is written back as the escape."""
    return _escape_lone_surrogates(json.dumps(value, ensure_ascii=False))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_lone_surrogates(text: str) -> str:
    # (Outside its strings JSON text is ASCII: every surrogate is inside a string.)
    if _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


_WS = re.compile(r"[ \t\n\r]*")
_STRUCTURE = re.compile(r'["{}\[\]]')
_CLOSING_BRACKET = re.compile(r"[}\]]")  # a character that may end a container
STRING_SPECIAL = re.compile(r'["\\]')  # (also the stream's test for more of a string)
_SCALAR_END = re.compile(r"[,}\]\s]")
# A JSON number or literal, whole.
JSON_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_ESCAPED_CHAR = re.compile(r"\\.", re.DOTALL)

# Characters a delimiter may be spelled with and still be JSON structure, not a string or a
# literal (whitespace, separators, brackets, numbers).
_STRUCTURAL = frozenset(" \t\n\r,:{}[]-+.0123456789")


def _structural(spelling: str) -> bool:
    return bool(spelling) and all(char in _STRUCTURAL for char in spelling)


_NESTED = ("container", "string")  # value modes scanned for quotes and brackets

Shape = Literal["object", "object_opened", "array", "array_opened", "value", "object_or_array", "objects", "objects_or_array"]


class ValueScanner:
    """Finds the end of one JSON value fed in pieces (the first piece starts at the value)."""

    __slots__ = ("depth", "done", "escaped", "has_parsed", "in_string", "mode", "parsed", "scalar")

    def __init__(self) -> None:
        self.mode = ""  # "container", "string" or "scalar", set by the first character
        self.scalar = ""  # a scalar's text so far (checked once it ends: ``tru``, ``Mk1`` are no JSON)
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.done = False
        # The decoded value, when the C decoder read it whole (saves decoding it again).
        self.parsed: object = None
        self.has_parsed = False

    def feed(self, text: str, pos: int, stop: int) -> int | None:
        """Scan ``text[pos:stop]``; return the index just past the value, or None (need more)."""
        if not self.mode:
            first = text[pos]
            if first in "{[":
                self.mode = "container"
            elif first == '"':
                self.mode = "string"
            else:
                self.mode = "scalar"
            # One-shot fast path: the C decoder, when the whole value is already here.
            # It may read past ``stop``: the whole value is decoded once, wherever it ends.
            # Not for a bare scalar: where ``1e+300x`` ends must not depend on whether the
            # text arrived at once, so the scan below decides for both.
            decoded = _try_decode(text, pos) if self.mode != "scalar" else None
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
            match = _SCALAR_END.search(text, pos, stop)
            if match is None:
                self.scalar += text[pos:stop]
                return None
            self.scalar += text[pos : match.start()]
            self.done = True
            return match.start()
        return self.continue_nested(text, pos, stop)

    def goes_on_with(self, text: str) -> bool:
        """Scan all of ``text`` as more of this container, if it does not end it; if it would,
        leave the scanner as it was and say so (the caller reads the text the general way)."""
        if self.mode != "container":
            return False
        if not self.in_string and _STRUCTURE.search(text) is None:
            return True  # (a number, a comma, a colon: nothing to scan for)
        if _CLOSING_BRACKET.search(text) is None:
            self.continue_nested(text, 0, len(text))  # (no bracket closes: it cannot end)
            return True
        depth, in_string, escaped = self.depth, self.in_string, self.escaped
        if self.continue_nested(text, 0, len(text)) is None:
            return True
        self.depth, self.in_string, self.escaped, self.done = depth, in_string, escaped, False
        return False

    def continue_nested(self, text: str, pos: int, stop: int) -> int | None:
        while pos < stop:
            if self.escaped:
                self.escaped = False
                pos += 1
                continue
            if self.in_string:
                special = STRING_SPECIAL.search(text, pos, stop)
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
            structure = _STRUCTURE.search(text, pos, stop)
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


_CLOSER = {"{": "}", "[": "]", '"': '"'}


def _try_decode(text: str, pos: int) -> tuple[object, int] | None:
    """A string or container read whole by the C decoder (it ends where its closing quote or
    bracket is, however the text arrived)."""
    if text.find(_CLOSER[text[pos]], pos + 1) < 0:
        return None  # not all here (a streamed delta): spare the decoder's exception
    try:
        return _decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


@dataclass(slots=True)
class MemberEvent:
    """What the walk found: a new element of a list, a member's key, a slice of its value's raw
    text, its end (``value`` holds the finished scanner, with the decoded value when the C
    decoder read it), the end of a list's element, or the end of the body's value (``end``)."""

    kind: str  # "element", "key", "value_text", "value_end", "element_end", "end"
    key: str = ""
    text: str = ""
    value: ValueScanner | None = None
    element: int = 0


class QuoteTracker:
    """Whether a position of JSON-ish text is inside a string literal, whatever the structure:
    what the walk falls back to once the body stops being JSON, so that delimiters quoted in
    strings stay text. A backslash outside a string escapes the next character, as the quote
    counting of one-shot parsing assumes; once the first top-level value is complete, a stray
    quote hides nothing."""

    __slots__ = ("depth", "escaped", "finished", "in_string")

    _in_string = re.compile(r'["\\]')
    _outside = re.compile(r'["{}\[\]\\]')

    def __init__(self, depth: int = 0) -> None:
        self.in_string = False
        self.escaped = False
        self.depth = depth
        self.finished = False

    def advance(self, text: str, start: int, stop: int) -> None:
        pos = start
        while pos < stop and not self.finished:
            if self.escaped:
                self.escaped = False
                pos += 1
                continue
            if self.in_string:
                special = self._in_string.search(text, pos, stop)
                if special is None:
                    break
                pos = special.end()
                if special.group() == "\\":
                    self.escaped = True
                else:
                    self.in_string = False
                    self.finished = self.depth == 0
                continue
            found = self._outside.search(text, pos, stop)
            if found is None:
                break
            pos = found.end()
            char = found.group()
            if char == '"':
                self.in_string = True
            elif char == "\\":
                self.escaped = True
            elif char in "{[":
                self.depth += 1
            elif self.depth > 0:
                self.depth -= 1
                self.finished = self.depth == 0


class JsonWalk:
    """The one scan of one JSON body (see the module docstring).

    Positions are absolute. ``scan(text, text_start, upto)`` examines the body's characters from
    where the walk stands to ``upto``, reading them from ``text`` (whose first character is at
    ``text_start``); each character is examined once, whoever asks first.
    """

    __slots__ = (
        "base",
        "pos",
        "shape",
        "state",
        "error",
        "events",
        "record",
        "key",
        "_key_parts",
        "_key_escaped",
        "_value",
        "_element",
        "_tracker",
        "_jump_start",
        "_jump_end",
        "_value_end",
        "stray_at",
        "failed_at",
        "member_at",
        "broken_member_at",
        "examined",
        "element_spans",
    )

    def __init__(self, base: int, shape: Shape, *, record: bool = True) -> None:
        self.base = base
        self.pos = base  # absolute position of the first character not examined yet
        self.shape = "object" if shape == "object_opened" else "array" if shape == "array_opened" else shape
        # A body whose opening brace or bracket belongs to the delimiter before it.
        self.state = {"object_opened": "member?", "array_opened": "element?"}.get(shape, "start")
        self.error: str | None = None
        self.events: list[MemberEvent] = []
        self.record = record
        self.key = ""
        self._key_parts: list[str] = []
        self._key_escaped = False
        self._value: ValueScanner | None = None
        self._element = -1
        self._tracker: QuoteTracker | None = None  # after an error
        # The last value the C decoder read whole: positions inside it are inside the JSON.
        self._jump_start = -1
        self._jump_end = -1
        self._value_end = -1
        # Where a list's text stops being its elements: a whole element followed by something
        # other than ``,`` or ``]`` (-1 otherwise). The elements before it are whole calls.
        self.stray_at = -1
        self.failed_at = -1  # where the text stopped being JSON (-1: it has not)
        # Where the member being read began (its key's quote), and, once the text stopped
        # being JSON, where the member it stopped in began (the failure itself, between members).
        self.member_at = -1
        self.broken_member_at = -1
        self.examined = 0  # characters examined (for tests that count work)
        # Where each element of a list starts and ends (-1 until it does), and where its second
        # member starts (-1 if none did): a call the reader cannot take, or the part of an
        # element that is no part of its call, is given back as the text it was.
        self.element_spans: list[list[int]] = []

    @property
    def complete(self) -> bool:
        """The body's whole value was read (objects one after another: each that began)."""
        return self.state == "done" or (self.shape == "objects" and self.state == "after_element")

    @property
    def finished(self) -> bool:
        """The body was read as far as it is JSON: its whole value, or a list's whole elements
        followed by text that continues no list (``stray_at``)."""
        return self.complete or self.stray_at >= 0

    @property
    def json_end(self) -> int:
        """Where the text the walk has read as JSON ends (the body's start before it read any)."""
        return self.pos if self._value_end < 0 else min(self.pos, self._value_end)

    @property
    def value_end(self) -> int:
        """Where the body's value ends, once read (-1 before)."""
        return self._value_end

    def read_whole_until(self, at: int) -> int:
        """Where the value the C decoder read whole around absolute ``at`` ends (``at`` when no
        such value covers it): inside it, a delimiter is text, wherever it starts."""
        return self._jump_end if self._jump_start <= at < self._jump_end else at

    def take(self) -> list[MemberEvent]:
        events = self.events
        self.events = []
        return events

    def inside(self, text: str, text_start: int, at: int, json_safe: bool, spelling: str = "") -> bool:
        """Is a delimiter spelled ``spelling`` at absolute ``at`` inside the body's JSON: in a
        string literal, in a value the C decoder read whole (where a delimiter can only be in a
        string), or within a container it continues (``", "`` between two members)?"""
        if self._jump_start <= at < self._jump_end:
            if json_safe:
                return True
            if self._jump_start < at and at + len(spelling) < self._jump_end and _structural(spelling):
                return True  # the value read whole holds it, and it is no string: structure
            return _odd_quotes(text, self._jump_start - text_start, at - text_start)
        if at > self.pos:
            self.scan(text, text_start, at)
            if self._jump_start <= at < self._jump_end:  # a value read whole covers it
                return self.inside(text, text_start, at, json_safe, spelling)
        if 0 <= self._value_end <= at:
            return False
        return self._in_string_now() or (bool(spelling) and self._continues_container(spelling))

    def _continues_container(self, spelling: str) -> bool:
        """Would ``spelling`` continue the JSON being read, without closing the body?"""
        if self.error is not None or not _structural(spelling):
            return False
        if self.shape == "objects":
            depth = 0 if self.state in ("start", "element?", "after_element", "next_element") else 1
        else:
            depth = 1 if self.shape in ("object", "array") and self.state not in ("start", "done") else 0
        value = self._value
        if value is not None:
            if value.in_string or value.escaped:
                return False
            if value.mode == "container":
                depth += value.depth
        if depth <= 0:
            return False
        for char in spelling:
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth <= 0:
                    return False
        return True

    def _in_string_now(self) -> bool:
        if self._tracker is not None:
            return self._tracker.in_string or self._tracker.escaped
        if self.state == "key":
            return True
        value = self._value
        return value is not None and self.state == "value" and (value.in_string or value.escaped)

    # -- scanning -------------------------------------------------------------------------------

    def scan(self, text: str, text_start: int, upto: int) -> None:
        """Examine the body up to absolute ``upto`` (characters of ``text``). A value the C
        decoder reads whole may take the walk past ``upto``."""
        key = self.continue_value(text, text_start, upto)
        if key is not None:
            self.hand_back(key, text[: upto - text_start])

    def continue_value(self, text: str, text_start: int, upto: int) -> str | None:
        """``scan``, except where all of ``text`` (which starts where the walk stands) goes on
        with the string or container being read, without ending it: that is the common
        streaming delta, and the member's key is returned with no event recorded (the caller
        hands the text on as the value's, or gives it back with ``hand_back``)."""
        pos = self.pos - text_start
        stop = upto - text_start
        if pos >= stop:
            return None
        self.examined += stop - pos
        if self._tracker is not None:
            self._tracker.advance(text, pos, stop)
            self.pos = upto
            return None
        value = self._value
        if value is not None and self.state == "value" and value.mode in _NESTED:
            end = value.continue_nested(text, pos, stop)
            if end is None:
                self.pos = upto
                if pos == 0:
                    return self.key
                if self.record:
                    self.events.append(MemberEvent("value_text", self.key, text[pos:stop], element=self._element))
                return None
            pos = self._value_read(text, pos, end, text_start, value)
        self._walk(text, text_start, pos, stop)
        return None

    def holds_in_string(self, at: int, text: str) -> bool:
        """Does ``text``, which starts at absolute ``at`` where the walk stands, go on with the
        string literal being read, with no quote or backslash (so no delimiter begins in it:
        a delimiter spelled inside a string is text)?"""
        value = self._value
        return (
            self.pos == at
            and value is not None
            and value.in_string
            and not value.escaped
            and self.state == "value"
            and self._tracker is None
            and STRING_SPECIAL.search(text) is None
        )

    def scanned_value(self) -> ValueScanner | None:
        """The scanner of the member's value the walk stands in (a string, or a container),
        where reading on is only scanning it: text that does not end it changes nothing else
        but ``pos`` and ``examined`` (see ``continue_value``); else None."""
        value = self._value
        if value is not None and self.state == "value" and self._tracker is None and value.mode in _NESTED:
            return value
        return None

    def hand_back(self, key: str, text: str) -> None:
        """Record the value text ``continue_value`` returned ``key`` for, as ``scan`` does."""
        if self.record:
            self.events.append(MemberEvent("value_text", key, text, element=self._element))

    def _walk(self, text: str, text_start: int, pos: int, stop: int) -> None:
        """Examine ``text[pos:stop]``, member by member."""
        while pos < stop:
            state = self.state
            if state == "value":
                pos = self._scan_value(text, pos, stop, text_start)
                continue
            if state == "key":
                pos = self._scan_key(text, pos, stop)
                continue
            if state == "done":
                # Text after the value is not JSON (nothing is hidden in it); only whitespace
                # may follow a call's value.
                rest = _WS.match(text, pos, stop).end()  # type: ignore[union-attr]
                if rest < stop and self.error is None:
                    self.error = f"text after the JSON value (character {text_start + rest - self.base} of the call)"
                pos = stop
                break
            pos = _WS.match(text, pos, stop).end()  # type: ignore[union-attr]
            if pos >= stop:
                break
            char = text[pos]
            ok = True
            if state == "start":
                if self.shape == "value":
                    self._start_value()
                    continue
                if self.shape == "object_or_array" and char in "{[":
                    # One call's object, or a list of them: the first character tells.
                    self.shape = "object" if char == "{" else "array"
                elif self.shape == "objects_or_array" and char in "{[":
                    # Call objects one after another, or a list of them.
                    self.shape = "objects" if char == "{" else "array"
                if self.shape == "objects" and char == "{":
                    self._open_element(text_start + pos)
                    pos += 1
                    continue
                expected = "{" if self.shape in ("object", "object_or_array", "objects", "objects_or_array") else "["
                ok = char == expected
                self.state = "member?" if self.shape == "object" else "element?"
            elif state == "element?":
                if char == "]":
                    self._end(pos + 1, text_start)
                elif char == "{":
                    self._open_element(text_start + pos)
                else:
                    ok = False
            elif state == "member?":
                if char == '"':
                    self.state = "key"
                    self.member_at = text_start + pos
                elif char == "}":
                    self._close_object(pos + 1, text_start)
                else:
                    ok = False
            elif state == "next_member":
                ok = char == '"'
                self.state = "key"
                self.member_at = text_start + pos
                spans = self.element_spans
                if spans and spans[-1][2] < 0:
                    spans[-1][2] = self.member_at
            elif state == "colon":
                ok = char == ":"
                self._start_value()
            elif state == "after_member":
                if char == ",":
                    self.state = "next_member"
                elif char == "}":
                    self._close_object(pos + 1, text_start)
                else:
                    ok = False
            elif state == "after_element":
                if char == ",":
                    self.state = "next_element"
                elif char == "]" and self.shape == "array":
                    self._end(pos + 1, text_start)
                elif char == "{" and self.shape == "objects":
                    self._open_element(text_start + pos)  # the next object, after whitespace
                else:
                    ok = False
            elif state == "next_element":
                ok = char == "{"
                self._open_element(text_start + pos)
            if not ok:
                self._fail(pos, text_start, state)
                self._tracker = QuoteTracker(self._depth_at_failure(state))
                self._tracker.advance(text, pos, stop)
                pos = stop
                break
            pos += 1
        self.pos = text_start + pos

    def _scan_key(self, text: str, pos: int, stop: int) -> int:
        if self._key_escaped:
            self._key_parts.append(text[pos])
            self._key_escaped = False
            return pos + 1
        special = STRING_SPECIAL.search(text, pos, stop)
        if special is None:
            self._key_parts.append(text[pos:stop])
            return stop
        if special.group() == "\\":
            self._key_parts.append(text[pos : special.end()])
            self._key_escaped = True
            return special.end()
        self._key_parts.append(text[pos : special.start()])
        raw = "".join(self._key_parts)
        self._key_parts = []
        self.key = raw if "\\" not in raw else unescape_json_string(raw)
        self._emit(MemberEvent("key", self.key, element=self._element))
        self.state = "colon"
        return special.end()

    def _start_value(self) -> None:
        self._value = ValueScanner()
        self.state = "value"

    def _scan_value(self, text: str, pos: int, stop: int, text_start: int) -> int:
        value = self._value
        assert value is not None
        if not value.mode:
            pos = _WS.match(text, pos, stop).end()  # type: ignore[union-attr]
            if pos >= stop:
                return stop
            begin = pos
        else:
            begin = -1
        end = value.feed(text, pos, stop)
        if end is None:
            if self.record and pos < stop:
                self._emit(MemberEvent("value_text", self.key, text[pos:stop], element=self._element))
            return stop
        if begin >= 0 and value.has_parsed:
            self._jump_start, self._jump_end = text_start + begin, text_start + end
        end = self._value_read(text, pos, end, text_start, value)
        if value.mode == "scalar" and JSON_SCALAR.fullmatch(value.scalar) is None:
            # (An empty value, ``"a":}``, or a bare word: the text stops being JSON here.)
            self._fail(end, text_start, "value")
            self._tracker = QuoteTracker(self._depth_at_failure("value"))
            self._tracker.advance(text, end, stop)
            return stop
        return end

    def _value_read(self, text: str, pos: int, end: int, text_start: int, value: ValueScanner) -> int:
        """The value being scanned ends at ``end`` (its text from ``pos`` was not handed on)."""
        if self.record and end > pos:
            self._emit(MemberEvent("value_text", self.key, text[pos:end], element=self._element))
        self._emit(MemberEvent("value_end", self.key, value=value, element=self._element))
        self._value = None
        if self.shape == "value":
            self._end(end, text_start)
        else:
            self.state = "after_member"
        return end

    def _open_element(self, at: int) -> None:
        if self.shape == "objects":
            self._value_end = -1  # the body goes on
        self.element_spans.append([at, -1, -1])
        self._element += 1
        self._emit(MemberEvent("element", element=self._element))
        self.state = "member?"

    def _close_object(self, end: int, text_start: int) -> None:
        if self.shape == "objects":
            # The body may end here: its value ends here unless another object follows.
            self._value_end = self.element_spans[-1][1] = text_start + end
            self.state = "after_element"
            self._emit(MemberEvent("element_end", element=self._element))
        elif self.shape == "array":
            self.element_spans[-1][1] = text_start + end
            self.state = "after_element"
            self._emit(MemberEvent("element_end", element=self._element))
        else:
            self._end(end, text_start)

    def _end(self, end: int, text_start: int) -> None:
        self.state = "done"
        self._value_end = text_start + end
        self._emit(MemberEvent("end", element=self._element))

    def _emit(self, event: MemberEvent) -> None:
        if self.record or event.kind == "end":
            self.events.append(event)

    _EXPECTED = {
        "start": "a JSON value",
        "element?": "an object",
        "next_element": "an object",
        "member?": "a member name",
        "next_member": "a member name",
        "colon": "':' after a member name",
        "after_member": "',' or '}' after a value",
        "after_element": "',' or ']' after an element",
        "value": "a JSON value after a member name",
    }

    def _fail(self, pos: int, text_start: int, state: str) -> None:
        expected = self._EXPECTED.get(state, "JSON")
        if state == "start":
            expected = "'['" if self.shape == "array" else "'{'"
            message = f"expected {expected}" if self.shape == "array" else "a tool call must be a JSON object"
        else:
            message = f"expected {expected}"
        if state == "after_element":
            self.stray_at = text_start + pos
        self.failed_at = text_start + pos
        self.broken_member_at = self.member_at if state == "colon" or state == "value" else self.failed_at
        self.error = f"{message} (character {text_start + pos - self.base} of the call)"

    def _depth_at_failure(self, state: str) -> int:
        """How deep the quote tracker starts: inside the list and the object the walk was in."""
        if state == "start":
            return 0
        if self.shape == "objects":
            return 0 if state in ("element?", "after_element", "next_element") else 1
        depth = 1 if state in ("element?", "after_element", "next_element") else 2 if self.shape == "array" else 1
        return depth


def unescape_json_string(raw: str) -> str:
    """The value of the JSON string whose text between its quotes is ``raw`` (``raw`` itself
    where it is no such text)."""
    try:
        return str(json.loads('"' + raw + '"'))
    except ValueError:
        return raw


def _odd_quotes(text: str, start: int, index: int) -> bool:
    """An odd number of unescaped quotes between ``start`` and ``index``: inside a string."""
    segment = text[max(start, 0) : index]
    if "\\" in segment:
        segment = _ESCAPED_CHAR.sub("", segment)
    return bool(segment.count('"') & 1)


# Checks that a text is one JSON object without building its values: an object with no
# declared keys that ignores every key it meets, so the Rust parser reads all of it and
# returns an empty dict (about half the cost of decoding; nothing here needs the values,
# which ``FunctionCall.parsed_arguments`` decodes when asked).
_OBJECT_CHECK = SchemaValidator(core_schema.typed_dict_schema({}, extra_behavior="ignore"))


def is_json_object(text: str) -> bool:
    """Is ``text`` exactly one JSON object? (Checked by pydantic-core's Rust parser, which never
    accepts what the json module refuses; what it refuses and the json module takes, an escaped
    lone surrogate or nesting past its depth limit, is decoded the long way.)"""
    try:
        # An ASCII string is its own UTF-8 and is read in place; any other is given as a
        # temporary UTF-8 copy (given the string, the parser would cache one in it, and the
        # message keeps the string).
        _OBJECT_CHECK.validate_json(text if text.isascii() else text.encode())
    except (ValueError, RecursionError):  # (a ValidationError is a ValueError)
        return False
    # The Rust parser takes NaN and Infinity, which are no JSON. (A search for one character
    # is a scan in C; one for a word, in a string of four bytes a character as text with emoji
    # is, costs a fifth of the check.)
    if ("N" in text and "NaN" in text) or ("I" in text and "Infinity" in text):
        return _strictly_an_object(text)
    return True


def _strictly_an_object(text: str) -> bool:
    try:
        return isinstance(_decoder.decode(text), dict)
    except (ValueError, RecursionError):
        return False
