"""Readers of a tool call's body, one per call shape. A call syntax names its reader and options.

A reader is told each piece of text inside a call block and each delimiter inside it (not the
ones that open and close the block), and reports the function's name and fragments of the
arguments to ``ToolCalls``. Where the model wrote JSON the arguments stay its own text: a reader
slices, it never re-serializes. Where it wrote something else (XML parameters, Python calls,
Gemma's quoting) each value is converted to JSON by the tool's schema (see ``convert_value``).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from chatcodec.parse.attributes import without_attributes
from chatcodec.parse.engine import STRAY, Piece
from chatcodec.parse.json_scan import (
    CONTROL_CHARACTERS_DECODER,
    JSON_SCALAR,
    STRICT_DECODER,
    JsonWalk,
    MemberEvent,
    ValueScanner,
    dumps_finite,
    dumps_text,
    is_json_object,
    loads_json,
    unescape_json_string,
)
from chatcodec.parse.python_source import expression
from chatcodec.parse.toolcalls import ToolCallBlock, ToolCalls

ARGUMENT_KEYS = ("arguments", "parameters")  # some models write Llama's "parameters"
Schemas = dict[str, dict[str, Any]]  # tool name -> parameter name -> JSON schema


class CallReader:
    """Reads the body of one call shape."""

    def __init__(self, calls: ToolCalls, schemas: Schemas | None = None, **options: Any) -> None:
        self.calls = calls
        self.schemas = schemas or {}

    def open(self, call: ToolCallBlock) -> None:
        """A call block opened."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        raise NotImplementedError

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        """A delimiter inside the block (a separator between name and arguments)."""

    def close(self, call: ToolCallBlock) -> None:
        """The block is about to be finished: write what the arguments still lack."""

    def ended_by(self, call: ToolCallBlock, piece: Piece) -> None:
        """A delimiter ends the call and opens the next (before ``close``)."""

    def prompt_ended(self, call: ToolCallBlock) -> None:
        """The prompt's prefill ended inside this block: what was read so far is the prompt's."""

    def ends_whole(self, call: ToolCallBlock) -> bool | None:
        """The text ended in a block with no closing delimiter and no JSON body: is what it
        holds whole (True), cut short (False), or is there no telling (None)?"""
        return None

    def ends_with_the_text(self, call: ToolCallBlock) -> bool:
        """Does this call, in a syntax whose calls have closing tags, need none (it was opened
        without its own tag, Gemma 4's bare ``call:``): where whole, it ends with the text?"""
        return False

    def arguments_as_written(self, call: ToolCallBlock, kind: str, key: str, walk: JsonWalk) -> bool:
        """Does text of a JSON body (free-text terminal ``kind``) that goes on with the value of
        member ``key`` without ending it go on with the call's arguments exactly as written,
        with no other effect? Streaming asks, so that a delta inside the arguments takes a
        short way; True only where ``text`` would do just that."""
        return False

    def _no_name(self, call: ToolCallBlock, name: str) -> bool:
        """Is ``name`` text that names no function (Mistral's ``[TOOL_CALLS]  junk [``, a name
        whose closing ``>`` is left out)? Then the block is no call: it is text. (A name the
        tools given spell so, ``get temp``, is theirs: the template writes it as it is.)"""
        if NOT_A_NAME.search(name) is None or self.calls.knows(name):
            return False
        call.error = call.error or f"{name[:40]!r} is not a function name"
        call.name = ""
        return True


# -- JSON calls -----------------------------------------------------------------------------------


class JsonObjectReader(CallReader):
    """``{"name": "f", "arguments": {...}}``: one JSON object per call (Hermes, Llama, GigaChat).
    The members come from the engine's walk of the body; which keys hold the name, the arguments
    and the id is the syntax's to say (Cohere writes ``tool_name``, ``parameters`` and
    ``tool_call_id``; Apertus writes ``{"NAME": {...}}``)."""

    def __init__(
        self,
        calls: ToolCalls,
        schemas: Schemas | None = None,
        *,
        name_keys: tuple[str, ...] = ("name",),
        argument_keys: tuple[str, ...] = ARGUMENT_KEYS,
        id_keys: tuple[str, ...] = (),
        name_as_key: bool = False,
        opened: bool = False,
    ) -> None:
        super().__init__(calls, schemas)
        self.name_keys = name_keys
        self.argument_keys = argument_keys
        self.id_keys = id_keys
        self.name_as_key = name_as_key

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is None:
            return
        call.walk = walk
        for event in walk.take():
            self.member(call, event, piece.start)
        _after_the_value(call, piece, walk)

    def arguments_as_written(self, call: ToolCallBlock, kind: str, key: str, walk: JsonWalk) -> bool:
        # ``member`` of a value_text of the arguments member, once they are known not to be a
        # JSON string holding the arguments (that is decided by their first fragment).
        return (
            key == call.arguments_key
            and not call.arguments_done
            and call.arguments_as_string is None
            and bool(call.arguments_parts or call.pending)
            and key not in self.name_keys
            and key not in self.id_keys
            and not call.children
        )

    def member(self, call: ToolCallBlock, event: MemberEvent, position: int) -> None:
        """One thing the walk found in the call's object."""
        calls = self.calls
        kind = event.kind
        if kind == "key":
            if self.name_as_key and call.name is None and call.state.get("named_by_key") is None:
                # {"get_weather": {...}}: the key is the name, its value the arguments.
                call.state["named_by_key"] = True
                call.arguments_key = event.key
                calls.name_complete(call, event.key, position)
            elif self.name_as_key and call.state.get("named_by_key"):
                # {"one": {...}, "two": {...}}: one object names one call; the rest of the
                # object is text (see ``JsonListReader.close``).
                call.error = call.error or f"a second name ({event.key!r}) in one call's object; the rest of it is kept as text"
                call.state["second_name"] = True
            elif event.key in self.argument_keys and call.arguments_key is None:
                call.arguments_key = event.key
                self._name_now(call, position)
            elif event.key == call.arguments_key or (
                event.key in self.name_keys and (call.name is not None or "name" in call.state)
            ):
                call.error = call.error or f"the member {event.key!r} is written twice (the first is read)"
            return
        if kind == "end":
            self._name_now(call, position)
            self._flat_arguments(call)
            return
        key = event.key
        if key in self.name_keys and call.name is None and "name" not in call.state:
            if kind == "value_text":
                call.name_parts.append(event.text)
            else:
                name = _string_value(call.name_parts, event.value)
                call.name_parts = []
                if not isinstance(name, str):
                    call.error = "the tool call's name is not a string"
                    call.name = ""
                elif self.id_keys and call.given_id is None:
                    call.state["name"] = name  # wait: the id may come before the arguments
                else:
                    calls.name_complete(call, name, position)
        elif key in self.id_keys and call.given_id is None:
            if kind == "value_text":
                call.state.setdefault("id_parts", []).append(event.text)
            else:
                value = _string_value(call.state.pop("id_parts", []), event.value)
                if value is not None and str(value):
                    call.given_id = str(value)  # an empty id is no id
                self._name_now(call, position)
        elif not self.name_as_key and key not in (*self.name_keys, *self.id_keys, *self.argument_keys):
            # A member that is neither the name nor the arguments (``{"name": "f", "city": "x"}``):
            # kept, in case the object has no arguments member (see ``_flat_arguments``).
            if kind == "value_text":
                extra = call.state.setdefault("extra", {})
                extra.setdefault(key, []).append(event.text)
        elif key == call.arguments_key and not call.arguments_done:
            if kind == "value_text":
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

    def close(self, call: ToolCallBlock) -> None:
        walk = call.walk
        if walk is not None and walk.shape == "object" and not walk.complete:
            self._left_out_members(call, call, walk)
            self._keep_member_text(call, call, walk, closing="}")

    def _left_out_members(self, block: ToolCallBlock, call: ToolCallBlock, walk: JsonWalk) -> None:
        """A call's object that never ended: its members beside the name and the arguments are
        named, as where it ends (but the member it broke in, whose text is kept)."""
        if call.arguments_key is None:
            return
        kept_whole = walk.failed_at < 0 or 0 <= walk.broken_member_at <= walk.member_at  # (from the member's start)
        if walk.key != call.arguments_key and walk.state in ("colon", "value", "after_member") and kept_whole and not block.cut_short:
            call.state.get("extra", {}).pop(walk.key, None)
        self._flat_arguments(call)

    def _keep_member_text(self, block: ToolCallBlock, call: ToolCallBlock, walk: JsonWalk, *, closing: str = "") -> None:
        """The text of the member a named call's object ended in, which is no part of the call,
        kept as text (``block``'s ``after_value``), as after a list's broken element:
        - where the JSON broke (``"arguments": {…} junk}``, a key with no colon, a value that is
          no JSON), from that member on; if it is the arguments, their text is theirs up to the
          break, and only what follows (unless just ``closing``) is text;
        - where the block's closing tag came inside a member other than the arguments (after
          ``"x"`` or ``"x": 1``), that member. A member the text ends in was cut short with the
          call, and stays in its span, as an XML parameter's name does."""
        if call.index is None:
            return
        in_arguments = walk.key == call.arguments_key
        if walk.failed_at >= 0:
            if in_arguments and call.arguments_parts:
                self.calls.keep_after(block, walk.failed_at, closing=closing)
            else:
                self.calls.keep_after(block, walk.broken_member_at)
        elif not block.cut_short and walk.state in ("key", "colon", "value", "after_member") and walk.member_at >= 0:
            # (The arguments, begun or whole, are the call's; a member after them, ``"x": [}``
            # read to its end but no JSON, is not.)
            if not (walk.state in ("value", "after_member") and in_arguments):
                self.calls.keep_after(block, walk.member_at)

    def _flat_arguments(self, call: ToolCallBlock) -> None:
        """An object with a name and other members but no arguments member: the other members
        are the arguments, as written (some small models write calls flat)."""
        extra: dict[str, list[str]] = call.state.pop("extra", {})
        if not extra:
            return
        if call.arguments_key is not None or call.arguments_parts or call.pending:
            left_out = [key for key in extra if key not in _CALL_OBJECT_KEYS]
            if call.index is not None and left_out:
                # (Said, not kept: a call has no place for them, and its text is the call's.)
                keys = ", ".join(dumps_text(key) for key in left_out)
                self.calls.diagnose(
                    "noncanonical", call.start, f"tool call {call.index}: members beside its name and arguments are left out: {keys}"
                )
            return
        if call.name is None:
            return  # no name, so no call whose arguments these could be: the object is malformed
        members = [dumps_text(key) + ": " + "".join(parts).strip() for key, parts in extra.items()]
        self.calls.arguments_text(call, "{" + ", ".join(members) + "}")
        self.calls.diagnose(
            "noncanonical", call.start, "the call's arguments are written beside its name, not in an arguments member"
        )

    def _name_now(self, call: ToolCallBlock, position: int) -> None:
        name = call.state.pop("name", None)
        if name is not None and call.index is None:
            self.calls.name_complete(call, name, position)

    def _string_arguments(self, call: ToolCallBlock) -> None:
        # "arguments": "{\"city\": \"Paris\"}" -- the JSON text is the string's value (the
        # OpenAI convention). A string that holds no JSON ("arguments": "hello") is itself the
        # model's JSON value: it stays the JSON string it is, never bare text.
        raw = "".join(call.arguments_as_string or [])
        try:
            decoded = json.loads(raw)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, str) and _is_json(decoded):
            self.calls.arguments_text(call, decoded)
        else:
            self.calls.arguments_text(call, raw.strip())


# Members an OpenAI call object has beside its function (``{"id": …, "type": "function", …}``),
# which models copy: a call has its own id and type, so leaving these out loses nothing said.
_CALL_OBJECT_KEYS = frozenset({"id", "type"})


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


