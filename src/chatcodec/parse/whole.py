"""The one-shot fast path: a whole completion of the common shape, read at C speed.

Most completions are well formed: optional reasoning between its tags, content, tool calls
written as ``{"name": ..., "arguments": {...}}`` between their delimiters (Hermes, Qwen) or as a
name, a separator and a JSON object (DeepSeek, Kimi, gpt-oss), maybe inside a section of calls,
an end token. For
those, the streaming machinery (pieces, events, incremental JSON walks) costs far more than
the reading. ``WholeTextReader`` reads such a text with the grammar's own delimiter matchers
and parse table, the C JSON decoder and a few regexes, and builds the same ``ParseResult``.

It reads only what it can read exactly as the streaming parser does, and declines (returns
None) on anything else: a delimiter where the grammar does not take it, text that spells one,
a call body of another shape, a name the tools do not have, a call inside reasoning, text
after the end. The caller then parses the text the general way, which gives every diagnostic.
Nothing is ever decided differently: the tests compare the two on every template's answers
and on fuzzed text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Container, Iterable
from typing import Any


from chatcodec.check.special_tokens import TOKEN_SHAPE
from chatcodec.events import ContentDelta, Event, FinishReason, ReasoningDelta, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.formats.base import Format
from chatcodec.messages import ToolCall, assembled_call, assembled_message
from chatcodec.parse.engine import WHOLE_TAG
from chatcodec.parse.grammar import FamilyGrammar
from chatcodec.parse.held import HeldTails
from chatcodec.parse.json_scan import STRICT_DECODER, is_json_object
from chatcodec.parse.readers import ARGUMENT_KEYS, NOT_A_NAME
from chatcodec.parse.spans import Span
from chatcodec.parse.result import ParseResult


_decoder = STRICT_DECODER
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = " \t\n\r"
_OBJECT_END = re.compile(r"[ \t\n\r]*\}")
_SPACE = re.compile(r"[ \t\n\r]*")

# What a delimiter does to the message (the order the general way tests them in).
(CALL_OPEN, CALL_CLOSE, NAME_DONE, SECTION_OPEN, SECTION_CLOSE, REASONING_OPEN, REASONING_CLOSE, END, ANSWER_OPEN, MESSAGE_START, OTHER) = range(11)
NAME_SEPARATOR = "CALL_SEP"  # between a call's name and its arguments (DeepSeek)
_ID_TERMINALS = frozenset({"TOOL_ID", "ID_SEP", "NAME_SEP"})  # call ids in their own place: declined
MOVES_CACHE_SIZE = 8192  # (parser stack, terminal) pairs remembered per format
_UNKNOWN: Any = object()
_SHAPE: Any = object()  # the key of a call's shape among the edges of the parser after its opening
MAX_SHAPED_NAME = 256  # a longer name is read the general way
MAX_RESUMED = 1024  # states after a prefill kept per reader (by the prefill and the text's start)
MAX_RESUMED_PREFILL = 256  # characters: the state after a longer prefill is not kept
# ``_new_tuple(Span, (kind, start, end, name, index))`` is ``Span(...)`` without the
# Python-level ``__new__`` of a named tuple (a parse makes one per delimiter and per run).
_new_tuple: Any = tuple.__new__
_JOIN: Any = object()  # read the prefill and the text joined
_MatchAt = Callable[[str, int], "re.Match[str] | None"]
_Find = Callable[[str, int, int], "re.Match[str] | None"]
# A parser stack, what its state looks for (see ``WholeTextReader._move_to``), where each
# spelling found there leads (``_Edge``, filled in as met; the key None holds the move after the
# state's run of text), and that run's terminal.
_Move = tuple[tuple[int, ...], _MatchAt, _Find, dict[Any, Any], str | None]
# A delimiter's terminal, what it does to the message, and the parser after it.
_Edge = tuple[str, int, _Move]
# Where the reading goes on in the text after a prefill's delimiters, the parser there,
# whether they left it in reasoning, after the end, or in a section of calls, and the span of
# the text's part of a delimiter that begins in the prefill (None if none runs on into it).
_Resumed = tuple[int, _Move, bool, bool, str, "Span | None"]
# A call's shape (``WholeTextReader._call_by_shape``): its separator and the match of the state
# that reads it, "}" and its closing delimiter and the match of the state that reads that, the
# parser after the call, and the separator's and the closing delimiter's terminals.
_Shape = tuple[str, _MatchAt, str, _MatchAt, _Move, str, str]


# Where a named call read in one go has its separator, its arguments and its closing
# delimiter, and the separator's and the closing delimiter's terminals.
_CallParts = tuple[int, int, int, str, str]


def _add_call_spans(spans: list[Span], base: int, index: int, start: int, stop: int, parts: _CallParts) -> None:
    """The spans of a named call read in one go from ``start`` (its name) to ``stop`` (after
    its closing delimiter), ``base`` before the completion's positions."""
    separator_at, arguments, closing_at, separator, closing = parts
    spans += (
        _new_tuple(Span, ("tool_call", start - base, separator_at - base, None, index)),
        _new_tuple(Span, ("delimiter", separator_at - base, arguments - base, separator, None)),
        _new_tuple(Span, ("tool_call", arguments - base, closing_at - base, None, index)),
        _new_tuple(Span, ("delimiter", closing_at - base, stop - base, closing, None)),
    )


