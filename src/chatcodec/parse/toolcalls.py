"""The life of a tool call in an assistant turn: named, its arguments streamed as raw text,
finished, or kept as content when it never became a valid call.

``ToolCalls`` is the part of ``AssistantAssembler`` that owns the calls; how a call's body
names the function and holds the arguments is a call syntax's reader (``parse/readers.py``),
which reports what it reads through ``name_complete`` and ``arguments_text``. A block (the text
from a call's opening delimiter to its closing one) is one call, or, for syntaxes that write a
list, holds several (``children``).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatcodec.events import ContentDelta, Event, ReasoningDelta, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.messages import new_tool_call_id
from chatcodec.parse.json_scan import JsonWalk, first_wrong_character, is_json_object, loads_json


@dataclass
class ToolCallBlock:
    """A tool-call block being read: its text, and what has been read of its name and arguments."""

    start: int
    raw: list[str] = field(default_factory=list)  # every character of the block, delimiters too
    spans: list[tuple[str, int, int, str | None]] = field(default_factory=list)
    walk: JsonWalk | None = None  # the engine's scan of the call's JSON body
    name_parts: list[str] = field(default_factory=list)
    name: str | None = None
    given_id: str | None = None  # the id the model wrote, where the syntax has one
    arguments_key: str | None = None
    arguments_parts: list[str] = field(default_factory=list)
    arguments_as_string: list[str] | None = None
    arguments_done: bool = False
    pending: list[str] = field(default_factory=list)  # argument text read before the name
    # Text in the block that is no part of the call (after the arguments' value, between XML
    # parameters, after a list of Python calls), with where each piece starts. If it is all
    # whitespace it stays in the call; else it goes, whole, to the text around the call when
    # the call ends.
    after_value: list[tuple[int, str]] = field(default_factory=list)
    index: int | None = None
    id: str | None = None
    rejected: str | None = None
    error: str | None = None
    parsed: Any = None  # the arguments' value, when the scanner decoded it whole
    has_parsed: bool = False
    hidden: int = 0  # characters of ``raw`` that belong to the prompt (a call the prompt opened)
    children: list[ToolCallBlock] = field(default_factory=list)  # the calls of a list block
    cut_short: bool = False  # the text ended inside the block (set before the reader closes it)
    state: dict[str, Any] = field(default_factory=dict)  # what the syntax's reader keeps

    def inner_end(self) -> int:
        """Where the block's text ends, before its closing delimiter (-1 if it has none)."""
        return max((stop for kind, _, stop, _ in self.spans if kind != "delimiter"), default=-1)

    def as_delimiter(self, start: int, end: int, kind: str) -> None:
        """Text of the block after its value (``after_value``), from ``start`` to ``end``, is a
        delimiter (a call's end the model wrote where the syntax has none): it leaves the text
        that is no part of the call and the call's spans, and is a span of its own."""
        kept: list[tuple[int, str]] = []
        for at, text in self.after_value:
            if at < start:
                kept.append((at, text[: start - at]))
            if at + len(text) > end:
                cut = max(0, end - at)
                kept.append((at + cut, text[cut:]))
        self.after_value = [(at, text) for at, text in kept if text]
        spans: list[tuple[str, int, int, str | None]] = []
        for span in self.spans:
            span_kind, span_start, span_end, name = span
            if span_end <= start or span_start >= end:
                spans.append(span)
                continue
            if span_start < start:
                spans.append((span_kind, span_start, start, name))
            if span_end > end:
                spans.append((span_kind, end, span_end, name))
        spans.append(("delimiter", start, end, kind))
        spans.sort(key=lambda span: span[1])
        self.spans = spans

    def add_text(self, text: str, start: int) -> None:
        """Free text of the block: kept, with its span (one span for a run of text, so that a
        call streamed in thousands of deltas ends with a few spans, not thousands)."""
        self.raw.append(text)
        end = start + len(text)
        spans = self.spans
        if spans:
            last = spans[-1]
            if last[2] == start and last[0] == "tool_call":
                spans[-1] = ("tool_call", last[1], end, None)
                return
        spans.append(("tool_call", start, end, None))