class JsonListReader(JsonObjectReader):
    """``[{"name": ..., "arguments": ...}, ...]``: a list of call objects in one block (Mistral,
    Granite 3, Jamba, Apriel, Nemotron, Cohere, Apertus). Each element is a call."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is None:
            return
        call.walk = walk
        for event in walk.take():
            if event.kind == "element":
                self.calls.child(call)
            elif call.children:
                element = call.children[-1]
                if event.kind == "end":
                    for child in call.children:
                        self._name_now(child, piece.start)
                elif event.kind == "element_end":
                    # The element is whole: a call whose id never came is named now, in the
                    # list's order, and a flat one's members are its arguments.
                    self._name_now(element, piece.start)
                    self._flat_arguments(element)
                else:
                    self.member(element, event, piece.start)
        _after_the_value(call, piece, walk)

    def close(self, call: ToolCallBlock) -> None:
        spans = call.walk.element_spans if call.walk is not None else []
        for child, (start, end, second) in zip(call.children, spans):
            child.state["element"] = (start, end)
            if child.state.get("second_name") and 0 <= second < end:
                child.state["left_over"] = (second, end - 1)  # (up to the object's closing brace)
        for child in call.children:
            self._name_now(child, call.start)
        walk = call.walk
        if walk is not None and walk.shape != "object" and call.children and not walk.complete and walk.stray_at < 0:
            # The list ended, or broke, inside its last call's object: the rest of the list from
            # that member on is text. (Text between whole elements is ``stray_at``'s.)
            self._left_out_members(call, call.children[-1], walk)
            self._keep_member_text(call, call.children[-1], walk)
        super().close(call)  # (a reader of an object or a list: the object may have broken)

    def arguments_as_written(self, call: ToolCallBlock, kind: str, key: str, walk: JsonWalk) -> bool:
        return False  # the members belong to the list's last element, not to the block


class JsonObjectOrListReader(JsonListReader):
    """One call's object or a list of call objects in one block, as the body's first character
    tells (LFM2's tags hold the object its template writes, and models also write a list: a
    ``noncanonical`` diagnostic)."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is None or walk.shape != "array":
            JsonObjectReader.text(self, call, piece)
            return
        if not call.state.get("listed"):
            call.state["listed"] = True
            self.calls.diagnose("noncanonical", call.start, "the calls are a JSON list in one block, not an object each")
        super().text(call, piece)

    def arguments_as_written(self, call: ToolCallBlock, kind: str, key: str, walk: JsonWalk) -> bool:
        if walk.shape == "array":
            return False
        return JsonObjectReader.arguments_as_written(self, call, kind, key, walk)


class JsonListOrObjectReader(JsonObjectOrListReader):
    """A list of call objects in one block, or one call's object alone (Nemotron Nano v2's
    template writes the list; models also write the object: a ``noncanonical`` diagnostic)."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        # (Until the body's first bracket, whitespace before it, the body is taken for the list.)
        if walk is None or walk.shape == "array" or walk.shape == "object_or_array":
            JsonListReader.text(self, call, piece)
            return
        if not call.state.get("unlisted"):
            call.state["unlisted"] = True
            self.calls.diagnose("noncanonical", call.start, "the call is one JSON object, not a list of them")
        JsonObjectReader.text(self, call, piece)


class JsonObjectsReader(JsonListReader):
    """Call objects one after another in one block, each a call (MiniMax-M1's
    ``<tool_calls>\n{…}\n{…}\n</tool_calls>``); a JSON list of them is read too, with a
    ``noncanonical`` diagnostic."""

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        walk = piece.json
        if walk is not None and walk.shape == "array" and not call.state.get("listed"):
            call.state["listed"] = True
            self.calls.diagnose("noncanonical", call.start, "the calls are a JSON list, not objects one after another")
        super().text(call, piece)

    def close(self, call: ToolCallBlock) -> None:
        super().close(call)
        walk = call.walk
        if walk is None or walk.error is None or walk.shape != "objects" or not call.children:
            return
        broken = call.children[-1]
        if broken.index is None and self._read_on(call):
            broken.error = broken.error or walk.error
            call.walk = None  # (the block was read past its error, line by line)

    def _read_on(self, call: ToolCallBlock) -> bool:
        """The model writes one object a line: after a line that is no call's object
        (``{invalid json here}``), the lines after it are read still, each a call where it is one
        whole object, else text. False where the broken object runs to the block's end."""
        written = "".join(call.raw)
        end = call.inner_end()
        start = call.children[-1].state.get("element", (-1, -1))[0]
        if not call.start <= start < end:
            return False
        line_end = written.find("\n", start - call.start)
        if line_end < 0 or call.start + line_end >= end:
            return False
        call.children[-1].state["element"] = (start, call.start + line_end)
        # (Text kept as no part of the list from where its JSON stopped is read again here.)
        call.after_value = [(at, text[: start - at]) for at, text in call.after_value if at < start]
        at = call.start + line_end + 1
        for line in written[at - call.start : end - call.start].splitlines(keepends=True):
            text = line.strip()
            if text:
                begin = at + len(line) - len(line.lstrip())
                child = self.calls.child(call)
                child.state["element"] = (begin, begin + len(text))
                line_walk = JsonWalk(begin, "object")
                line_walk.scan(text, begin, begin + len(text))
                if line_walk.complete:
                    for event in line_walk.take():
                        self.member(child, event, begin)
                else:
                    child.error = line_walk.error or "the call's object is cut short"
            at += len(line)
        return True


def _after_the_value(call: ToolCallBlock, piece: Piece, walk: JsonWalk) -> None:
    """Keep the text of ``piece`` after the body's value (no part of the call: whitespace stays
    in it, other text goes to the content when it ends); else the walk's error is the call's."""
    if walk.complete:
        # (The walk may have read past the piece and found text after the value: that text is
        # kept when its own piece comes, and is no error of the call.)
        end = walk.value_end
        if 0 <= end < piece.end:
            cut = max(0, end - piece.start)
            call.after_value.append((piece.start + cut, piece.text[cut:]))
    elif walk.stray_at >= 0 and call.children:
        # A list whose whole elements are followed by text that continues no list (a comma
        # left out between two calls): the calls read so far stand, the rest is no part of them.
        start = max(walk.stray_at, piece.start)
        if start < piece.end:
            call.after_value.append((start, piece.text[start - piece.start :]))
    elif walk.error is not None and call.error is None:
        call.error = walk.error


def _string_value(parts: list[str], value: ValueScanner | None) -> object:
    """The decoded value of a member (as the walk decoded it, else from its raw text)."""
    if value is not None and value.has_parsed:
        return value.parsed
    try:
        return json.loads("".join(parts))
    except (ValueError, RecursionError):
        return None


# -- a name, then the arguments -------------------------------------------------------------------


# What no function name holds: whitespace inside it, brackets, quotes.
NOT_A_NAME = re.compile(r"\s|[\[\]{}()<>\"',;]")


class NameThenArgumentsReader(CallReader):
    """``NAME <separator> {...}``: the name as text, then the arguments JSON (DeepSeek, Kimi,
    Mistral, Functionary), maybe with the call's id before the name or after it. ``name_pattern`` takes the name out of what the model wrote
    (``functions.get_weather:0``), which is the call's id where ``name_is_id``."""

    def __init__(
        self,
        calls: ToolCalls,
        schemas: Schemas | None = None,
        *,
        name_pattern: str | None = None,
        name_is_id: bool = False,
        builtin_openers: tuple[str, ...] = (),
    ) -> None:
        super().__init__(calls, schemas)
        self.name_pattern = re.compile(name_pattern) if name_pattern else None
        self.name_is_id = name_is_id
        # Openers of calls to the model's built-in tools (gpt-oss's ``to=browser.search``),
        # which the tools given do not list.
        self.builtin_openers = frozenset(builtin_openers)

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "TOOL_NAME":
            call.name_parts.append(piece.text)
        elif piece.kind == "TOOL_ID":
            call.state.setdefault("id_parts", []).append(piece.text)
        elif piece.kind == "TOOL_ARGUMENTS":
            self._arguments(call, piece)
        elif piece.kind == "TOOL_ARGUMENTS_REST":
            self._arguments_rest(call, piece)

    def arguments_as_written(self, call: ToolCallBlock, kind: str, key: str, walk: JsonWalk) -> bool:
        if kind == "TOOL_ARGUMENTS":
            return True  # the body is the arguments' value
        if kind == "TOOL_ARGUMENTS_REST":
            # The body is sent as it stands, once its opening brace is.
            return walk.value_end < 0 and not call.arguments_done and bool(call.arguments_parts or call.pending)
        return False

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "NAME_SEP":
            return  # the id came first; the name follows
        if piece.kind == "CALL_SEP":
            call.state["separated"] = True
        if call.name is not None or call.state.get("waiting_for_id"):
            if piece.kind != "ID_SEP":
                self._complete(call, piece.start)
            return
        if piece.kind == "ID_SEP":
            call.state["waiting_for_id"] = True  # the name is complete once the id is
            return
        self._complete(call, piece.start)

    def close(self, call: ToolCallBlock) -> None:
        last = call.spans[-1] if call.spans else None
        if call.name is None and not call.state.get("separated") and last is not None and last[3] == "CALL_END":
            # ``<|tool_call_begin|>functions.f:0<|tool_call_end|>``: the separator and the
            # arguments are left out, and the call ends here (a name cut short is no call).
            call.error = "the call's arguments (and the separator before them) are left out"
            self._complete(call, last[1])

    def _complete(self, call: ToolCallBlock, position: int) -> None:
        if call.index is not None or (call.name is not None and not call.state.get("waiting_for_id")):
            return
        call.state.pop("waiting_for_id", None)
        builtin = bool(call.raw) and call.raw[0] in self.builtin_openers
        written = "".join(call.name_parts).strip()
        if builtin:
            # (``to=browser.`` spelled in the opener: the namespace is the name's beginning.)
            written = call.raw[0][call.raw[0].rindex("to=") + 3 :] + written
        name = written
        if self.name_pattern is not None:
            match = self.name_pattern.match(written)
            if match is None:
                call.error = f"{written!r} names no function in the form the format writes"
                return
            name = match.group("name")
        if self._no_name(call, name):
            return
        if self.name_is_id and written:
            call.given_id = written
        id_parts = call.state.pop("id_parts", None)
        if id_parts:
            call.given_id = "".join(id_parts).strip() or None
        self.calls.name_complete(call, name, position, listed=not builtin)

    def _arguments_rest(self, call: ToolCallBlock, piece: Piece) -> None:
        """An object whose opening brace was the delimiter: its text as written, brace first."""
        walk = piece.json
        if walk is None:
            return
        call.walk = walk
        walk.take()  # the members are not needed: the text is sent as it stands
        if not call.arguments_parts and not call.pending:
            self.calls.arguments_text(call, "{")
        end = walk.value_end
        if 0 <= end < piece.end:
            cut = max(0, end - piece.start)
            if cut:
                self.calls.arguments_text(call, piece.text[:cut])
            call.arguments_done = True
            call.after_value.append((piece.start + cut, piece.text[cut:]))
        elif not call.arguments_done:
            self.calls.arguments_text(call, piece.text)
        else:
            call.after_value.append((piece.start, piece.text))

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
                if event.value is not None and event.value.mode == "scalar":
                    written = "".join([*call.pending, *call.arguments_parts]).strip()
                    if not JSON_SCALAR.fullmatch(written):
                        # A word that is no JSON value (``hello world``): the arguments are not
                        # JSON at all, and go on to the call's end as written.
                        call.state["not_json"] = True
        end = walk.value_end
        if 0 <= end < piece.end:
            cut = max(0, end - piece.start)
            if call.state.get("not_json"):
                self.calls.arguments_text(call, piece.text[cut:])
            else:
                # Text after the arguments' value (its own whitespace aside) is not part of them.
                call.after_value.append((piece.start + cut, piece.text[cut:]))


# -- XML parameters -------------------------------------------------------------------------------


def convert_value(text: str, schema: dict[str, Any] | None) -> Any:
    """A parameter written as text, as the JSON value it stands for.

    With a schema, a parameter typed ``string`` stays a string even when it looks like a number;
    a number, integer, boolean, object, array or null is parsed (JSON, then Python's literals:
    ``True``, ``'x'``), and stays a string if it does not parse. Without a schema, the value is
    JSON if it parses and a string otherwise.
    """
    types = _types(schema)
    if types == {"string"}:
        return text
    stripped = text.strip()
    try:
        value = loads_json(stripped)
    except (ValueError, RecursionError):
        value = _with_control_characters(stripped) if types & {"object", "array"} else None
        if value is None and types:
            value = _python_literal(stripped)
        if value is None:
            value = _loosely(stripped, types)
        if value is None and types & {"object", "array"} and '\\"' in stripped:
            # ``[{\"id\": \"1\"}]``: the text of a JSON string that holds the object or list,
            # its quotes left out (SGLang's GLM-4.7 tests).
            value = _unescaped(stripped, types)
        if value is None and stripped not in ("None", "null"):
            return text
    if isinstance(value, str) and types & {"object", "array"} and not _matches(value, types):
        # An object or a list written as a JSON string of its text (a template that wrote
        # ``str(value)`` taught the model so: ``"{'key': 'value'}"``): the text in the string.
        value = _decoded_again(value, types)
    if types and not _matches(value, types) and "string" in types:
        return text
    if isinstance(value, (float, list, dict)) and dumps_finite(value) is None:
        return text  # 1e999 is no number JSON can write back: the text stays as written
    return value