def _add_call_events(events: list[Event], index: int, calls: list[ToolCall]) -> None:
    """The events a stream gives for ``calls`` read whole, the first numbered ``index``."""
    for call in calls:
        function = call.function
        events += (
            ToolCallStart(index, call.id or "", function.name),
            ToolCallArgumentsDelta(index, function.arguments),
            ToolCallEnd(index, function.arguments),
        )
        index += 1


def _member(before: str, keys: Iterable[str], after: str = "") -> re.Pattern[str]:
    """``{"name": "`` and its kin: ``before`` (``{`` or ``,``), one of ``keys`` as a JSON key,
    its colon, then ``after`` (``"`` where the value is a string read next), whitespace
    allowed between them all."""
    alternatives = "|".join(re.escape(key) for key in keys)
    return re.compile(rf'[ \t\n\r]*{re.escape(before)}[ \t\n\r]*"(?:{alternatives})"[ \t\n\r]*:[ \t\n\r]*{after}')


def _token_end(spelling: str, spellings: Container[str]) -> int:
    """Where the whole token ``spelling`` begins with ends: a special token, or a whole tag that
    is no delimiter alone (0 where it begins with neither)."""
    token = TOKEN_SHAPE.match(spelling)
    if token is not None:
        return token.end()
    tag = WHOLE_TAG.match(spelling)
    return tag.end() if tag is not None and tag.group() not in spellings else 0