Emit = Callable[[Event], None]
Diagnose = Callable[[str, int, str], None]
SpanSink = Callable[..., None]


class ToolCalls:
    """The calls of one assistant turn, in order, and what happens to each."""

    def __init__(
        self,
        tool_names: frozenset[str] | None,
        emit: Emit,
        diagnose: Diagnose,
        span: SpanSink,
        add_content: Callable[[str], None],
        add_reasoning: Callable[[str], None],
        *,
        invent_ids: bool = True,
        new_id: Callable[[], str] = new_tool_call_id,
    ) -> None:
        # A call the text gives no id gets a fresh one, except when reading a transcript, where
        # the conversation is what the text says and no more.
        self._invent_ids = invent_ids
        self._new_id = new_id
        self._announced_ids: list[str] = []  # ids given out already for the first calls
        self.calls: list[ToolCallBlock] = []  # accepted calls, in order
        self._tool_names = tool_names
        self._emit = emit
        self._diagnose = diagnose
        self._span = span
        self._add_content = add_content
        self._add_reasoning = add_reasoning

    # Text in a call that is no part of it goes where the call stands: the reasoning, for a
    # call inside a reasoning block that goes on after it. (Set per parser when it changes.)
    stray_as_reasoning = False
    # Called before a call's start is given (a held section opener is settled first: its text
    # comes before the call).
    before_start: Callable[[], None] | None = None

    def child(self, block: ToolCallBlock) -> ToolCallBlock:
        """A new call inside a block that holds several (an element of a list)."""
        call = ToolCallBlock(start=block.start)
        block.children.append(call)
        return call

    def arguments_text(self, call: ToolCallBlock, text: str) -> None:
        """A raw fragment of the call's arguments (held until the call has a name)."""
        if not text:
            return
        if call.index is None:
            call.pending.append(text)
            return
        call.arguments_parts.append(text)
        self._emit(ToolCallArgumentsDelta(call.index, text))

    def diagnose(self, kind: str, position: int, message: str) -> None:
        """A reader's word about a block (what it could not read, and what it kept)."""
        self._diagnose(kind, position, message)

    @property
    def tool_names(self) -> frozenset[str] | None:
        return self._tool_names

    def reuse_ids(self, ids: list[str]) -> None:
        """The first calls were announced with these ids (a stream's first delta read the
        one-shot way, read again by the engine): the calls keep them."""
        self._announced_ids = ids

    def knows(self, name: str) -> bool | None:
        """Is ``name`` one of the tools given (None when none were)?"""
        return None if self._tool_names is None else name in self._tool_names

    def name_complete(self, call: ToolCallBlock, name: str, position: int, *, listed: bool = True) -> None:
        """The call's name is read; a ``listed`` one must be among the tools given (a built-in
        tool's need not)."""
        call.name = name
        if not name:
            call.error = "the tool call has an empty name"
            return
        if listed and self._tool_names is not None and name not in self._tool_names:
            call.rejected = f"unknown tool {name!r}"
            return
        call.index = index = len(self.calls)
        if call.given_id:
            call.id = call.given_id
        elif index < len(self._announced_ids):
            call.id = self._announced_ids[index]
        else:
            call.id = self._new_id() if self._invent_ids else None
        self.calls.append(call)
        if self.before_start is not None:
            self.before_start()
        self._emit(ToolCallStart(call.index, call.id or "", name))
        pending, call.pending = call.pending, []
        if pending:
            self.arguments_text(call, "".join(pending))

    def finish(self, block: ToolCallBlock, *, closed: bool) -> None:
        """The block ended (``closed``: by its closing delimiter, not by the end of the text)."""
        if not block.children:
            if block.state.get("prompt_elements"):
                self._finish_prompt_list(block)
            else:
                self._finish_one(block, closed=closed, spans=True)
            return
        named = [call for call in block.children if call.index is not None]
        if not named:
            self._as_content(block, closed=closed)
            return
        if block.walk is not None and not block.walk.finished and closed:
            # The list's closing tag came before its JSON ended: the last call is cut short,
            # or the element the JSON stopped in, which names no call, is (its text is kept).
            last = block.children[-1]
            blamed = named[-1] if last.index is not None else last
            blamed.error = blamed.error or block.walk.error or "the list of calls ends before its JSON does"
            if last.index is not None:
                # A call's object that stops being JSON (its closing brace left out before the
                # next object): the call stands, malformed, and the rest of the list is text.
                self._keep_after_failure(block)
        left_over = self._left_over(block, named)
        for call in named:
            self._finish_one(call, closed=closed, spans=False)
        dropped = sorted(self._dropped_elements(block) + left_over)
        stray = block.after_value if any(text.strip() for _, text in block.after_value) else []
        for kind, start, end, name in _carved(block.spans, dropped + stray, self._stray_kind()):
            self._span(kind, start, end, name, None if kind in _NO_INDEX else named[0].index)
        for _, text in dropped:
            self._keep_as(self._stray_kind(), text)
        self._keep_stray_text(stray, f"the list of calls {named[0].index}-{named[-1].index}")
        block.raw, block.spans, block.after_value = [], [], []

    def _finish_prompt_list(self, block: ToolCallBlock) -> None:
        """A list of calls whose elements the prompt wrote whole (a prefill) ends with none of
        the completion's: its delimiters stay delimiters, anything else in it is text where it
        stands (with a diagnostic unless it is whitespace)."""
        kind = self._stray_kind()
        # (The completion's part of the block is the end of its text, from where the completion
        # begins: the prompt's part may have left out characters it held back.)
        written = "".join(block.raw)[block.hidden :]
        spans = block.spans
        base = spans[-1][2] - len(written) if spans else block.start
        stray = False
        for span_kind, start, end, name in spans:
            start = max(start, base)
            if end <= start:
                continue
            if span_kind == "delimiter":
                self._span(span_kind, start, end, name, None)
                continue
            text = written[start - base : end - base]
            stray = stray or bool(text.strip())
            self._span(kind, start, end)
            self._keep_as(kind, text)
        if stray:
            self._diagnose(
                "malformed_tool_call", base, f"text in a list of calls the prompt began is no call; kept as {kind}"
            )

    def _keep_after_failure(self, block: ToolCallBlock) -> None:
        """The list's text from where its JSON stopped to its end, given back as text."""
        self.keep_after(block, block.walk.failed_at if block.walk is not None else -1)

    def keep_after(self, block: ToolCallBlock, at: int, *, closing: str = "") -> None:
        """The block's text from ``at`` to its end is no part of its call: given back as text
        when the call finishes (``after_value``). (Not where it is only ``closing``, the
        bracket that closes the body, and whitespace.)"""
        end = block.inner_end()
        if block.start <= at < end and not any(text.strip() for _, text in block.after_value):
            written = "".join(block.raw)
            rest = written[at - block.start : end - block.start]
            if closing and rest.strip() == closing:
                return
            # (Whitespace kept after an element, where a delta ended, was between two elements
            # once the list went on: it is no text after the list.)
            block.after_value = [(at, rest)]

    @staticmethod
    def _left_over(block: ToolCallBlock, named: list[ToolCallBlock]) -> list[tuple[int, str]]:
        """The parts of elements that are no part of their calls (Apertus's ``{"one": {…},
        "two": {…}}``: from the second name on), with where each starts: text, like an element
        that is no call (the call's own diagnostic says so)."""
        parts = [where for call in named if (where := call.state.get("left_over")) is not None]
        if not parts:
            return []
        written = "".join(block.raw)
        return [
            (start, written[start - block.start : end - block.start])
            for start, end in parts
            if block.start <= start < end <= block.start + len(written)
        ]

    def _dropped_elements(self, block: ToolCallBlock) -> list[tuple[int, str]]:
        """The elements of a list of calls that are no call (a tool ``tools=`` does not have,
        no name), with where each starts: their text goes where text around the list goes,
        with a diagnostic, so that nothing the model wrote is lost."""
        dropped: list[tuple[int, str]] = []
        if all(child.index is not None for child in block.children):
            return dropped  # (the common case: the block's text is not joined)
        written = "".join(block.raw)
        follows_dropped = False  # (the element before this one was dropped too)
        for child in block.children:
            if child.index is not None:
                follows_dropped = False
                continue
            reason = child.rejected or child.error or "no tool name was found"
            kind = "unknown_tool" if child.rejected else "malformed_tool_call"
            where = child.state.get("element")
            start, end = where if where is not None else (-1, -1)
            if end < 0 <= start and child is block.children[-1]:
                # The JSON stopped inside this element (``{invalid}``, or cut short): it runs
                # to the end of the list, and the elements written after it are its text too.
                end = block.inner_end()
            if not block.start <= start < end <= block.start + len(written):
                # (Where the element's text is not known, it stays in the list's span.)
                self._diagnose(kind, block.start, f"{reason}; an element of a list of calls, left out")
                follows_dropped = False
                continue
            self._diagnose(kind, start, f"{reason}; an element of a list of calls, kept as {self._stray_kind()}")
            if follows_dropped:
                # Two elements that are no call, one after the other: the comma between them is
                # text with them (one run from the first's start to the second's end).
                start = dropped.pop()[0]
            dropped.append((start, written[start - block.start : end - block.start]))
            follows_dropped = True
        return dropped

    def _finish_one(self, call: ToolCallBlock, *, closed: bool, spans: bool) -> None:
        if call.index is None:
            self._as_content(call, closed=closed)
            return
        if call.walk is not None and not call.walk.complete and call.error is None and closed:
            # (Cut short, or no JSON from some character on: ``foo`` where JSON belongs.)
            wrong = first_wrong_character("".join(call.arguments_parts)) if call.arguments_parts else None
            call.error = (
                "the tool call's JSON is incomplete" if wrong is None else f"the arguments are not JSON from character {wrong} on"
            )
        stray = call.after_value if any(text.strip() for _, text in call.after_value) else []
        if not call.arguments_parts:
            self.arguments_text(call, "{}")
        arguments = "".join(call.arguments_parts)
        # (Arguments are nearly always one object: checked without building it. Anything else
        # is decoded to tell valid JSON from not.)
        if call.has_parsed:
            if not isinstance(call.parsed, dict):
                call.error = call.error or _not_an_object(call.parsed)
        elif not is_json_object(arguments):
            try:
                value = loads_json(arguments)
                if not isinstance(value, dict):
                    call.error = call.error or _not_an_object(value)
            except json.JSONDecodeError:
                call.error = call.error or "the arguments are not valid JSON"
            except (ValueError, RecursionError):
                # Valid JSON past what Python decodes: nested beyond the recursion limit, or an
                # integer longer than sys.get_int_max_str_digits(). No reader could use it.
                call.error = call.error or "the arguments cannot be decoded (nested too deeply, or a number too long)"
        if call.error is not None and closed:
            self._diagnose("malformed_tool_call", call.start, f"tool call {call.index}: {call.error}")
        if spans:
            for kind, start, end, name in _carved(call.spans, stray, self._stray_kind()):
                self._span(kind, start, end, name, None if kind in _NO_INDEX else call.index)
        late_id = None
        if call.given_id and call.given_id != call.id:
            # The model wrote the id after the call began (Mistral's ``"id"`` after the
            # arguments): the id it wrote replaces the one the start announced.
            call.id = late_id = call.given_id
        # The event decodes ``arguments`` when read: the value decoded here is not kept.
        self._emit(ToolCallEnd(call.index, arguments, id=late_id))
        self._keep_stray_text(stray, f"tool call {call.index}")
        # Keep what the message needs; the reading state of a finished call is garbage.
        call.arguments_parts = [arguments]
        call.raw, call.spans, call.name_parts, call.pending, call.after_value = [], [], [], [], []
        call.walk = None
        call.parsed = None
        call.state = {}

    def _keep_stray_text(self, stray: list[tuple[int, str]], what: str) -> None:
        """``{"a": 1} and more`` in a call: the call is whole, the rest is text (content, or
        reasoning for a call inside a reasoning block that goes on after it)."""
        if not stray:
            return
        text = "".join(part for _, part in stray)
        # Where the first character that is not whitespace is (the same however the text came).
        start, part = next((start, part) for start, part in stray if part.strip())
        at = start + len(part) - len(part.lstrip())
        kind = self._stray_kind()
        self._diagnose("unexpected_text", at, f"{what}: text that is no part of it; kept as {kind}")
        self._keep_as(kind, text)

    def _stray_kind(self) -> str:
        return "reasoning" if self.stray_as_reasoning else "content"

    def _keep_as(self, kind: str, text: str) -> None:
        """Text of a block that is no call, into the message as ``kind``."""
        if kind == "reasoning":
            self._add_reasoning(text)
            self._emit(ReasoningDelta(text))
        else:
            self._add_content(text)
            self._emit(ContentDelta(text))

    def _as_content(self, call: ToolCallBlock, *, closed: bool = True) -> None:
        """A block that never became a tool call (bad JSON, no name, unknown tool, or the text
        ended before its name did) is text where it stands: content, or reasoning inside a
        reasoning block that goes on after it."""
        kind = self._stray_kind()
        rejected = call.rejected or next((c.rejected for c in call.children if c.rejected), None)
        if rejected is not None:
            self._diagnose("unknown_tool", call.start, f"{rejected}; the block is kept as {kind}")
        else:
            if "".join(call.name_parts).strip():
                unnamed = "the tool call's name is followed by no arguments"
            else:
                unnamed = "no tool name was found" if closed else "the text ends before the tool call's name does"
            reason = call.error or (call.walk.error if call.walk is not None else None) or unnamed
            self._diagnose("malformed_tool_call", call.start, f"{reason}; the block is kept as {kind}")
        text = "".join(call.raw)[call.hidden :]
        if not text:
            return
        for _, start, end, _ in call.spans:
            self._span(kind, start, end)
        self._keep_as(kind, text)