def _with_control_characters(text: str) -> Any:
    """The object or list ``text`` writes as JSON but for raw control characters in its strings
    (``["line one<newline>line two"]``), as JSON would hold them escaped (None where it is not one)."""
    if not text.startswith(("{", "[")):
        return None
    try:
        value = CONTROL_CHARACTERS_DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _unescaped(text: str, types: set[str]) -> Any:
    """The object or list whose JSON ``text`` holds escaped as a string's contents (None where
    it holds none the schema asks for)."""
    try:
        inner = json.loads('"' + text + '"')
        decoded = loads_json(inner)
    except (ValueError, RecursionError):
        return None
    return decoded if isinstance(decoded, (dict, list)) and _matches(decoded, types) else None


def _decoded_again(value: str, types: set[str]) -> Any:
    """The object or list a string holds as JSON or as a Python literal, if the schema asks for
    one; else the string."""
    inner = value.strip()
    try:
        decoded = loads_json(inner)
    except (ValueError, RecursionError):
        decoded = _python_literal(inner)
    return decoded if isinstance(decoded, (dict, list)) and _matches(decoded, types) else value


_DECIMAL = re.compile(r"[+-]?\d+")


def _loosely(text: str, types: set[str]) -> Any:
    """A number or boolean the schema asks for, written as neither JSON nor Python writes it:
    ``007`` for an integer, ``TRUE`` for a boolean (None where it is not one)."""
    if types & {"integer", "number"} and _DECIMAL.fullmatch(text) and len(text) <= 100:
        return int(text)
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return None


def _types(schema: dict[str, Any] | None) -> set[str]:
    if not schema:
        return set()
    kind = schema.get("type")
    # OpenAPI's ``"nullable": true`` (transformers' schema of an ``Optional[str]`` parameter)
    # admits null beside the type.
    nullable = {"null"} if schema.get("nullable") is True else set()
    if isinstance(kind, str):
        return {kind} | nullable
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)} | nullable
    for combined in ("anyOf", "oneOf"):
        options = schema.get(combined)
        if isinstance(options, list):
            return set().union(*(_types(option) for option in options if isinstance(option, dict)))
    # The values themselves say the type (``"enum": ["1", "2"]`` is a string, however the
    # model writes it); all the parts of ``allOf`` must hold, so the types they share.
    enum = schema.get("enum")
    if isinstance(enum, list):
        if enum:
            return {_json_type(value) for value in enum}
    elif "const" in schema:
        return {_json_type(schema["const"])}
    parts = schema.get("allOf")
    if isinstance(parts, list):
        typed = [types for part in parts if isinstance(part, dict) and (types := _types(part))]
        return set.intersection(*typed) if typed else set()
    return set()