class WholeTextReader:
    """Reads whole completions of one format's common shape (see the module docstring)."""

    def __init__(self, family: Format, start: str = "completion") -> None:
        self.family = family
        self._new_id = family.new_call_id
        self.start = start  # the grammar's start symbol: after a prompt, or with none
        self.grammar: FamilyGrammar = family.grammar
        # (For a stream's whole first delta: built with the reader, once per format.)
        self.held_tails = HeldTails(self.grammar.spellings)
        syntax = family.calls
        options = dict(syntax.options) if syntax is not None else {}
        reader = syntax.reader if syntax is not None else None
        self._json_calls = (reader == "json_object" or reader == "json_object_or_list") and not (
            options.get("id_keys") or options.get("name_as_key") or options.get("opened")
        )
        # A name, the separator, the arguments: not the forms with an id (Solar, Kimi, Mistral).
        terminals = {terminal.name for terminal in self.grammar.tables[self.grammar.starts[0]].terminals}
        self._named_calls = (
            reader == "name_then_arguments"
            and set(options) <= {"name_pattern", "name_is_id"}
            and not (terminals & _ID_TERMINALS)
        )
        # Kimi writes ``functions.get_weather:0``: the name is a part of it, the whole its id.
        pattern = options.get("name_pattern")
        self._name_pattern = re.compile(pattern) if isinstance(pattern, str) else None
        self._name_is_id = bool(options.get("name_is_id"))
        self.usable = (
            start in self.grammar.starts
            and (syntax is None or ((self._json_calls or self._named_calls) and not syntax.closes_at_end))
            and not (family.call_open & family.call_close)
        )
        if not self.usable:
            return
        name_keys: tuple[str, ...] = options.get("name_keys", ("name",))  # type: ignore[assignment]
        argument_keys: tuple[str, ...] = options.get("argument_keys", ARGUMENT_KEYS)  # type: ignore[assignment]
        # A call object, name first (``{"name": "``, then ``, "arguments": ``), or the other
        # way round (Hermes 2 Pro's JSON-schema template writes ``{"arguments": {...}, "name": "f"}``).
        self._head = _member("{", name_keys, '"')
        self._arguments = _member(",", argument_keys)
        self._arguments_head = _member("{", argument_keys)
        self._name_after = _member(",", name_keys, '"')
        self._in_section = syntax is not None and syntax.in_section
        self._section_closes = bool(family.section_close)
        self._noncanonical = frozenset(syntax.noncanonical) if syntax is not None else frozenset()
        # Every spelling of those (with the whitespace around them the grammar accepts): a call
        # that opens so is read the general way, which says so.
        self._noncanonical_openers = frozenset(
            spelling for spelling in self.grammar.spellings if spelling.strip() in self._noncanonical
        )
        self._stepper = self.grammar.stepper(start)
        self._json_safe = self.grammar.json_safe_delimiters
        # The first set a delimiter is in says what it does (the order the engine tests them in).
        separator = frozenset({NAME_SEPARATOR}) if self._named_calls else frozenset()
        ordered = [
            (family.section_open, SECTION_OPEN),
            (family.section_close, SECTION_CLOSE),
            (family.call_open, CALL_OPEN),
            (family.call_close, CALL_CLOSE),
            (separator, NAME_DONE),
            (family.reasoning_open, REASONING_OPEN),
            (family.reasoning_close, REASONING_CLOSE),
            (family.end, END),
            (frozenset(filter(None, [family.framing.answer_open_terminal])), ANSWER_OPEN),
            (family.assistant_start, MESSAGE_START),
        ]
        self._roles = {
            terminal: next((role for terminals, role in ordered if terminal in terminals), OTHER)
            for terminal in self.grammar.delimiters
        }
        initial = self._stepper.initial
        self._start: _Move = self._move_to(initial)
        self._moves: dict[tuple[tuple[int, ...], str], _Move | None] = {}
        self._edges_kept = 0
        self._resumed: dict[tuple[str, str], _Resumed] = {}  # by the prefill and the text's start
        self._reaches: dict[str, int] = {}
        self._longest = max(len(spelling) for spelling in self.grammar.spellings)
        # A text that ends inside a delimiter, after a whole special token (``<|channel|>fin``),
        # is read the general way, which tells whether the state takes that delimiter.
        spellings = self.grammar.spellings
        # (Also after a whole tag that is no delimiter alone, ERNIE's ``<response>`` before its
        # ``<response>\n``: the engine holds text cut there as a delimiter cut short too.)
        self._cut_heads = frozenset(
            spelling[:end]
            for spelling in spellings
            if (token_end := _token_end(spelling, spellings))
            for end in range(token_end, len(spelling))
            if spelling[:end] not in spellings  # (a whole delimiter that begins a longer one)
        )
        self._cut_reach = max(map(len, self._cut_heads), default=0)
        # (The tokens they begin with, each looked for in the text's tail with ``str.rfind``.)
        self._cut_tokens = tuple(sorted({head[: _token_end(head, spellings)] for head in self._cut_heads}))
        # A call whose parts stand exactly where the last one's did is read by its shape (see
        # ``_call_by_shape``): where no delimiter can begin inside JSON but within a string,
        # none is made of whitespace alone, and the name is the whole text before the separator.
        spellings = self.grammar.spellings
        self._shapes = (
            self._named_calls
            and self._json_safe
            and self._name_pattern is None
            and not self._name_is_id
            and all(spelling.strip(_WS) for spelling in spellings)
        )
        # A name made of these characters holds no delimiter, nor the start of one.
        firsts = "".join(sorted({re.escape(spelling[0]) for spelling in spellings}))
        self._plain_name = re.compile(rf"[^\s\[\]{{}}()<>\"',;{firsts}]+").fullmatch

    def parse(
        self,
        text: str,
        prefill: str,
        tools: frozenset[str] | None,
        *,
        spans: bool = True,
        events: list[Event] | None = None,
        holds: list[int] | None = None,
    ) -> ParseResult | None:
        """The parse of ``text`` after ``prefill``, or None where only the general way reads it.
        Without ``spans`` the result's spans are left empty (``codec.parse`` gives the message
        alone, and a span per delimiter and run is much of the work on short text). Into
        ``events`` go the events a stream gives for the text (each run of reasoning or content
        as one delta; per call, its start, its whole arguments, its end), and into ``holds``,
        where the text ends in a run of text, where in it the engine would begin to hold text
        back (its state's ``DelimiterMatcher.hold_point``)."""
        if not self.usable:
            return None
        if self._cut_tokens:
            # (The token may begin in the prefill: ``<re`` + ``sponse>``.)
            short = len(text) < self._cut_reach and prefill
            if self._ends_inside_a_delimiter(prefill[len(text) - self._cut_reach :] + text if short else text):
                return None
        kept: list[Span] | None = [] if spans else None
        if not prefill:
            return self._read(text, text, 0, tools, kept, events, prefill_first=False, holds=holds)
        # The prefill's delimiters are read on a short head (the last may run on into the text:
        # "<think>" then "\n"), then the text itself, which is not copied. Only a run of text
        # that begins in the prefill needs the two joined.
        key = None
        if len(prefill) <= MAX_RESUMED_PREFILL:
            # The state the prefill's delimiters leave depends on the prefill and on the few
            # characters of the text the last of them may run on into.
            reach = self._reaches.get(prefill)
            if reach is None:
                reach = self._reach(prefill)
            key = (prefill, text[:reach])
            resumed = self._resumed.get(key)
            if resumed is not None:
                return self._read(text, text, 0, tools, kept, events, prefill_first=False, resumed=resumed, holds=holds)
        read = self._read(prefill + text[: self._longest], text, len(prefill), tools, kept, events, prefill_first=True, key=key, holds=holds)
        if read is not _JOIN:
            return read  # type: ignore[no-any-return]
        # (A run of text begins in the prefill: nothing was read into the message yet.)
        return self._read(prefill + text, text, len(prefill), tools, [] if spans else None, events, prefill_first=False, holds=holds)

    def _ends_inside_a_delimiter(self, text: str) -> bool:
        """Does ``text`` end with a whole special token and then the start of what a delimiter
        spells after it (``<|channel|>fin``)? Then the general way reads it."""
        floor = max(0, len(text) - self._cut_reach)
        heads = self._cut_heads
        for token in self._cut_tokens:
            at = text.rfind(token, floor)
            while at >= 0:
                if text[at:] in heads:
                    return True
                at = text.rfind(token, floor, at)
        return False

    def _read(
        self,
        whole: str,
        text: str,
        base: int,
        tools: frozenset[str] | None,
        spans: list[Span] | None,
        events: list[Event] | None,
        *,
        prefill_first: bool,
        resumed: _Resumed | None = None,
        key: tuple[str, str] | None = None,
        holds: list[int] | None = None,
    ) -> ParseResult | None | Any:
        """Read ``whole``, whose completion ``text`` starts at ``base``, into ``spans`` and
        ``events`` (if kept). With ``prefill_first``, ``whole`` is the prefill and the head of the text: once
        past the prefill the reading goes on in ``text`` (``_JOIN`` if a run of text begins in
        the prefill). The state the prefill's delimiters leave is remembered under ``key``,
        and a later read with the same key starts from it (``resumed``)."""
        end = len(whole)
        stack, match_at, find, edges, run = self._start
        keep = spans is not None
        content: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        in_reasoning = in_call = ended = False
        section = ""  # "opened" (no call yet), "calls" (one opened in it) or ""
        call_name: str | None = None
        call_arguments: str | None = None
        call_id: str | None = None  # the id the model wrote, where the syntax has one
        pos = 0
        # A delimiter the search of a run found where the run ends (read next, not looked for again).
        found: re.Match[str] | None = None
        terminal = ""  # the last delimiter's
        if resumed is not None:
            pos, (stack, match_at, find, edges, run), in_reasoning, ended, section, head = resumed
            if keep and head is not None:
                spans.append(head)  # type: ignore[union-attr]
        while True:
            if prefill_first and pos >= base:
                if key is not None and len(self._resumed) < MAX_RESUMED:
                    # Past the prefill: nothing is in the message yet (text in the prefill is
                    # read the joined way), so this is all its delimiters decide, but for the
                    # span of the last one if it runs on into the text.
                    head = None if pos == base else _new_tuple(Span, ("delimiter", 0, pos - base, terminal, None))
                    here = (stack, match_at, find, edges, run)
                    self._resumed[key] = (pos - base, here, in_reasoning, ended, section, head)
                whole, pos, base, end, prefill_first = text, pos - base, 0, len(text), False
            if pos >= end:
                break
            match = found if found is not None else match_at(whole, pos)
            found = None
            if match is not None:
                # A delimiter here, if the state takes it (else the general way says why not).
                edge = edges.get(match.group(), _UNKNOWN)
                if edge is _UNKNOWN:
                    edge = self._edge(stack, edges, match.group())
                if edge is None:
                    return None
                terminal, role, (stack, match_at, find, edges, run) = edge
                stop = match.end()
                if in_call:
                    if role == CALL_CLOSE:
                        if call_name is None or call_arguments is None:
                            return None
                        in_call = False
                        calls.append(assembled_call(call_id or self._new_id(), call_name, call_arguments))
                        if events is not None:
                            _add_call_events(events, len(calls) - 1, calls[-1:])
                    elif role != NAME_DONE or call_name is None or call_arguments is not None:
                        return None
                elif section == "opened" and role != CALL_OPEN:
                    return None  # a section opener followed by no call is text
                elif role == CALL_OPEN:
                    if in_reasoning or pos < base or (self._in_section and not section):
                        return None
                    if match.group() in self._noncanonical_openers:
                        return None  # (the general way says so)
                    if section:
                        section = "calls"
                    if self._named_calls and not prefill_first:
                        # The common case, read in one go: a name, its separator, the
                        # arguments, the closing delimiter.
                        opener = None
                        if keep:
                            opener = _new_tuple(Span, ("delimiter", pos - base, stop - base, terminal, None))
                        here = (stack, match_at, find, edges, run)
                        named = self._calls_in_a_row(whole, stop, end, here, tools, spans, opener, base, len(calls))
                        if named is not None:
                            pos, (stack, match_at, find, edges, run), read_calls = named
                            if events is not None:
                                _add_call_events(events, len(calls), read_calls)
                            calls += read_calls
                            continue
                    in_call = True
                    call_name = call_arguments = call_id = None
                elif role == SECTION_OPEN:
                    if section or match.group().strip() in self._noncanonical:
                        return None
                    section = "opened"
                elif role == SECTION_CLOSE:
                    section = ""
                elif role == REASONING_OPEN:
                    in_reasoning = True
                elif role == REASONING_CLOSE:
                    in_reasoning = False
                elif role == END or role == ANSWER_OPEN or role == MESSAGE_START:
                    if in_reasoning:
                        return None  # (an answer, a message or an end inside reasoning: diagnosed)
                    ended = ended or role == END
                if keep and stop > base:
                    spans.append(_new_tuple(Span, ("delimiter", pos - base if pos > base else 0, stop - base, terminal, None)))  # type: ignore[union-attr]
                pos = stop
                continue
            if prefill_first:
                return _JOIN  # a run of text begins in the prefill
            if run is None:
                # Text where the grammar has none: only whitespace after the end, kept unparsed.
                if not ended or whole[pos:].strip(_WS):
                    return None
                if keep:
                    spans.append(_new_tuple(Span, ("unparsed", pos - base if pos > base else 0, end - base, None, None)))  # type: ignore[union-attr]
                break
            move = edges.get(None, _UNKNOWN)
            if move is _UNKNOWN:
                move = self._run_edge(stack, edges, run)
            if move is None:
                return None
            stack, match_at, find, edges, _ = move
            if in_call:
                if pos < base:
                    return None
                if run == "TOOL_NAME":
                    if call_name is not None:
                        return None
                    found = find(whole, pos, end)
                    stop = end if found is None else found.start()
                    written = whole[pos:stop].strip()
                    call_name = self._call_name(written, tools)
                    if call_name is None:
                        return None
                    if self._name_is_id:
                        call_id = written
                else:
                    # The first delimiter ends the body unless it is inside one of its strings:
                    # then the body up to it is no JSON, and it is read again the long way.
                    found = find(whole, pos, end)
                    if run == "TOOL_ARGUMENTS" and call_name is not None:
                        read_arguments = _arguments_value(whole, pos, end if found is None else found.start())
                        if read_arguments is None:
                            return None
                        call_arguments, json_end = read_arguments
                    elif (run == "TOOL_CALL" or run == "TOOL_CALL_OR_CALLS") and self._json_calls:
                        read = self._call_object(whole, pos, end if found is None else found.start(), tools)
                        if read is None:
                            return None
                        call_name, call_arguments, json_end = read
                    else:
                        return None
                    after = self._after_body(whole, pos, end, json_end, found, find)
                    if after is None:
                        return None
                    stop, found = after
                if keep:
                    spans.append(_new_tuple(Span, ("tool_call", pos - base, stop - base, None, len(calls))))  # type: ignore[union-attr]
            elif run == "CONTENT" or run == "REASONING" or run == "LEADING":
                found = find(whole, pos, end)
                stop = end if found is None else found.start()
                if found is None and holds is not None and pos >= base:
                    holds.append(find.__self__.hold_point(whole, pos, end) - base)  # type: ignore[attr-defined]
                if stop > base:
                    kind = run
                    if run == "LEADING":
                        # Text before anything tells: reasoning if a closing tag follows it.
                        closing = found is not None and self._role_at(stack, found.group()) == REASONING_CLOSE
                        kind = "REASONING" if closing else "CONTENT"
                    if kind == "CONTENT":
                        if section and whole[pos:stop].strip() and (section == "opened" or self._section_closes):
                            # A section opener followed by text is text; text between the
                            # calls of a section that closes has no place there.
                            return None
                        piece = whole[pos if pos > base else base : stop]
                        content.append(piece)
                        if events is not None:
                            events.append(ContentDelta(piece))
                        if keep:
                            spans.append(_new_tuple(Span, ("content", pos - base if pos > base else 0, stop - base, None, None)))  # type: ignore[union-attr]
                    else:
                        piece = whole[pos if pos > base else base : stop]
                        reasoning.append(piece)
                        if events is not None:
                            events.append(ReasoningDelta(piece))
                        if keep:
                            spans.append(_new_tuple(Span, ("reasoning", pos - base if pos > base else 0, stop - base, None, None)))  # type: ignore[union-attr]
            else:
                return None
            pos = stop
        if in_call or section == "opened":
            return None
        if (in_reasoning or self._stepper.step(stack, "$END") is None) and not ended:
            reason: FinishReason = "length"
        elif calls:
            reason = "tool_calls"
        else:
            reason = "stop"
        joined = "".join(content)
        message = assembled_message(joined if joined or not calls else None, "".join(reasoning) or None, calls or None)
        return ParseResult(message=message, finish_reason=reason, diagnostics=[], spans=spans or [], text=text)

    def _reach(self, prefill: str) -> int:
        """How far into the text a delimiter that begins in ``prefill`` may run on (remembered)."""
        reach = 0
        # (Only a tail shorter than the longest spelling can be the start of one.)
        for start in range(max(0, len(prefill) - self._longest), len(prefill)):
            rest = prefill[start:]
            for spelling in self.grammar.spellings:
                if len(spelling) > len(rest) and spelling.startswith(rest):
                    reach = max(reach, len(spelling) - len(rest))
        if len(self._reaches) < MAX_RESUMED:
            self._reaches[prefill] = reach
        return reach

    def _calls_in_a_row(
        self,
        text: str,
        pos: int,
        end: int,
        move: _Move,
        tools: frozenset[str] | None,
        spans: list[Span] | None,
        opener: Span | None,
        base: int,
        index: int,
    ) -> tuple[int, _Move, list[ToolCall]] | None:
        """Calls of a named-call syntax from just after the first one's opening delimiter (the
        parser at ``move``), one after another while the next opens where the last closed.
        Returns where the last call read ends, the parser there and the calls; None when not
        even the first is read (nothing is: ``_read`` reads it its own way, and so any call
        after the last one returned). With ``spans``, each call read adds its opening
        delimiter's span (the first one's is ``opener``) and its own, ``base`` before the
        completion's positions, the first numbered ``index``."""
        calls: list[ToolCall] = []
        done: tuple[int, _Move] | None = None
        while True:
            shape = move[3].get(_SHAPE) if self._shapes else None
            one = None if shape is None else self._call_by_shape(text, pos, shape, tools)
            if one is None:
                one = self._named_call(text, pos, end, move, tools)
                if one is None:
                    break
            stop, move, call, parts = one
            if spans is not None:
                spans.append(opener)  # type: ignore[arg-type]
                _add_call_spans(spans, base, index, pos, stop, parts)
            pos = stop
            calls.append(call)
            index += 1
            done = (pos, move)
            # Another call opening right here?
            stack, match_at, _, edges, _ = move
            opened = match_at(text, pos)
            if opened is None:
                break
            edge = self._after_delimiter(stack, edges, opened.group())
            if edge is None or edge[1] != CALL_OPEN or opened.group() in self._noncanonical_openers:
                break
            if spans is not None:
                opener = _new_tuple(Span, ("delimiter", pos - base, opened.end() - base, edge[0], None))
            pos, move = opened.end(), edge[2]
        if done is None:
            return None
        return done[0], done[1], calls

    def _call_by_shape(
        self, text: str, pos: int, shape: _Shape, tools: frozenset[str] | None
    ) -> tuple[int, _Move, ToolCall, _CallParts] | None:
        """A call written as the last one read from the same parser state was: the name, the
        same separator right after it, a JSON object right after that, the same closing
        delimiter right after the object. Two ``str.find``, no delimiter search: no delimiter
        can begin inside such a name, nor inside the object but within a string (which the
        general way skips too), and the separator and the closing delimiter are checked to be
        what the state's own matcher reads there. None for anything else."""
        separator, separator_at, closing, closing_at, after_call, separator_name, closing_name = shape
        at = text.find(separator, pos, pos + MAX_SHAPED_NAME)
        if at < 0:
            return None
        name = text[pos:at]
        if self._plain_name(name) is None or (tools is not None and name not in tools):
            return None
        matched = separator_at(text, at)
        start = at + len(separator)
        if matched is None or matched.end() != start:
            return None  # a longer delimiter begins there
        brace = text.find(closing, start)
        if brace < 0 or text[start : start + 1] != "{":
            return None
        arguments = text[start : brace + 1]
        matched = closing_at(text, brace + 1)
        stop = brace + len(closing)
        if matched is None or matched.end() != stop or not is_json_object(arguments):
            return None
        parts = (at, start, brace + 1, separator_name, closing_name)
        return stop, after_call, assembled_call(self._new_id(), name, arguments), parts

    def _named_call(
        self, text: str, pos: int, end: int, move: _Move, tools: frozenset[str] | None
    ) -> tuple[int, _Move, ToolCall, _CallParts] | None:
        """A call of a named-call syntax from just after its opening delimiter (the parser at
        ``move``): its name, the separator, its arguments and the closing delimiter, read as
        ``_read`` reads them one by one. Returns where the call ends, the parser there and the
        call; None (nothing read) for anything else, which ``_read`` then reads its own way.
        A call whose parts stand right next to each other leaves its shape with ``move``."""
        stack, match_at, _, edges, run = move
        if run != "TOOL_NAME" or match_at(text, pos) is not None:
            return None
        first_edges = edges
        after_name = self._after_run(stack, edges, run)
        if after_name is None:
            return None
        # The name's run, searched for its end as the parser after it searches.
        stack, separator_at, find, edges, run = after_name
        found = find(text, pos, end)
        if found is None:
            return None
        written = text[pos : found.start()].strip()
        name = self._call_name(written, tools)
        if name is None:
            return None
        adjacent = found.start() - pos == len(written)  # nothing around the name
        # The separator, then the arguments' run.
        separator = found.group()
        edge = self._after_delimiter(stack, edges, separator)
        if edge is None or edge[1] != NAME_DONE:
            return None
        separator_name = edge[0]
        stack, match_at, _, edges, run = edge[2]
        name_end, start = found.start(), found.end()
        if run != "TOOL_ARGUMENTS" or match_at(text, start) is not None:
            return None
        after_arguments = self._after_run(stack, edges, run)
        if after_arguments is None:
            return None
        stack, closing_at, find, edges, run = after_arguments
        found = find(text, start, end)
        read = _arguments_value(text, start, end if found is None else found.start())
        if read is None:
            return None
        arguments, json_end = read
        after = self._after_body(text, start, end, json_end, found, find)
        if after is None or after[1] is None:
            return None
        arguments_end, found = after[0], after[1]
        # The closing delimiter.
        closing = found.group()
        edge = self._after_delimiter(stack, edges, closing)
        if edge is None or edge[1] != CALL_CLOSE:
            return None
        if (
            self._shapes
            and _SHAPE not in first_edges
            and adjacent
            and json_end - len(arguments) == start
            and found.start() == json_end
            and self._plain_name(name) is not None
        ):
            shape = (separator, separator_at, "}" + closing, closing_at, edge[2], separator_name, edge[0])
            self._remember(first_edges, _SHAPE, shape)
        call_id = written if self._name_is_id else self._new_id()
        parts = (name_end, start, arguments_end, separator_name, edge[0])
        return found.end(), edge[2], assembled_call(call_id, name, arguments), parts

    def _call_name(self, written: str, tools: frozenset[str] | None) -> str | None:
        """The function a call's name run (``written``, stripped) names; None if it names
        none, or one the tools do not have."""
        name = written
        if self._name_pattern is not None:
            named = self._name_pattern.match(written)
            name = named.group("name") if named is not None else ""  # (no name in it)
        if not name or (name not in tools if tools is not None else NOT_A_NAME.search(name) is not None):
            return None
        return name

    def _after_body(
        self, text: str, start: int, end: int, json_end: int, found: re.Match[str] | None, find: _Find
    ) -> tuple[int, re.Match[str] | None] | None:
        """Where a call body that starts at ``start`` and whose JSON ends at ``json_end`` ends,
        and the delimiter there (None at the text's end), given the first delimiter found after
        ``start``. None if text other than whitespace follows the JSON."""
        if found is None or json_end > found.start():
            # A delimiter inside the JSON is in a string: text.
            found = find(text, json_end if self._json_safe else start, end)
        stop = end if found is None else found.start()
        if stop < json_end or text[json_end:stop].strip(_WS):
            return None
        return stop, found

    def _after_delimiter(self, stack: tuple[int, ...], edges: dict[Any, Any], spelling: str) -> _Edge | None:
        """Where ``spelling`` found with parser ``stack`` leads (``_read`` looks it up inline)."""
        edge = edges.get(spelling, _UNKNOWN)
        return self._edge(stack, edges, spelling) if edge is _UNKNOWN else edge  # type: ignore[no-any-return]

    def _after_run(self, stack: tuple[int, ...], edges: dict[Any, Any], run: str) -> _Move | None:
        """The parser after ``stack``'s run of text (``_read`` looks it up inline)."""
        move = edges.get(None, _UNKNOWN)
        return self._run_edge(stack, edges, run) if move is _UNKNOWN else move  # type: ignore[no-any-return]

    def _edge(self, stack: tuple[int, ...], edges: dict[Any, Any], spelling: str) -> _Edge | None:
        """Where ``spelling`` found with parser ``stack`` leads, kept in the stack's ``edges``;
        None if its state does not take it or the grammar rejects it there."""
        terminal = self._terminal_at(stack, spelling)
        edge: _Edge | None = None
        if terminal is not None:
            move = self._move(stack, terminal)
            edge = None if move is None else (terminal, self._roles[terminal], move)
        self._remember(edges, spelling, edge)
        return edge

    def _run_edge(self, stack: tuple[int, ...], edges: dict[Any, Any], run: str) -> _Move | None:
        """The parser after ``stack``'s run of text, kept in its ``edges`` under None."""
        move = self._move(stack, run)
        self._remember(edges, None, move)
        return move

    def _remember(self, edges: dict[Any, Any], key: str | None, where: Any) -> None:
        # Parser stacks grow with the calls in a text: edges, like moves, are kept up to a
        # bound, so a text of a million calls does not stay in memory after its parse.
        if self._edges_kept < MOVES_CACHE_SIZE:
            self._edges_kept += 1
            edges[key] = where

    def _terminal_at(self, stack: tuple[int, ...], spelling: str) -> str | None:
        """The terminal ``spelling`` is with parser ``stack``, None if its state does not take it."""
        return self.grammar.state_info(self.start, stack[-1]).matcher.accepted.get(spelling)

    def ends_a_call_part(self, terminal: str | None) -> bool:
        """Does the delimiter ``terminal`` close a call, or its name? (The engine gives the
        call's end, or its start, when it has read that delimiter to its end.)"""
        return terminal is not None and self._roles.get(terminal) in (CALL_CLOSE, NAME_DONE)

    def _role_at(self, stack: tuple[int, ...], spelling: str) -> int | None:
        """What ``spelling`` would do to the message if found with parser ``stack``."""
        terminal = self._terminal_at(stack, spelling)
        return None if terminal is None else self._roles[terminal]

    def _move(self, stack: tuple[int, ...], terminal: str) -> _Move | None:
        """The parser after ``terminal`` and what its state looks for (remembered), or None if
        the grammar rejects it."""
        known = self._moves.get((stack, terminal), _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[no-any-return]
        after = self._stepper.step(stack, terminal)
        move = None if after is None else self._move_to(after)
        if len(self._moves) < MOVES_CACHE_SIZE:
            self._moves[(stack, terminal)] = move
        return move

    def _move_to(self, stack: tuple[int, ...]) -> _Move:
        """The parser at ``stack``: what its state looks for (a spelling at a place, the first
        one in a stretch), no edges yet, and its run of text's terminal."""
        info = self.grammar.state_info(self.start, stack[-1])
        return (stack, info.matcher.pattern.match, info.matcher.find, {}, info.free_text)

    def _call_object(
        self, text: str, pos: int, stop: int, tools: frozenset[str] | None
    ) -> tuple[str, str, int] | None:
        """``{"name": "f", "arguments": {...}}`` at ``pos``, best ending before ``stop``: the
        name, the arguments as written, and where the object ends; None for any other body."""
        head = self._head.match(text, pos)
        if head is None:
            return self._arguments_first(text, pos, tools)
        try:
            name, after = _scanstring(text, head.end())
        except ValueError:
            return None
        key = self._arguments.match(text, after)
        if not name or key is None or (tools is not None and name not in tools):
            return None
        # Where the body is the object and nothing else, its arguments end at its last brace.
        close = _end_of_value(text, key.end(), stop)
        if close > key.end() and text[close - 1] == "}":
            value_end = _end_of_value(text, key.end(), close - 1)
            arguments = text[key.end() : value_end]
            if is_json_object(arguments):
                return name, arguments, close
        try:
            value, value_end = _decoder.raw_decode(text, key.end())
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        after_value = _OBJECT_END.match(text, value_end)
        if after_value is None:
            return None
        return name, text[key.end() : value_end], after_value.end()

    def _arguments_first(self, text: str, pos: int, tools: frozenset[str] | None) -> tuple[str, str, int] | None:
        """``{"arguments": {...}, "name": "f"}`` at ``pos``: as ``_call_object`` reads it."""
        opening = self._arguments_head.match(text, pos)
        if opening is None:
            return None
        try:
            value, value_end = _decoder.raw_decode(text, opening.end())
        except (ValueError, RecursionError):
            return None
        named = self._name_after.match(text, value_end)
        if not isinstance(value, dict) or named is None:
            return None
        try:
            name, after = _scanstring(text, named.end())
        except ValueError:
            return None
        closing = _OBJECT_END.match(text, after)
        if not name or closing is None or (tools is not None and name not in tools):
            return None
        return name, text[opening.end() : value_end], closing.end()


def _end_of_value(text: str, start: int, stop: int) -> int:
    """``stop``, less the whitespace before it (not before ``start``)."""
    while stop > start and text[stop - 1] in _WS:
        stop -= 1
    return stop


def _arguments_value(text: str, pos: int, stop: int) -> tuple[str, int] | None:
    """A JSON object at ``pos`` (after whitespace), best ending before ``stop``: as written,
    and where it ends."""
    start = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    end = _end_of_value(text, start, stop)
    if is_json_object(text[start:end]):
        return text[start:end], end
    try:
        arguments, end = _decoder.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    if not isinstance(arguments, dict):
        return None
    return text[start:end], end


_READERS: dict[tuple[int, str], tuple[Format, WholeTextReader]] = {}
MAX_READERS = 256  # formats (and start symbols) whose readers are kept


def whole_text_reader(family: Format, start: str = "completion") -> WholeTextReader:
    """The format's reader from a start symbol, built once (its parser moves are remembered
    across texts)."""
    known = _READERS.get((id(family), start))
    if known is None or known[0] is not family:
        known = (family, WholeTextReader(family, start))
        if len(_READERS) >= MAX_READERS:
            # A server that loads template after template: the oldest reader goes.
            _READERS.pop(next(iter(_READERS)))
        _READERS[(id(family), start)] = known
    return known[1]