_NO_INDEX = ("delimiter", "content", "reasoning")  # spans that belong to no call


def _carved(
    spans: list[tuple[str, int, int, str | None]], stray: list[tuple[int, str]], as_kind: str
) -> list[tuple[str, int, int, str | None]]:
    """``spans`` with the stretches of ``stray`` text cut out of them, as ``as_kind``."""
    if not stray:
        return spans
    # (The stretches do not overlap: in order, each span looks only at those that reach into
    # it, found by bisection. A call with thousands of stray stretches, each looked at once per
    # span, took seconds.)
    cuts = sorted((start, start + len(text)) for start, text in stray if text)
    cut_ends = [cut_end for _, cut_end in cuts]
    out: list[tuple[str, int, int, str | None]] = []
    for kind, start, end, name in spans:
        if kind == as_kind:
            out.append((kind, start, end, name))
            continue
        if kind == "delimiter":
            # (A tag whose text went with the stray text: the tag that opened a parameter's
            # name which never ended.)
            index = bisect_right(cut_ends, start)
            covered = index < len(cuts) and cuts[index][0] <= start and end <= cuts[index][1]
            out.append((as_kind, start, end, None) if covered else (kind, start, end, name))
            continue
        at = start  # where the span's text not yet given out begins
        touched = False
        index = bisect_right(cut_ends, start)  # the first stretch that ends past the span's start
        while index < len(cuts) and cuts[index][0] < end:
            cut_start, cut_end = cuts[index]
            index += 1
            if cut_end <= at:
                continue
            touched = True
            if at < cut_start:
                out.append((kind, at, cut_start, name))
            out.append((as_kind, max(at, cut_start), min(end, cut_end), None))
            at = min(end, cut_end)
        if at < end or not touched:
            out.append((kind, at, end, name))
    return out


def _not_an_object(value: object) -> str:
    """The error of arguments that are JSON but no object: kept as the JSON they are, but no
    function takes them as its arguments."""
    kind = (
        "string" if isinstance(value, str) else "list" if isinstance(value, list)
        else "boolean" if isinstance(value, bool) else "null" if value is None else "number"
    )  # fmt: skip
    return f"the arguments are a JSON {kind}, not an object"