def _json_type(value: Any) -> str:
    """The JSON Schema type of a decoded JSON value."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "string"


def _matches(value: Any, types: set[str]) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }
    return any(checks.get(kind, lambda v: True)(value) for kind in types)


def _python_literal(text: str) -> Any:
    if len(text) > 100_000:
        return None
    try:
        value = ast.literal_eval(expression(text))
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return value


class XmlParametersReader(CallReader):
    """``<function=NAME><parameter=KEY>VALUE</parameter></function>`` and the like. Each value is
    converted by the tool's schema and written into a JSON object: a string value streams as it
    arrives, any other is written when it ends. ``typed_by`` maps a delimiter's spelling to the
    type it announces (DeepSeek's ``string="true"``)."""

    _NAME_ENDS = ("NAME_END", "PARAM_NAME_END", "CDATA_OPEN")

    def __init__(
        self,
        calls: ToolCalls,
        schemas: Schemas | None = None,
        *,
        typed_by: dict[str, str] | None = None,
        bare_name: bool = False,
        namespaced: bool = False,
        escaped_attributes: bool = False,
        unopened_values: tuple[str, ...] = (),
        json_block: tuple[str, str] | None = None,
    ) -> None:
        super().__init__(calls, schemas)
        # The tags around arguments the template writes as one JSON text in place of the
        # parameters (Kimi K3's ``<|open|>json type="object"<|sep|>…<|close|>json<|sep|>``).
        self.json_block = json_block
        # Spellings of a parameter name's end that leave out the value's opening tag (GLM's
        # ``</arg_key>`` with no ``<arg_value>``): read, with a diagnostic.
        self.unopened_values = frozenset(unopened_values)
        self.typed_by = typed_by or {}
        # Names and keys are attribute values the template escapes (Kimi K3's ``&quot;`` and
        # ``&amp;``): read unescaped.
        self.escaped_attributes = escaped_attributes
        # Names are written "TOOL.FUNCTION" (Muse): a name the tools lack whose last part
        # they have is that function.
        self.namespaced = namespaced
        # The name has no closing tag of its own (GLM's ``<tool_call>NAME<arg_key>``): the
        # call's end ends it too (a call with no arguments, ``<tool_call>NAME</tool_call>``).
        self.bare_name = bare_name

    def open(self, call: ToolCallBlock) -> None:
        call.state.update(where="name", values={}, written=0)

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        state = call.state
        if piece.kind == "TOOL_NAME":
            call.name_parts.append(piece.text)
        elif piece.kind == "PARAM_NAME":
            if not state.get("key_parts"):
                state["key_start"] = piece.start
            state.setdefault("key_parts", []).append(piece.text)
        elif piece.kind == "PARAM_VALUE":
            if state.get("unopened"):
                self._begin_unopened_value(call)
            if state.get("streaming"):
                self._write(call, dumps_text(piece.text)[1:-1])
            state.setdefault("value_parts", []).append(piece.text)
        elif piece.kind == STRAY:
            # Text between the parameters is no part of the call: content, when the call ends.
            call.after_value.append((piece.start, piece.text))

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        state = call.state
        kind = piece.kind
        where = state.get("where")
        if kind == "PARAM_OPEN":
            if where == "value" and state.get("unopened"):
                # ``location</arg_key><arg_key>count``: a name with no value, not even an
                # opening tag; the next name's value is the one written.
                del state["unopened"]
                call.error = call.error or f"the parameter {state['key']!r} has no value"
            elif where == "value":
                # The value's closing tag is left out: the next parameter's tag ends it.
                self._param_done(call)
                call.error = call.error or "a parameter's closing tag is left out"
            self._name_done(call, piece.start)
            state.update(where="param_name", key_parts=[], value_parts=[], streaming=False, param_open=piece)
        elif where == "name" and kind in self._NAME_ENDS:
            self._name_done(call, piece.start)
        elif where == "param_name" and (kind in self._NAME_ENDS or kind == "PARAM_NAME_END"):
            raw = "".join(state.pop("key_parts", []))
            cut = raw.rfind(">") + 1
            if "<" in raw[:cut] and raw[cut:].strip():
                # A name, then another name's tags before any value
                # (``location</arg_key><arg_key>count``): the value is the last name's. What
                # stands before it is no part of the call: content, like text between the
                # parameters (``see <arg_key> tag</arg_value><arg_key>path``, a value that spelled
                # the tag, keeps every character so).
                call.error = call.error or f"the parameter {raw[: raw.find('<')].strip()!r} has no value"
                call.after_value.append((state.get("key_start", piece.start), raw[:cut]))
                state["key_start"] = state.get("key_start", piece.start) + cut  # (the last name's)
                raw = raw[cut:]
            key = raw.strip()
            if self.escaped_attributes:
                key = _unescape_attribute(key)
            key, attributes = without_attributes(key)
            if attributes:
                self.calls.diagnose(
                    "noncanonical",
                    state.get("key_start", piece.start),
                    f"the parameter {key!r} is written with attributes the format does not have ({attributes}); read without them",
                )
            if key in state.get("values", {}) and call.error is None:
                # Both are kept as written (a JSON reader takes the last): the call is not what
                # the model meant, or a value spelled the tag (a file being written).
                call.error = f"the parameter {key!r} is written twice"
            state.update(where="value", key=key)
            if piece.text in self.unopened_values:
                # (Nothing is written until the value shows: the next name may follow instead.)
                state["unopened"] = piece
                return
            if self.typed_by and piece.text.strip("\n") not in self.typed_by:
                # (DeepSeek's ``name="key">`` with no ``string=``: read by the tool's schema.)
                self.calls.diagnose("noncanonical", piece.start, f"tool call {call.index}: the parameter {key!r} does not say its type")
            self._begin_value(call, piece.text)
        elif kind in ("PARAM_CLOSE", "CDATA_CLOSE") and where == "value":
            if state.get("unopened"):
                self._begin_unopened_value(call)
            self._param_done(call)

    def _begin_unopened_value(self, call: ToolCallBlock) -> None:
        """The value after a name's end that left out the value's opening tag shows: it begins."""
        name_end: Piece = call.state.pop("unopened")
        key = call.state["key"]
        self.calls.diagnose("noncanonical", name_end.start, f"tool call {call.index}: the value of {key!r} is written with no opening tag")
        self._begin_value(call, name_end.text)

    def _begin_value(self, call: ToolCallBlock, name_end: str) -> None:
        """A parameter's value begins, after its name's end spelled ``name_end``."""
        state = call.state
        key = state["key"]
        declared = self.typed_by.get(name_end.strip("\n"))
        # The tool's schema says what the value is; without one, the model's own word
        # (DeepSeek's string="true") does.
        schema = self._schema(call, key)
        if schema is None and declared is not None:
            schema = {"type": "string" if declared == "string" else "any"}
        if self._wraps_the_arguments(call, key):
            # Read whole, then taken apart (``_param_done``): nothing is written before.
            state["wrapper"] = key
            state["schema"] = None
            return
        self._open_member(call, key)
        if _types(schema) == {"string"}:
            state["streaming"] = True
            state["string_schema"] = True
            self._write(call, '"')
        else:
            state["schema"] = schema

    def close(self, call: ToolCallBlock) -> None:
        state = call.state
        if state.get("where") == "name" and call.spans and call.spans[-1][3] == "CALL_SELF_CLOSE":
            # ``<invoke name="f"/>``: a call with no parameters, not as the template writes one.
            self.calls.diagnose(
                "noncanonical", call.start, f"tool call {call.index}: written as an empty element, not opened and closed"
            )
        elif state.get("where") == "name" and call.error is None and not self.bare_name:
            call.error = "the function's name is not closed"
        elif state.get("where") == "param_name" and state.get("key_parts"):
            key = "".join(state.pop("key_parts"))
            if not call.cut_short:
                # A parameter's name that never ended, the call's end written after it: the
                # text is no parameter, and goes to the content, with the tag that opened it.
                start, opened = state["key_start"], state.get("param_open")
                if opened is not None and opened.start + len(opened.text) == start:
                    start, key = opened.start, opened.text + key
                call.after_value.append((start, key))
            # (A name the text ends in was cut short with the call: no parameter, and no text
            # of the answer either; it stays in the call's span.)
        whole = None
        if self.bare_name and state.get("where") == "name" and call.name is None:
            whole = self._whole_call_object(call)
            if whole is None:
                self._name_then_object(call)
        self._name_done(call, call.start)
        if whole is not None and call.index is not None:
            arguments, written = whole
            self.calls.diagnose(
                "noncanonical", call.start, f"tool call {call.index}: written as one JSON object, its name and arguments, not the name and its parameters"
            )
            self._write(call, written)
            call.parsed = arguments
            call.has_parsed = True
            return
        if call.state.get("where") == "value" and state.get("unopened"):
            # (A name, then the call's end: no value at all.) The parameter's tags and name are
            # no part of the call: text, as a name that never ended is (see above).
            name_end = state.pop("unopened")
            call.error = call.error or f"the parameter {state['key']!r} has no value"
            opened, start = state.get("param_open"), state.get("key_start", -1)
            if opened is not None and opened.start + len(opened.text) == start:
                start = opened.start  # (the tag that opened the name, where it was written just before)
            end = name_end.start + len(name_end.text)
            written = "".join(call.raw)
            if not call.cut_short and call.start + call.hidden <= start < end <= call.start + len(written):
                call.after_value.append((start, written[start - call.start : end - call.start]))
        elif call.state.get("where") == "value":
            self._param_done(call)
            call.error = call.error or "a parameter's closing tag is left out"
        if call.index is None:
            return
        if not call.state.get("written") and self._arguments_as_json(call):
            return
        self._write(call, "}" if call.state.get("written") else "{}")
        call.parsed = call.state.get("values", {})
        call.has_parsed = True

    def _whole_call_object(self, call: ToolCallBlock) -> tuple[dict[str, Any], str] | None:
        """A whole call written as one JSON object where the name belongs (Hermes' form,
        ``<tool_call>{"name": "f", "arguments": {…}}</tool_call>``, which GLM models write at
        times, as mlx-lm reads it): the name taken from it, and its arguments and their text as
        written (``{}`` where it has none). None for anything else."""
        body = "".join(call.name_parts).strip()
        if not body.startswith("{"):
            return None
        try:
            value = loads_json(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return None
        key = next((key for key in ARGUMENT_KEYS if key in value), None)
        if key is None:
            arguments: Any = {}
            written: str | None = "{}"
        else:
            arguments = value[key]
            written = _member_text(body, key, arguments) if isinstance(arguments, dict) else None
        if written is None or set(value) - {"name", *ARGUMENT_KEYS}:
            return None
        call.name_parts = [value["name"]]
        return arguments, written

    def _name_then_object(self, call: ToolCallBlock) -> None:
        """A name with no closing tag of its own, then the arguments as one JSON object (GLM's
        ``<tool_call>get_weather\n{"city": "Paris"}</tool_call>``): the object is the body,
        read as ``_arguments_as_json`` reads it."""
        written = "".join(call.name_parts)
        brace = written.find("{")
        name = written[:brace].strip()
        if brace <= 0 or not name or any(char in name for char in " \t\r\n") or not is_json_object(written[brace:].strip()):
            return
        call.name_parts = [written[:brace]]
        call.after_value.append((call.spans[0][2] + brace, written[brace:]))

    def _arguments_as_json(self, call: ToolCallBlock) -> bool:
        """A call with no parameters whose body is one JSON object (DeepSeek V3.2's
        ``<｜DSML｜invoke name="f">{"city": "Paris"}</｜DSML｜invoke>``, as SGLang reads it): the
        object is the arguments, with a ``noncanonical`` diagnostic. Anything else in the body
        stays text after the call."""
        body = "".join(text for _, text in call.after_value).strip()
        block = self.json_block
        if block is not None and body.startswith(block[0]) and body.endswith(block[1]) and len(body) >= len(block[0] + block[1]):
            # The template's own block for arguments given as text: its text is the arguments,
            # as written (a text that is no JSON object too, the call then malformed).
            inner = body[len(block[0]) : len(body) - len(block[1])]
            if not is_json_object(inner.strip()):
                call.error = call.error or "the arguments in the JSON block are not a JSON object"
            self._write(call, inner)
            call.after_value.clear()  # (its text stays in the call's span)
            return True
        if not body.startswith("{") or not is_json_object(body):
            return False
        self.calls.diagnose(
            "noncanonical", call.start, f"tool call {call.index}: the arguments are one JSON object, not parameters"
        )
        self._write(call, body)
        call.after_value.clear()  # (its text stays in the call's span)
        return True

    def _name_done(self, call: ToolCallBlock, position: int) -> None:
        if call.name is None:
            name = "".join(call.name_parts).strip()
            if self.escaped_attributes:
                name = _unescape_attribute(name)
            name, attributes = without_attributes(name)
            if attributes:
                self.calls.diagnose(
                    "noncanonical", call.start, f"the call to {name!r} is written with attributes the format does not have ({attributes}); read without them"
                )
            if self.namespaced and "." in name and self.calls.knows(name) is False:
                function = name.rsplit(".", 1)[1]
                if self.calls.knows(function):
                    name = function
            if not self._no_name(call, name):
                self.calls.name_complete(call, name, position)
            call.state["where"] = "params"

    def _schema(self, call: ToolCallBlock, key: str) -> dict[str, Any] | None:
        properties = self.schemas.get(call.name or "", {})
        value = properties.get(key)
        return value if isinstance(value, dict) else None

    def _open_member(self, call: ToolCallBlock, key: str) -> None:
        prefix = ", " if call.state.get("written") else "{"
        call.state["written"] = call.state.get("written", 0) + 1
        self._write(call, prefix + dumps_text(key) + ": ")

    def _wraps_the_arguments(self, call: ToolCallBlock, key: str) -> bool:
        """Is the call's first parameter one a model wraps the arguments in (DeepSeek V3.2's
        ``arguments``, ``input``, or the schema's own word ``properties``), which the tool's
        schema has no place for?"""
        properties = self.schemas.get(call.name or "")
        return (
            key in _WRAPPERS
            and not call.state.get("written")
            and isinstance(properties, dict)
            and key not in properties
        )

    def _param_done(self, call: ToolCallBlock) -> None:
        state = call.state
        text = "".join(state.pop("value_parts", []))
        key = state.get("key", "")
        if state.pop("wrapper", None) == key:
            wrapped = _object_in(text)
            if wrapped is not None:
                # The arguments themselves: their members are the call's.
                self.calls.diagnose(
                    "noncanonical", call.start, f"tool call {call.index}: the arguments are wrapped in a parameter {key!r}"
                )
                if wrapped:
                    self._write(call, "{" + dumps_text(wrapped)[1:-1])
                    state["written"] = len(wrapped)
                state["values"].update(wrapped)
                state["where"] = "params"
                return
            self._open_member(call, key)  # no object in it: a parameter like any other
        if state.pop("streaming", False):
            self._write(call, '"')
            value: Any = text
        else:
            value = convert_value(text, state.get("schema"))
            self._write(call, _json_as_written(value, text) or dumps_text(value))
        state["values"][key] = value
        state["where"] = "params"

    def _write(self, call: ToolCallBlock, text: str) -> None:
        self.calls.arguments_text(call, text)


_WRAPPERS = ("arguments", "input", "properties")

def _json_as_written(value: Any, text: str) -> str | None:
    """The JSON the model wrote for ``value``, as it wrote it, where it is that value's JSON
    (None for anything else): a float keeps 17 digits, so ``12345678901234567890.5`` or
    ``1.50`` would otherwise come back as another number or another text, and an object
    written with a key twice (``{"a": 1, "a": 2}``) would lose its first value."""
    kind = type(value)
    if kind not in (int, float, dict, list):
        return None
    stripped = text.strip()
    if kind is int or kind is float:
        # (A number's value is no literal ``true``, ``false`` or ``null``: a scalar is a number.)
        return stripped if JSON_SCALAR.fullmatch(stripped) else None
    try:
        return stripped if loads_json(stripped) == value else None
    except (ValueError, RecursionError):
        return None


def _unescape_attribute(text: str) -> str:
    """An attribute value as written before its template escaped ``"`` and ``&``."""
    return text.replace("&quot;", '"').replace("&amp;", "&") if "&" in text else text


def _object_in(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` is, or holds as a JSON string, or the Python dict it spells
    (``{'phone': '555'}``, as a template that wrote ``str(value)`` taught); None for anything
    else."""
    try:
        value = loads_json(text)
        if isinstance(value, str):
            value = loads_json(value)
    except (ValueError, RecursionError):
        value = _python_literal(text.strip())
    return value if isinstance(value, dict) and dumps_finite(value) is not None else None


# -- Python calls and Gemma's calls ---------------------------------------------------------------


_BRACKET = re.compile(r"[()\[\]{}]")


class KeyTagsReader(CallReader):
    """MiniMax-M3's calls: each argument between tags named by its key, each tag after the
    template's mark (``MARK<city>Paris MARK</city>``); a nested object's members the same way,
    a list's elements as ``<item>`` tags. Read when the call closes, each value typed by the
    tool's schema (a nested value by the schema's ``properties`` and ``items``)."""

    def __init__(self, calls: ToolCalls, schemas: Schemas | None = None, *, mark: str) -> None:
        super().__init__(calls, schemas)
        self.mark = mark

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "TOOL_NAME":
            call.name_parts.append(piece.text)
        elif piece.kind == "CALL_BODY":
            call.state.setdefault("body", []).append(piece.text)
        elif piece.kind == STRAY:
            call.after_value.append((piece.start, piece.text))

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "NAME_END":
            self._name_done(call, piece.start)

    def close(self, call: ToolCallBlock) -> None:
        if not call.state.get("named"):
            if call.error is None:
                call.error = "the function's name is not closed"
            self._name_done(call, call.start)
        if call.index is None:
            return
        body = "".join(call.state.get("body", []))
        properties = self.schemas.get(call.name or "", {})
        schema = {"type": "object", "properties": properties}
        values = _key_tags(body, self.mark, schema)
        if not isinstance(values, dict) and call.cut_short:
            # The text ended inside the call: the arguments are what was read before the cut,
            # as JSON (a client decodes them like any other call's).
            values = _key_tags_so_far(body, self.mark, schema)
        if not isinstance(values, dict):  # (``_NOT_TAGS``, or a value where an object belongs)
            # Kept as the model wrote them (tags that do not nest).
            call.error = call.error or "the arguments are not tags named by their keys"
            self.calls.arguments_text(call, body)
            return
        self.calls.arguments_text(call, dumps_text(values))
        call.parsed, call.has_parsed = values, True

    def _name_done(self, call: ToolCallBlock, position: int) -> None:
        call.state["named"] = True
        name = "".join(call.name_parts).strip()
        if call.name is None and not self._no_name(call, name):
            self.calls.name_complete(call, name, position)


_NOT_TAGS = object()


def _key_tags(text: str, mark: str, schema: dict[str, Any] | None) -> Any:
    """The value ``text`` writes as tags named by keys after ``mark``: an object, a list (all
    its tags ``item``), or, with no tags, the text itself typed by ``schema`` (``_NOT_TAGS``
    where the tags do not nest)."""
    opening = mark + "<"
    if not text.startswith(opening) or text.startswith(opening + "/"):
        if opening in text:
            return _NOT_TAGS  # a value with tags after text
        types = _types(schema)
        if not text and types & {"object", "array"}:
            return [] if "array" in types and "object" not in types else {}
        return convert_value(text, schema) if types else _untyped(text)
    members = _tag_members(text, mark, cut_short=False)
    return _NOT_TAGS if members is None else _members_value(members, mark, schema)


def _key_tags_so_far(text: str, mark: str, schema: dict[str, Any] | None) -> Any:
    """What ``text``, cut short, writes as tags named by keys: the members whose tags closed,
    and the member the cut fell in with its value so far (a tag's first characters left out),
    typed as ``_key_tags`` types them. ``_NOT_TAGS`` where the members do not nest."""
    return _members_value(_tag_members(text, mark, cut_short=True) or [], mark, schema)


def _tag_members(text: str, mark: str, *, cut_short: bool) -> list[tuple[str, str, bool]] | None:
    """The members ``text`` writes one after another, each between tags named by its key: (key,
    the text inside its tags, whether its closing tag was written). None where the text is
    anything else; ``cut_short``: the members up to where it stops being them, the last one's
    closing tag left out (the text ends in it)."""
    opening = mark + "<"
    members: list[tuple[str, str, bool]] = []
    pos = 0
    while pos < len(text):
        close = text.find(">", pos + len(opening)) if text.startswith(opening, pos) else -1
        key = text[pos + len(opening) : close]
        if close < 0 or not key or key.startswith("/") or "<" in key:
            return members if cut_short else None  # (cut short: a key cut short is no member)
        end_tag = f"{mark}</{key}>"
        end = _matching_close(text, close + 1, opening + key + ">", end_tag)
        if end < 0:
            if not cut_short:
                return None
            members.append((key, _without_partial_tag(text[close + 1 :], mark), False))
            break
        members.append((key, text[close + 1 : end], True))
        pos = end + len(end_tag)
    return members


def _members_value(members: list[tuple[str, str, bool]], mark: str, schema: dict[str, Any] | None) -> Any:
    """The object or list ``members`` write, each typed by ``schema`` (``_NOT_TAGS`` where one
    of them does not nest): a list where every tag is ``item`` and the schema allows one."""
    types = _types(schema)
    if members and all(key == "item" for key, _, _ in members) and ("array" in types or "object" not in types):
        items = schema.get("items") if isinstance(schema, dict) else None
        elements = [_member_value(inner, whole, mark, items if isinstance(items, dict) else None) for _, inner, whole in members]
        return _NOT_TAGS if any(element is _NOT_TAGS for element in elements) else elements
    properties = schema.get("properties") if isinstance(schema, dict) else None
    # A key written more than once is a list, an element a tag (``<tag>a</tag><tag>b</tag>``).
    repeated = {key for key, count in Counter(key for key, _, _ in members).items() if count > 1}
    values: dict[str, Any] = {}
    for key, inner, whole in members:
        sub = properties.get(key) if isinstance(properties, dict) else None
        if key in repeated:
            sub = sub.get("items") if isinstance(sub, dict) else None
        value = _member_value(inner, whole, mark, sub if isinstance(sub, dict) else None)
        if value is _NOT_TAGS:
            return _NOT_TAGS
        if key in repeated:
            values.setdefault(key, []).append(value)
        else:
            values[key] = value
    return values


def _member_value(inner: str, whole: bool, mark: str, schema: dict[str, Any] | None) -> Any:
    """One member's value: its tags' text read whole, or so far where the text ends in it."""
    if not whole and inner.startswith(mark + "<"):
        return _key_tags_so_far(inner, mark, schema)
    return _key_tags(inner, mark, schema)


def _without_partial_tag(text: str, mark: str) -> str:
    """``text`` without the first characters of a tag it ends in (``42]<]mini``, ``42]<]minimax[>[</ci``)."""
    floor = max(0, len(text) - len(mark) - 258)  # (a tag's key is short; no quadratic search)
    start = text.rfind(mark[0], floor)
    while start >= 0:
        tail = text[start:]
        if (mark + "</").startswith(tail) or (tail.startswith(mark) and "<" not in tail[len(mark) + 1 :] and ">" not in tail[len(mark) :]):
            return text[:start]
        start = text.rfind(mark[0], floor, start)
    return text


def _matching_close(text: str, start: int, open_tag: str, end_tag: str) -> int:
    """Where the ``end_tag`` that closes an element opened just before ``start`` begins (a tag
    of the same name inside it nests), or -1."""
    depth = 1
    pos = start
    while True:
        end = text.find(end_tag, pos)
        if end < 0:
            return -1
        depth += text.count(open_tag, pos, end) - 1
        if depth == 0:
            return end
        pos = end + len(end_tag)


def _untyped(text: str) -> Any:
    """A value with no schema: JSON where it is JSON (a number, ``true``), else the text."""
    try:
        value = loads_json(text)
    except (ValueError, RecursionError):
        return text
    return value if not isinstance(value, (dict, list)) and dumps_finite(value) is not None else text


class PythonicReader(CallReader):
    """``[get_weather(city="Paris"), f(x=1)]``: Python calls, in a list or one a line (LFM2,
    MiniCPM's fenced block). Each argument is a Python literal, converted to JSON (``True`` is
    ``true``, ``'x'`` is ``"x"``) and checked against the tool's schema; arguments are written
    as each one ends. A call that is not Python literal syntax keeps its text as content."""

    _CALL_START = re.compile(r"\s*(?:```(?:python|py)?\s*)?\[?\s*(?P<name>[A-Za-z_][\w.\-]*)\s*\(")

    def __init__(self, calls: ToolCalls, schemas: Schemas | None = None, *, opened: bool = False) -> None:
        super().__init__(calls, schemas)
        self.opened = opened  # the opening delimiter holds the list's "["

    def open(self, call: ToolCallBlock) -> None:
        call.state.update(buffer=[], starts=[], done=0)

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        call.state["buffer"].append(piece.text)
        call.state["starts"].append(piece.start)

    def ends_whole(self, call: ToolCallBlock) -> bool:
        # The list is whole once its brackets close, even where they do not match
        # (``[foo(x=1])]`` is malformed, not cut short), counted outside quotes as Python
        # reads them or, for text that is no Python (``[don't panic] done``, a triple-quoted
        # string), ignoring quotes.
        text = ("[" if self.opened else "") + "".join(call.state.get("buffer", []))
        if any(depth <= 0 and char in ")]}" for _, char, depth in _structure(text)):
            return True
        depth = 0
        for bracket in _BRACKET.finditer(text):
            depth += 1 if bracket.group() in "([{" else -1
            if depth <= 0:
                return True
        return False

    def prompt_ended(self, call: ToolCallBlock) -> None:
        call.state["prompt_parts"] = len(call.state["buffer"])

    def close(self, call: ToolCallBlock) -> None:
        # The calls are read when the block is complete; ``_read`` makes each a child call.
        parts: list[str] = call.state.get("buffer", [])
        text = "".join(parts)
        opened = self.opened  # (the opening delimiter holds the list's "[")
        opening = "[" if opened else ""
        starts: list[int] = call.state.get("starts", [])
        in_prompt = call.state.get("prompt_parts", 0)
        if in_prompt and len(starts) == len(parts):
            # A prefill that ends inside the block (a handover): the calls it wrote whole are
            # the prompt's, and the completion's list goes on after them.
            listed = (opening + text).lstrip().startswith("[")
            cut = _prompt_cut(opening + "".join(parts[:in_prompt]), listed) - len(opening)
            if cut > 0:
                parts, starts = _parts_from(parts, starts, cut, "," if listed else "")
                text, opened = "".join(parts), listed
                opening = "[" if opened else ""
        contiguous = all(start + len(part) == after for start, part, after in zip(starts, parts, starts[1:]))
        # ``[get_weather(city="Paris")] Here is the forecast``: the list is the calls, the text
        # after it is no part of them.
        split = _after_the_list(opening + text)
        if split is not None and starts and contiguous:
            rest = text[split - len(opening) :]
            if rest.rstrip().removesuffix("<|python_end|>").strip() and _python_calls((opening + text)[:split]):
                call.after_value.append((starts[0] + split - len(opening), rest))
                text = text[: split - len(opening)]
        if opened:
            text = "[" + text.rstrip().removesuffix("<|python_end|>")
        found = _python_calls(text)
        if call.cut_short and starts and contiguous and self._read_cut_call(call, text, found, starts[0] - len(opening)):
            return
        for name, arguments in found:
            _python_call_read(self, self.calls.child(call), name, arguments, call.start)
        if not call.children:
            if text.strip():
                call.error = "the calls are not Python calls with literal arguments"
            return
        missing = len(found) < _call_count(text)
        unnamed = any(child.index is None for child in call.children)
        if (missing or unnamed) and starts and contiguous and self._place(call, text, found, starts[0] - len(opening)):
            return
        if (missing or unnamed) and starts and contiguous and self._place_before_a_break(call, text, found, starts[0] - len(opening)):
            return
        if missing:
            self.calls.diagnose(
                "malformed_tool_call",
                call.start,
                "a call in the list is not a Python call with literal arguments; its siblings are kept",
            )

    def _read_cut_call(self, call: ToolCallBlock, text: str, found: list[tuple[str, dict[str, Any]]], origin: int) -> bool:
        """A list the text ends in, inside its last call (``[f(a=1), g(b=2, c=``): the calls
        before it stand, and the last one is a call cut short, with the arguments written
        whole before the cut (the last one's value so far, where it reads as one), as a call
        cut short in any other syntax is. False where the list is not so."""
        elements, rest = _elements_before_a_break(text)
        if rest is None or len(elements) != len(found):
            return False
        last = _cut_call(text[rest:])
        placed = _placed(found, elements)
        if last is None or placed is None:
            return False
        for (name, arguments), where in zip([*found, last], [*placed, (rest, len(text.rstrip()))]):
            child = self.calls.child(call)
            child.state["element"] = (origin + where[0], origin + where[1])
            _python_call_read(self, child, name, arguments, call.start)
        return True

    def _place(self, call: ToolCallBlock, text: str, found: list[tuple[str, dict[str, Any]]], origin: int) -> bool:
        """Where each call of the list is written (``origin``: where ``text`` starts in the
        input), so that a call that is none (a tool ``tools=`` does not have, no Python) is
        given back as its text; the calls that are no Python become elements of their own.
        False where the calls cannot be placed."""
        elements = [(origin + start, origin + end, piece) for start, end, piece in _list_elements(text)]
        placed = _placed(found, elements)
        if placed is None:
            return False
        for child, where in zip(call.children, placed):
            child.state["element"] = where
        if len(found) < len(elements):
            taken = set(placed)
            for start, end, _ in elements:
                if (start, end) not in taken:
                    child = self.calls.child(call)
                    child.state["element"] = (start, end)
                    child.error = "the call is not a Python call with literal arguments"
            call.children.sort(key=lambda child: child.state["element"])
            return True
        return False


    def _place_before_a_break(
        self, call: ToolCallBlock, text: str, found: list[tuple[str, dict[str, Any]]], origin: int
    ) -> bool:
        """Where the list's elements cannot all be told apart (a quote left unescaped runs to
        its end: ``[f(a=1), g(b='x 'y')]``): the calls read stand if they are its first
        elements, and the text from the first element that is none on is given back as it was
        written. False where the calls read are not those first elements."""
        elements, rest = _elements_before_a_break(text)
        if rest is None:
            return False
        # Python may read calls in that rest which the break hides from the count (a quote of
        # one kind inside a string of the other): where none of them is a call, the rest is
        # given back whole, as one element that is no call.
        after = call.children[len(elements) :]
        if len(found) > len(elements) and all(child.index is None for child in after):
            found = found[: len(elements)]
            del call.children[len(elements) :]
        else:
            after = []
        placed = _placed(found, elements)
        if placed is None or len(placed) != len(elements) or len(call.children) != len(placed):
            return False
        for child, (start, end) in zip(call.children, placed):
            child.state["element"] = (origin + start, origin + end)
        end = len(text.rstrip())
        if rest < end:
            child = self.calls.child(call)
            child.state["element"] = (origin + rest, origin + end)
            if len(after) == 1 and after[0].rejected:
                child.rejected = after[0].rejected  # (the one call Python read there: no tool's)
            else:
                child.error = "the call is not a Python call with literal arguments"
        return True


def _elements_before_a_break(text: str) -> tuple[list[tuple[int, int, str]], int | None]:
    """The elements of the list ``text`` opens with, up to where it can no longer be told
    into elements (a quote that never closes, a list that does not), and where that rest
    begins (None where the whole list is told into elements, or ``text`` opens none)."""
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        return [], None
    elements: list[tuple[int, int, str]] = []
    begin = start + 1
    for i, char, depth in _structure(text, start):
        if (char == "," and depth == 1) or (char == "]" and depth == 0):
            piece = text[begin:i]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                elements.append((begin + lead, begin + len(piece.rstrip()), piece.strip()))
            begin = i + 1
            if depth == 0:
                return elements, None
    rest = text[begin:]
    return elements, begin + len(rest) - len(rest.lstrip())


def _cut_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The call ``text`` is, cut short (``f(a=1, b=``): its name and its arguments, the last
    one's value so far included where it reads as a literal (``{}`` where the arguments
    before it are no Python: each try reads the whole text, so there are three at most)."""
    opened = PythonicReader._CALL_START.match(text)
    if opened is None:
        return None
    name, inner = opened.group("name"), text[opened.end() :]
    last_comma = -1
    for at, char, depth in _structure(inner):
        if depth < 0:
            return None  # (the call closed, or a bracket that closes none: ``f(x=1]`` is no call cut short)
        if char == "," and depth == 0:
            last_comma = at
    for cut in (len(inner.rstrip()), *([last_comma] if last_comma >= 0 else []), 0):
        node = _parse_call(f"{name}({inner[:cut]})")
        read = _call_of(node) if node is not None else None
        if read is not None:
            return read
    return None


def convert_value_literal(value: Any, schema: dict[str, Any] | None) -> Any:
    """A Python literal's value, as the tool's schema wants it: a quoted number or boolean
    (``hours="2"``) becomes one where the schema says so. A literal of another type keeps it
    (``query={'a': 1}`` for a string parameter is that object, as vLLM and SGLang read it): the
    model wrote its type, where a string's text may only be how it quoted a number."""
    types = _types(schema)
    if isinstance(value, str) and types and "string" not in types:
        return convert_value(value, schema)
    return value


def _python_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls in ``[f(a=1), g(b="x")]`` (or one a line, or LFM2's JSON objects), with their
    keyword arguments. A list that is not Python as a whole is read call by call: a call that
    does not parse (a quote left unescaped, a positional argument) is dropped, its siblings
    kept."""
    body = _unfenced(text)
    if len(body) > 1_000_000:
        return []
    as_json = _json_calls(body)
    if as_json is not None:
        return as_json
    if not body.startswith("["):
        lines = [body[start:end] for start, end in _call_lines(body)]
        body = "[" + ", ".join(lines) + "]"
    body = _dashed_names_renamed(_keyword_arguments_renamed(body))
    nodes = _parse_list(body)
    if nodes is None:
        # Raw newlines and NUL bytes inside a string are not Python; escaped, they are.
        escaped = _escaped_in_strings(body)
        nodes = _parse_list(escaped)
        if nodes is None and _LEADING_ZEROS.search(escaped):
            # ``month=07``: an integer as a date writes it, which Python 2 read as octal and
            # Python 3 refuses; the number it stands for is plain.
            nodes = _parse_list(_without_leading_zeros(escaped))
    if nodes is None and (requoted := _requoted(body)) is not None:
        nodes = _parse_list(_escaped_in_strings(requoted))
    if nodes is None:
        # (A list cut short has no closing bracket: its last call may still be whole.)
        inner = body[1:-1] if body.rstrip().endswith("]") else body[1:]
        nodes = [node for segment in _top_level_segments(inner) if (node := _parse_call(segment)) is not None]
    calls = []
    for node in nodes:
        call = _call_of(node)
        if call is not None:
            calls.append(call)
    return calls


def _list_elements(text: str) -> list[tuple[int, int, str]]:
    """The elements of the list ``text`` opens with (after whitespace), or its lines where it
    opens no list: where each starts and ends in ``text``, whitespace around it left out, and
    its text. Empty for a list that does not close, or a fenced block."""
    start = len(text) - len(text.lstrip())
    elements: list[tuple[int, int, str]] = []
    if text.startswith("```", start):
        return []
    if not text.startswith("[", start):
        # One call a line (OLMo 3).
        return [(start, end, text[start:end]) for start, end in _call_lines(text)]
    elements, rest = _elements_before_a_break(text)
    return elements if rest is None else []


def _placed(found: list[tuple[str, dict[str, Any]]], elements: list[tuple[int, int, str]]) -> list[tuple[int, int]] | None:
    """Which element each call read was written in: in order, the next element that reads as
    that call alone (None where the calls cannot be placed so)."""
    placed: list[tuple[int, int]] = []
    at = 0
    for call in found:
        while at < len(elements) and _python_calls("[" + elements[at][2] + "]") != [call]:
            at += 1
        if at == len(elements):
            return None
        placed.append(elements[at][:2])
        at += 1
    return placed


def _prompt_cut(text: str, listed: bool) -> int:
    """Where the calls ``text`` (a prompt's part of a block) writes whole end (0 for none):
    after its last separator, a top-level comma of a list or a newline between lines, or at
    its end where a whole call ends it."""
    separator, level = (",", 1) if listed else ("\n", 0)
    cut = 0
    depth = 0
    unclosed: list[str] = []
    for i, char, depth in _structure(text, unclosed=unclosed):
        if char == separator and depth == level:
            cut = i + 1
    if depth == level and not unclosed[0] and text.rstrip().endswith(")"):
        return len(text)
    return cut


def _parts_from(parts: list[str], starts: list[int], cut: int, separator: str) -> tuple[list[str], list[int]]:
    """The pieces of text from ``cut`` on (where each starts), a separator and whitespace that
    open them left out."""
    offset = 0
    for index, part in enumerate(parts):
        if offset + len(part) > cut:
            rest, rest_starts = [part[cut - offset :], *parts[index + 1 :]], [starts[index] + cut - offset, *starts[index + 1 :]]
            break
        offset += len(part)
    else:
        return [], []
    joined = "".join(rest)
    lead = len(joined) - len(joined.lstrip())
    if separator and joined[lead : lead + 1] == separator:
        lead += 1
    return _parts_from(rest, rest_starts, lead, "") if lead else (rest, rest_starts)


def _call_count(text: str) -> int:
    """How many calls a list of Python calls holds, by its top-level commas or lines."""
    body = _unfenced(text)
    if body.startswith("["):
        return len(_top_level_segments(body[1 : body.rfind("]") if "]" in body else len(body)]))
    return len(_call_lines(body))


def _unfenced(text: str) -> str:
    """The calls, without the Markdown fence a model may put around them."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body.strip()


def _json_calls(body: str) -> list[tuple[str, dict[str, Any]]] | None:
    """``[{"name": ..., "arguments": {...}}]`` or one such object (LFM2 writes both)."""
    if not body.startswith(("[{", "{")):
        return None
    try:
        value = loads_json(body)
    except (ValueError, RecursionError):
        return None
    if dumps_finite(value) is None:
        return None  # a number too large for JSON to write back (1e999)
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        arguments: Any = next((item[key] for key in ARGUMENT_KEYS if key in item), {})
        if isinstance(arguments, str):
            try:
                arguments = loads_json(arguments)
            except (ValueError, RecursionError):
                return None
            if dumps_finite(arguments) is None:
                return None
        if not isinstance(arguments, dict):
            return None
        calls.append((item["name"], arguments))
    return calls


# An argument a schema may well name (``from``, ``in``, ``class``) is a Python keyword, so
# ``f(from="SFO")`` is no Python; the name is read under this prefix and given back after.
_KEYWORD_PREFIX = "_chatcodec_keyword_"
_KEYWORD_ARGUMENT = re.compile(r"\b(" + "|".join(keyword.kwlist) + r")\s*=(?!=)")


def _keyword_arguments_renamed(text: str) -> str:
    """``text`` with each argument named by a Python keyword (outside strings, after ``(`` or
    ``,``) prefixed, so that Python parses it."""
    if _KEYWORD_ARGUMENT.search(text) is None:
        return text
    starts = set()
    previous = ""
    for i, char, _ in _structure(text):
        if char.isspace():
            continue
        if previous in "(," and _KEYWORD_ARGUMENT.match(text, i) is not None:
            starts.add(i)
        previous = char
    if not starts:
        return text
    return "".join(_KEYWORD_PREFIX + char if i in starts else char for i, char in enumerate(text))


# A call's name with a dash in it (``read-file``, as MCP tools are named): no Python name, so
# each dash is written, for Python to parse it, as a letter no name the field uses holds.
_DASHED_CALL = re.compile(r"(?<![\w.\-])[A-Za-z_][\w.]*(?:-[\w.]+)+(?=\s*\()")
_DASH_STAND_IN = "\u01c2"


def _dashed_names_renamed(text: str) -> str:
    """``text`` with the dashes of each call's name, outside strings, made Python letters
    (``_call_of`` writes them back)."""
    if "-" not in text or _DASHED_CALL.search(text) is None:
        return text
    outside = {i for i, _, _ in _structure(text)}
    return _DASHED_CALL.sub(
        lambda match: match.group().replace("-", _DASH_STAND_IN) if match.start() in outside else match.group(), text
    )


def _parse_list(body: str) -> list[ast.expr] | None:
    try:
        tree = expression(body)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    if not isinstance(tree, (ast.List, ast.Tuple)):
        return None
    return list(tree.elts)


def _parse_call(segment: str) -> ast.expr | None:
    try:
        return expression(segment.strip())
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None


def _structure(text: str, start: int = 0, unclosed: list[str] | None = None) -> Iterator[tuple[int, str, int]]:
    """Each character of ``text`` outside quotes (quotes as Python reads them, triple quotes
    too), from ``start``, with the bracket depth after it. At the end, the quote left open
    (``""`` for none) is appended to ``unclosed``, where given."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote[0] and text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif char in "'\"":
            quote = char * 3 if text.startswith(char * 3, i) else char
            i += len(quote) - 1
        else:
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            yield i, char, depth
        i += 1
    if unclosed is not None:
        unclosed.append(quote)


def _after_the_list(text: str) -> int | None:
    """Where the list that ``text`` opens with (after whitespace) ends, its closing bracket
    included (None when it opens with no list or does not close it)."""
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        return None
    end = next((i for i, char, depth in _structure(text, start) if depth == 0 and char in ")]}"), None)
    # A ")" or "}" that closes the list (``[foo(x=1))]``) is no end of it: the brackets do
    # not match, and the block is read whole (where no character can be left out).
    return end + 1 if end is not None and text[end] == "]" else None


# An integer written with leading zeros (not a float, ``007.5``, nor a prefixed ``0x1f``).
_LEADING_ZEROS = re.compile(r"(?<![\w.])0+(?=\d)(?=\d+(?![\w.]))")


# A keyword argument's string opening, and what may follow a string argument's closing quote:
# the next keyword argument, or the call's end.
_STRING_ARGUMENT = re.compile(r"""[(,]\s*[A-Za-z_]\w*\s*=\s*(['"])""")
_CLOSING = {quote: re.compile(quote + r"(?=\s*(?:,\s*[A-Za-z_]\w*\s*=|\)\s*(?:[,\]\n]|$)))") for quote in "'\""}


def _requoted(body: str) -> str | None:
    """A list of calls whose string arguments hold their own quote unescaped (a shell command:
    ``command='sed -n '1,2p' f'``), with those quotes escaped: each string ends at the first of
    its quotes that the next argument or the call's end follows, so that no reading swallows
    an argument (``a='it's', b='he's'`` is two). None where nothing was unescaped, or a string
    has no such end."""
    if len(body) > 100_000:
        return None
    out: list[str] = []
    pos = 0
    changed = False
    while (opening := _STRING_ARGUMENT.search(body, pos)) is not None:
        quote, start = opening.group(1), opening.end()
        if body.startswith(quote * 2, start):  # a triple-quoted string: read as written
            end = body.find(quote * 3, start + 2)
            if end < 0:
                return None
            out.append(body[pos : end + 3])
            pos = end + 3
            continue
        closing = _CLOSING[quote].search(body, start)
        while closing is not None and _escaped_at(body, closing.start()):
            closing = _CLOSING[quote].search(body, closing.start() + 1)
        if closing is None:
            return None
        inner = body[start : closing.start()]
        escaped = _quote_escaped(inner, quote)
        changed = changed or escaped != inner
        out.append(body[pos:start] + escaped)
        pos = closing.start()
    return "".join(out) + body[pos:] if changed else None


def _escaped_at(text: str, at: int) -> bool:
    """Is the character at ``at`` escaped (an odd number of backslashes before it)?"""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return bool(count & 1)


def _quote_escaped(text: str, quote: str) -> str:
    """``text`` with each ``quote`` in it not yet escaped escaped."""
    return "".join("\\" + char if char == quote and not _escaped_at(text, i) else char for i, char in enumerate(text))


def _escaped_in_strings(text: str) -> str:
    """``text`` with the raw newlines and NUL bytes inside its quotes escaped (a newline
    between a call's arguments stays one)."""
    if "\n" not in text and "\x00" not in text:
        return text
    outside = {i for i, _, _ in _structure(text)}
    return "".join(
        ("\\n" if char == "\n" else "\\x00" if char == "\x00" else char) if i not in outside else char
        for i, char in enumerate(text)
    )


def _without_leading_zeros(text: str) -> str:
    """``text`` with the leading zeros of its integers outside quotes left out."""
    outside = {i for i, _, _ in _structure(text)}
    return _LEADING_ZEROS.sub(lambda m: "" if m.start() in outside else m.group(), text)


def _call_lines(text: str) -> list[tuple[int, int]]:
    """Where each line of calls written one a line starts and ends, whitespace around it left
    out: a newline inside a call's brackets or quotes (a string written over lines) is the
    call's own. A comma outside them parts a line too (``f(a=1), g(b=2)``, a list without its
    brackets). Where a quote or a bracket never closes, each line is a call's, so that the
    lines after the one that does not close are read still."""
    breaks: list[int] = []
    unclosed: list[str] = []
    depth = 0
    for i, char, depth in _structure(text, unclosed=unclosed):
        if char in "\n," and depth == 0:
            breaks.append(i)
    if unclosed[0] or depth != 0:
        breaks = [i for i, char in enumerate(text) if char == "\n"]
    lines: list[tuple[int, int]] = []
    start = 0
    for end in [*breaks, len(text)]:
        line = text[start:end]
        if line.strip():
            lead = len(line) - len(line.lstrip())
            lines.append((start + lead, start + len(line.rstrip())))
        start = end + 1
    return lines


def _top_level_segments(text: str) -> list[str]:
    """Split at commas outside brackets and quotes (quotes as Python reads them)."""
    segments: list[str] = []
    start = 0
    for i, char, depth in _structure(text):
        if char == "," and depth == 0:
            segments.append(text[start:i])
            start = i + 1
    segments.append(text[start:])
    return [segment for segment in segments if segment.strip()]


def _call_of(node: ast.expr) -> tuple[str, dict[str, Any]] | None:
    """A call with keyword arguments whose values are literals (None if it is not one)."""
    if not isinstance(node, ast.Call) or node.args:
        return None
    name = _dotted(node.func)
    if name is None:
        return None
    name = name.replace(_DASH_STAND_IN, "-")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        try:
            value = _literal(keyword.value)
        except (ValueError, SyntaxError, RecursionError, TypeError):
            return None
        if keyword.arg is None:  # **{"a": 1}
            if not isinstance(value, dict):
                return None
            arguments.update(value)
        else:
            key = keyword.arg.removeprefix(_KEYWORD_PREFIX)
            if key in arguments:
                return None  # ``f(t=1, t=2)``: Python's compiler refuses it, and one value would be lost
            arguments[key] = value
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None  # bytes, sets of odd things, infinity, nesting past the limit: not JSON
    return name, arguments


# Models trained on JSON write its literals in Python calls too (``f(enabled=true)``); a name
# is no Python literal, so these three are the only ones read.
_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None}


def _literal(node: ast.expr) -> Any:
    """A literal's value; a set is a list (in the order written), an f-string with no
    placeholders its text, JSON's ``true``, ``false`` and ``null`` theirs."""
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.Set):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.JoinedStr) and all(isinstance(part, ast.Constant) for part in node.values):
        return "".join(str(part.value) for part in node.values if isinstance(part, ast.Constant))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise ValueError("a dict unpacking")
        return {_literal(key): _literal(value) for key, value in zip(node.keys, node.values) if key is not None}
    return ast.literal_eval(node)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class GemmaReader(CallReader):
    """``call:NAME{key:<|"|>text<|"|>,n:2}``: Gemma 4's arguments, keys bare and strings quoted by
    the ``<|"|>`` token, written out as JSON while they arrive: each key as soon as it ends, a
    string value (where the schema keeps it a string) character by character, any other value
    (a number, ``true``, a nested object) once it ends, converted by the tool's schema."""

    QUOTE = '<|"|>'

    _bare = False  # (the block of calls being read was opened by a bare ``call:``)

    def open(self, call: ToolCallBlock) -> None:
        opened_by = call.spans[0][3]
        if opened_by != "CALL_NEXT":
            self._bare = opened_by == "BARE_CALL_OPEN"
        call.state.update(
            mode="key", held="", part=[], members=0, depth=0, quoted=False, json_quoted=False, escaped=False, values={},
            bare=self._bare,
        )  # fmt: skip

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "TOOL_NAME":
            call.name_parts.append(piece.text)
            return
        if call.index is not None and call.error is not None and call.state.get("rest_is_text"):
            # After the error that stopped the reading, the call's text is no part of it.
            call.after_value.append((piece.start, piece.text))
            return
        if call.index is None or call.error is not None:
            call.state["part"].append(piece.text)  # kept for the error message only
            return
        held, call.state["held"] = call.state["held"], ""
        call.state["read_to"] = piece.start + len(piece.text)
        self._read(call, held + piece.text, final=False, start=piece.start - len(held))

    def delimiter(self, call: ToolCallBlock, piece: Piece) -> None:
        if call.name is None:
            self.calls.name_complete(call, "".join(call.name_parts).strip(), piece.start)
            if call.index is not None:
                if call.spans[0][3] == "BARE_CALL_OPEN":
                    # (Said once the name and its brace show: "call:" alone may begin prose.)
                    self.calls.diagnose("noncanonical", call.start, f"tool call {call.index} is written without its opening tag")
                self.calls.arguments_text(call, "{")

    def ends_with_the_text(self, call: ToolCallBlock) -> bool:
        return bool(call.state.get("bare"))

    def ends_whole(self, call: ToolCallBlock) -> bool:
        if call.name is None:
            # A bare ``call:`` followed by words, not a name and its arguments, is text whole.
            return any(char.isspace() for char in "".join(call.name_parts).strip())
        return call.state.get("mode") == "end"

    def ended_by(self, call: ToolCallBlock, piece: Piece) -> None:
        # ``}call:`` between two calls of one block: its brace closes this call's arguments,
        # where they are open (after arguments closed already, or a reading that stopped at an
        # error, it is the delimiter's alone).
        if call.index is not None and call.error is None and call.state["mode"] != "end":
            self.text(call, Piece("GEMMA_ARGS", "}", piece.start))

    def close(self, call: ToolCallBlock) -> None:
        if call.name is None and self.ends_with_the_text(call):
            return  # (no arguments ever opened after a bare ``call:``: no call, its text kept)
        if call.name is None:
            self.calls.name_complete(call, "".join(call.name_parts).strip(), call.start)
            if call.index is not None:
                self.calls.arguments_text(call, "{")
        if call.index is None:
            return
        state = call.state
        if call.error is not None:
            if state["mode"] != "end":
                self._close_as_written(call)  # (the reading stopped at the error)
            return
        if state["held"] and state["mode"] == "string" and _TRAILING_BRACE.fullmatch(state["held"]):
            # ``command:<|"|>ls}``: the string's closing quote is left out before the arguments'
            # closing brace (Gemma 4 writes this).
            state["held"] = ""
            self._end_string(call)
            self.calls.arguments_text(call, "}")
            state["mode"] = "end"
            self.calls.diagnose(
                "noncanonical", call.start, f"tool call {call.index}: a string's closing {self.QUOTE} is left out before the closing brace"
            )
        if state["held"]:
            held, state["held"] = state["held"], ""
            self._read(call, held, final=True, start=state["read_to"] - len(held))
        if state["mode"] == "atom" and call.error is None and not state["quoted"]:
            if "".join(state["part"]).rstrip().endswith("}"):
                # ``{a:[1,2}``: a bracket left open, and the brace that closes the arguments
                # read as its end. The value is kept as written, a string (see ``_atom``).
                value = self._close_as_written(call)
                state.setdefault("not_a_value", f"{value[:40]!r} is not a value; kept as a string")
                state["values"][state["key"]] = value
        if state["mode"] != "end" and call.error is None:
            call.error = "the arguments end before their closing brace"
            self._close_as_written(call)
        if call.error is None:
            call.parsed, call.has_parsed = state["values"], True
            call.error = state.get("not_a_value")

    def _close_as_written(self, call: ToolCallBlock) -> str:
        """Arguments that end inside a value (a ``<|"|>`` left out inside a nested object
        swallows the closing brace): that value is kept as the text the model wrote, a JSON
        string, and the object is closed, so that the arguments stay JSON. The value kept."""
        state = call.state
        mode = state["mode"]
        value = "".join(state["part"])
        if mode == "string":
            ending = '"}' if state.get("streamed") else dumps_text(value) + "}"
        elif mode == "atom":
            # (The brace that closes the arguments, read as the value's end, is not the value's.)
            value = value.rstrip()
            value = value[:-1].strip() if value.endswith("}") else value.strip()
            kept: Any = value
            if call.cut_short:
                # The text ended in the value: what was written of it is typed by the schema,
                # as the last value of any other syntax's call cut short is (``beta:1``).
                read = _gemma_value("{k:" + value + "}", self.QUOTE)
                if isinstance(read, dict) and "k" in read:
                    kept = convert_value_literal(read["k"], self._schema(call))
            ending = dumps_text(kept) + "}"
        elif mode == "value":
            ending = '""}'
        else:
            ending = "}"  # (between members: a key cut short is no member)
            if value.strip() and not call.cut_short and "key_at" in state:
                # ``{city:<|"|>Paris<|"|>,days<tool_call|>``: a key no value follows, the call
                # closed after it, is no member: text around the call.
                call.after_value.append((state["key_at"], value))
        self.calls.arguments_text(call, ending)
        state["mode"] = "end"
        return value

    # -- the arguments, piece by piece --------------------------------------------------------

    def _read(self, call: ToolCallBlock, text: str, *, final: bool, start: int | None = None) -> None:
        """Read ``text`` (at ``start`` in the input, where known) on from where the call stands."""
        state = call.state
        pos = 0
        while pos < len(text) and call.error is None:
            mode = state["mode"]
            if mode == "key":
                if not state["members"] and not state["part"]:
                    # ``call:get_status{}``: no parameters at all.
                    while pos < len(text) and text[pos] in " \t\n\r":
                        pos += 1
                    if pos < len(text) and text[pos] == "}":
                        state["mode"] = "end"
                        self.calls.arguments_text(call, "}")
                        pos += 1
                        continue
                    if pos >= len(text):
                        return
                colon = text.find(":", pos)
                if colon < 0:
                    if not state["part"] and start is not None:
                        state["key_at"] = start + pos  # (where a key no value follows is kept from)
                    state["part"].append(text[pos:])
                    return
                key = ("".join(state["part"]) + text[pos:colon]).strip()
                state["part"] = []
                if not key or state["members"] and not key:
                    call.error = "a parameter without a name"
                    self._rest_is_text(call, text, colon, start)
                    return
                if _JSON_STRING.fullmatch(key):
                    # ``{"city":"Paris"}``: a key in JSON's quotes, as a model used to JSON
                    # writes it; the key is the string's value.
                    key = unescape_json_string(key[1:-1])
                    if not state.get("quoted_key"):
                        state["quoted_key"] = True
                        self.calls.diagnose(
                            "noncanonical", call.start, f"tool call {call.index}: a parameter's name is written in JSON's quotes"
                        )
                state["key"] = key
                separator = ", " if state["members"] else ""
                self.calls.arguments_text(call, separator + dumps_text(key) + ": ")
                state["members"] += 1
                state["mode"] = "value"
                pos = colon + 1
            elif mode == "value":
                while pos < len(text) and text[pos] in " \t\n\r":
                    pos += 1
                if pos >= len(text):
                    return
                if text.startswith(self.QUOTE, pos):
                    state["mode"] = "string"
                    state["streamed"] = self._as_string(call)
                    if state["streamed"]:
                        self.calls.arguments_text(call, '"')
                    pos += len(self.QUOTE)
                elif self.QUOTE.startswith(text[pos:]) and not final:
                    state["held"] = text[pos:]
                    return
                else:
                    state["mode"] = "atom"
            elif mode == "string":
                end = text.find(self.QUOTE, pos)
                if end < 0:
                    keep = _held_prefix(text, self.QUOTE) if not final else 0
                    if not final and not keep:
                        # A brace the string ends with may be the arguments' closing one, where
                        # the model left out the string's closing quote: held until more shows.
                        brace = _TRAILING_BRACE.search(text, pos)
                        keep = len(brace.group()) if brace else 0
                    chunk = text[pos : len(text) - keep]
                    self._string_text(call, chunk)
                    state["held"] = text[len(text) - keep :] if keep else ""
                    return
                self._string_text(call, text[pos:end])
                self._end_string(call)
                pos = end + len(self.QUOTE)
            elif mode == "atom":
                pos = self._atom(call, text, pos, final)
                if pos < 0:
                    return
            elif mode == "after":
                while pos < len(text) and text[pos] in " \t\n\r":
                    pos += 1
                if pos >= len(text):
                    return
                if text[pos] == ",":
                    state["mode"] = "key"
                elif text[pos] == "}":
                    state["mode"] = "end"
                    self.calls.arguments_text(call, "}")
                else:
                    call.error = f"unexpected {text[pos]!r} after a parameter's value"
                    self._rest_is_text(call, text, pos, start)
                    return
                pos += 1
            else:  # after the closing brace: only whitespace
                if start is not None:
                    # ``{a:1} and more``: the call is whole, the rest is text (content).
                    call.after_value.append((start + pos, text[pos:]))
                elif text[pos:].strip():
                    call.error = "text after the arguments' closing brace"
                return

    def _rest_is_text(self, call: ToolCallBlock, text: str, pos: int, start: int | None) -> None:
        """The reading stopped at ``pos`` of ``text``: the arguments are closed as they stand,
        and the rest of the call (``second:<|"|>two<|"|>}`` after a string that ran on) is text
        around it, with a diagnostic, as text after a call's closing brace is."""
        if start is None:  # pragma: no cover - every piece read says where it starts
            return
        call.state["rest_is_text"] = True
        call.after_value.append((start + pos, text[pos:]))

    def _as_string(self, call: ToolCallBlock) -> bool:
        """Is the parameter being read a string, as the schema (or its absence) says?"""
        types = _types(self._schema(call))
        return not types or "string" in types

    def _schema(self, call: ToolCallBlock) -> dict[str, Any] | None:
        schema = self.schemas.get(call.name or "", {}).get(call.state.get("key", ""))
        return schema if isinstance(schema, dict) else None

    def _string_text(self, call: ToolCallBlock, chunk: str) -> None:
        if not chunk:
            return
        if call.state["streamed"]:
            self.calls.arguments_text(call, dumps_text(chunk)[1:-1])
        call.state["part"].append(chunk)

    def _end_string(self, call: ToolCallBlock) -> None:
        state = call.state
        text = "".join(state["part"])
        state["part"] = []
        if state["streamed"]:
            self.calls.arguments_text(call, '"')
            value: Any = text
        else:
            value = convert_value_literal(text, self._schema(call))
            self.calls.arguments_text(call, dumps_text(value))
        state["values"][state["key"]] = value
        state["mode"] = "after"

    def _comma_in_string(self, text: str, start: int, final: bool) -> bool | None:
        """Is the comma before ``start``, after a bare value of prose, inside a string whose
        opening quote is left out? No where the next parameter's key follows it (``a:b c,d:1``);
        yes where anything else does (``query:Paris, France<|"|>``, ``q:a, b, c}``: a key is a
        bare word and its colon); None while the text ends before that shows (held for more)."""
        match = _NEXT_KEY.match(text, start)
        if match is None:  # (the pattern matches the empty string)
            return True
        if match.group("colon"):
            return False
        if match.end() < len(text) or final:
            return True
        # The text ends inside what may still be a key: wait, unless it is too long for one.
        return None if match.end() - start < _COMMA_LOOKAHEAD else True

    def _unopened_string(self, before: str, depth: int) -> str | None:
        """``before``, the value's text up to a quote, with the string that quote closes
        opened, where the string's opening quote was left out; None where the quote opens one.
        At the top level the whole value is the string; inside a nested object or list
        (``{city:Tokyo<|"|>}``, ``[<|"|>a<|"|>,b<|"|>]``), the prose since the member's colon or
        the item's comma."""
        if depth == 0:
            if before.strip() and before.lstrip()[0] not in "{[":
                return self.QUOTE + before + self.QUOTE
            return None
        cut = max(before.rfind(mark) for mark in ":,[{") + 1
        word = before[cut:].lstrip()
        if cut == 0 or not word or word.startswith(self.QUOTE):
            return None
        return before[: len(before) - len(word)] + self.QUOTE + word + self.QUOTE

    def _atom(self, call: ToolCallBlock, text: str, pos: int, final: bool) -> int:
        """Read a bare value (a number, a literal, a nested object or list) up to the comma or
        brace that ends it; -1 when the text ends first."""
        state = call.state
        i = pos
        while i < len(text):
            if state["quoted"]:
                end = text.find(self.QUOTE, i)
                if end < 0:
                    keep = _held_prefix(text, self.QUOTE) if not final else 0
                    state["part"].append(text[pos : len(text) - keep])
                    state["held"] = text[len(text) - keep :] if keep else ""
                    return -1
                state["quoted"] = False
                i = end + len(self.QUOTE)
                continue
            char = text[i]
            if state["json_quoted"]:
                # Inside a string a model wrote with JSON's quotes ("a, b"): only its own
                # closing quote ends it.
                if state["escaped"]:
                    state["escaped"] = False
                elif char == "\\":
                    state["escaped"] = True
                elif char == '"':
                    state["json_quoted"] = False
                i += 1
                continue
            if char == '"':
                state["json_quoted"] = True
                i += 1
                continue
            if text.startswith(self.QUOTE, i):
                before = "".join(state["part"]) + text[pos:i]
                unopened = self._unopened_string(before, state["depth"])
                if unopened is not None:
                    # ``query:weather in Tokyo<|"|>``: the string's opening quote is left out
                    # (Gemma 4 writes this), at the top level or in a nested value.
                    state["part"] = [unopened]
                    if not state.get("unopened"):
                        state["unopened"] = True
                        self.calls.diagnose(
                            "noncanonical", call.start, f"tool call {call.index}: a string's opening {self.QUOTE} is left out"
                        )
                    pos = i = i + len(self.QUOTE)
                    continue
                state["quoted"] = True
                i += len(self.QUOTE)
                continue
            if self.QUOTE.startswith(text[i:]) and char == "<" and not final:
                state["part"].append(text[pos:i])
                state["held"] = text[i:]
                return -1
            if char in "{[":
                state["depth"] += 1
            elif char in "}]":
                if state["depth"] == 0:
                    break
                state["depth"] -= 1
            elif char == "," and state["depth"] == 0:
                so_far = ("".join(state["part"]) + text[pos:i]).strip()
                if (
                    so_far
                    and so_far[0] not in "{["
                    and not _BARE_LITERAL.fullmatch(so_far)
                    and not _JSON_STRING.fullmatch(so_far)  # (a whole string in JSON's quotes)
                ):
                    # Prose, then a comma: a string whose opening quote is left out may go on
                    # past it (``query:Paris, France<|"|>``). What follows the comma says.
                    in_string = self._comma_in_string(text, i + 1, final)
                    if in_string is None:
                        state["part"].append(text[pos:i])
                        state["held"] = text[i:]
                        return -1
                    if in_string:
                        i += 1
                        continue
                break
            i += 1
        state["part"].append(text[pos:i])
        if i >= len(text):
            return -1
        raw = "".join(state["part"]).strip()
        state["part"] = []
        value = _gemma_value("{" + "k:" + raw + "}", self.QUOTE)
        if not isinstance(value, dict) or "k" not in value:
            # Kept as the text the model wrote, a string (``key:`` an empty one), and the reading
            # goes on: the arguments stay JSON and nothing of the call is lost. The call is
            # still malformed (said when it closes).
            state.setdefault("not_a_value", f"{raw[:40]!r} is not a value; kept as a string")
            converted: Any = raw
        else:
            converted = convert_value_literal(value["k"], self._schema(call))
        self.calls.arguments_text(call, _json_as_written(converted, raw) or dumps_text(converted))
        state["values"][state["key"]] = converted
        state["mode"] = "after"
        return i


# A bare value that is a number or a literal: a comma after it ends it.
_BARE_LITERAL = re.compile(r"-?[0-9][0-9.eE+-]*|true|false|null|True|False|None")
# A closing brace at the end of a string's text read so far (and the whitespace after it).
_TRAILING_BRACE = re.compile(r"\}[ \t\r\n]*\Z")
# How far past a comma in a bare value the next key's colon is looked for.
_COMMA_LOOKAHEAD = 64
# What may follow a comma in a bare value: whitespace, a bare key and its colon (the next
# parameter), or the start of one.
_NEXT_KEY = re.compile(r"[ \t\r\n]*[^\s,:{}\[\]<>\"']*[ \t\r\n]*(?P<colon>:)?")


def _held_prefix(text: str, token: str) -> int:
    """How many characters at the end of ``text`` could begin ``token`` (held for the next piece)."""
    for size in range(min(len(token) - 1, len(text)), 0, -1):
        if token.startswith(text[-size:]):
            return size
    return 0


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_GEMMA_TOKEN = re.compile(r'\s*(?:(?P<open>[{\[])|(?P<close>[}\]])|(?P<sep>[,:])|(?P<atom>[^{}\[\],:\s]+))')


# Numbers as a model trained on Python writes them (``108.``, ``.5``, ``+3``), which JSON spells
# otherwise.
_LOOSE_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


def _gemma_number(atom: str) -> str:
    """``atom`` as JSON, where it is a number JSON spells otherwise."""
    if not _LOOSE_NUMBER.fullmatch(atom):
        return atom
    try:
        json.loads(atom)
        return atom
    except ValueError:
        number = float(atom)
        whole = number.is_integer() and "." not in atom and "e" not in atom.lower()
        return json.dumps(int(number) if whole else number)


def _absent_character(text: str) -> str:
    """A character ``text`` does not hold (from the private use area, where text rarely goes)."""
    code = 0xE000
    while chr(code) in text:
        code += 1
    return chr(code)


def _gemma_value(text: str, quote: str) -> Any:
    """Gemma's argument syntax as a Python value (None if it is not that syntax)."""
    parts: list[str] = []
    strings: list[str] = []
    # Each quoted string is set aside and marked by its number between two characters the
    # text does not hold (a model may write any character, NUL included).
    mark = _absent_character(text)
    pos = 0
    while True:
        start = text.find(quote, pos)
        json_start = text.find('"', pos)
        if 0 <= json_start and (start < 0 or json_start < start):
            # A string written with JSON's quotes: read as JSON reads it.
            match = _JSON_STRING.match(text, json_start)
            if match is None:
                return None
            parts.append(text[pos:json_start])
            parts.append(f"{mark}{len(strings)}{mark}")
            try:
                strings.append(json.loads(match.group()))
            except json.JSONDecodeError:
                strings.append(match.group()[1:-1])
            pos = match.end()
            continue
        if start < 0:
            parts.append(text[pos:])
            break
        end = text.find(quote, start + len(quote))
        if end < 0:
            return None
        parts.append(text[pos:start])
        parts.append(f"{mark}{len(strings)}{mark}")
        strings.append(text[start + len(quote) : end])
        pos = end + len(quote)
    source = "".join(parts)
    # Bare keys and atoms become JSON; the quoted strings go back in as JSON strings.
    out: list[str] = []
    expect_key = [False]
    for match in _GEMMA_TOKEN.finditer(source):
        if match.group("open"):
            out.append(match.group("open"))
            expect_key.append(match.group("open") == "{")
        elif match.group("close"):
            out.append(match.group("close"))
            if len(expect_key) > 1:
                expect_key.pop()
        elif match.group("sep"):
            out.append(match.group("sep"))
            if match.group("sep") == "," and expect_key[-1] is not None:
                pass
        else:
            atom = match.group("atom")
            if mark in atom:
                number = atom[1:-1]
                if not (atom[0] == atom[-1] == mark and number.isdigit()):
                    return None  # a quoted string run together with other text: not the syntax
                out.append(dumps_text(strings[int(number)]))
            elif out and out[-1] in ("{", ","):
                in_object = expect_key[-1]
                out.append(json.dumps(atom) if in_object else _gemma_number(atom))
            else:
                out.append(_gemma_number(atom))
    try:
        value = loads_json("".join(out))
    except (ValueError, RecursionError):
        return None
    # (1e999 reads as infinity, which JSON cannot write back.)
    return value if dumps_finite(value) is not None else None


class JsonOrBuiltinReader(JsonObjectReader):
    """Llama 3.1's calls: JSON objects, or, after ``<|python_tag|>``, a built-in tool's call
    written as Python (``brave_search.call(query="x")``, which is the tool ``brave_search``
    called with ``{"query": "x"}``), read when the answer ends."""

    _BUILTIN = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\.call\s*\(")

    def text(self, call: ToolCallBlock, piece: Piece) -> None:
        if piece.kind == "BUILTIN_CALL":
            call.state.setdefault("builtin", []).append(piece.text)
        else:
            super().text(call, piece)

    def ends_whole(self, call: ToolCallBlock) -> bool | None:
        if "builtin" not in call.state:
            return super().ends_whole(call)
        # Cut short where a bracket is left open (as Python reads the text); any other text
        # is whole, a call or not.
        text = "".join(call.state["builtin"])
        depth = 0
        for _, _, depth in _structure(text):
            pass
        return depth <= 0 or _parse_call(text) is not None

    def close(self, call: ToolCallBlock) -> None:
        if "builtin" not in call.state:
            return super().close(call)
        found = self._builtin(call)
        if found is None:
            call.error = "the built-in tool's call is not NAME.call(...) with literal arguments"
            return
        _python_call_read(self, call, *found, call.start)

    def _builtin(self, call: ToolCallBlock) -> tuple[str, dict[str, Any]] | None:
        text = "".join(call.state.get("builtin", [])).strip()
        if not self._BUILTIN.match(text) or len(text) > 1_000_000:
            return None
        node = _parse_call(text)
        found = _call_of(node) if node is not None else None
        if found is None or not found[0].endswith(".call"):
            return None
        return found[0].removesuffix(".call"), found[1]


def _python_call_read(reader: CallReader, call: ToolCallBlock, name: str, arguments: dict[str, Any], position: int) -> None:
    """A call read as Python: named, and its arguments converted by the tool's schema."""
    reader.calls.name_complete(call, name, position)
    if call.index is None:
        return
    properties = reader.schemas.get(name, {})
    values = {
        key: convert_value_literal(value, schema if isinstance(schema := properties.get(key), dict) else None)
        for key, value in arguments.items()
    }
    reader.calls.arguments_text(call, dumps_text(values))
    call.parsed, call.has_parsed = values, True


READERS: dict[str, type[CallReader]] = {
    "json_object": JsonObjectReader,
    "json_or_builtin": JsonOrBuiltinReader,
    "json_list": JsonListReader,
    "json_object_or_list": JsonObjectOrListReader,
    "json_list_or_object": JsonListOrObjectReader,
    "json_objects": JsonObjectsReader,
    "key_tags": KeyTagsReader,
    "name_then_arguments": NameThenArgumentsReader,
    "xml_parameters": XmlParametersReader,
    "pythonic": PythonicReader,
    "gemma": GemmaReader,
}


def _member_text(body: str, key: str, value: object) -> str | None:
    """The text of ``key``'s value in the JSON object ``body``, as written (the decoded value
    told from the same key written inside a string)."""
    for member in re.finditer(rf'"{re.escape(key)}"\s*:\s*', body):
        try:
            found, end = STRICT_DECODER.raw_decode(body, member.end())
        except (ValueError, RecursionError):
            continue
        if found == value:
            return body[member.end() : end]
    return None

