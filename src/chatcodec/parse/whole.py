"""The one-shot fast path: a whole completion of the common shape, read at C speed.

Most completions are well formed: optional reasoning between its tags, content, tool calls
written as ``{"name": ..., "arguments": {...}}`` between their delimiters, an end token. For
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
from collections.abc import Iterable

from chatcodec.events import FinishReason
from chatcodec.formats.base import Format
from chatcodec.messages import ToolCall, assembled_call, assembled_message, new_tool_call_id
from chatcodec.parse.grammar import FamilyGrammar
from chatcodec.parse.lalr import LalrStepper
from chatcodec.parse.spans import Span
from chatcodec.parse.stream import ParseResult

_decoder = json.JSONDecoder()
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = " \t\n\r"
_OBJECT_END = re.compile(r"[ \t\n\r]*\}")

RUNS = frozenset({"CONTENT", "REASONING", "TOOL_CALL"})
MAX_TEXT = 1 << 20  # longer texts gain nothing from the fast path: its costs are per piece


def _call_head(name_keys: Iterable[str]) -> re.Pattern[str]:
    """``{"name": "`` ... up to the name's string: the head of a call object, name first."""
    names = "|".join(re.escape(key) for key in name_keys)
    return re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"(?:' + names + r')"[ \t\n\r]*:[ \t\n\r]*"')


def _arguments_key(argument_keys: Iterable[str]) -> re.Pattern[str]:
    keys = "|".join(re.escape(key) for key in argument_keys)
    return re.compile(r'[ \t\n\r]*,[ \t\n\r]*"(?:' + keys + r')"[ \t\n\r]*:[ \t\n\r]*')


class WholeTextReader:
    """Reads whole completions of one format's common shape (see the module docstring)."""

    def __init__(self, family: Format) -> None:
        self.family = family
        self.grammar: FamilyGrammar = family.grammar
        syntax = family.calls
        options = dict(syntax.options) if syntax is not None else {}
        self.usable = (
            "completion" in self.grammar.starts
            and (
                syntax is None
                or (
                    syntax.reader == "json_object"
                    and not syntax.closes_at_end
                    and not options.get("id_keys")
                    and not options.get("name_as_key")
                    and not options.get("opened")
                )
            )
            and not (family.call_open & family.call_close)
        )
        if not self.usable:
            return
        from chatcodec.parse.readers import ARGUMENT_KEYS

        name_keys: tuple[str, ...] = options.get("name_keys", ("name",))  # type: ignore[assignment]
        argument_keys: tuple[str, ...] = options.get("argument_keys", ARGUMENT_KEYS)  # type: ignore[assignment]
        self._head = _call_head(name_keys)
        self._arguments = _arguments_key(argument_keys)
        self._stepper = LalrStepper(self.grammar.tables["completion"])
        self._json_safe = self.grammar.json_safe_delimiters
        self._reasoning_open = family.reasoning_open
        self._reasoning_close = family.reasoning_close
        self._call_open = family.call_open
        self._call_close = family.call_close
        self._end = family.end
        self._sections = family.section_open | family.section_close
        self._lexing: dict[int, tuple[re.Pattern[str], dict[str, str], str | None]] = {}

    def parse(self, text: str, prefill: str, tools: frozenset[str] | None) -> ParseResult | None:
        """The parse of ``text`` after ``prefill``, or None where only the general way reads it."""
        if not self.usable or len(text) > MAX_TEXT:
            return None
        whole = prefill + text if prefill else text
        base = len(prefill)
        end = len(whole)
        step = self._stepper.step
        lexing = self._lexing
        stack: tuple[int, ...] | None = self._stepper.initial
        spans: list[Span] = []
        content: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        in_reasoning = in_call = ended = False
        call_name: str | None = None
        call_arguments = ""
        pos = 0
        while pos < end:
            assert stack is not None  # a rejected step returns at once
            state = lexing.get(stack[-1]) or self._lexing_of(stack[-1])
            pattern, accepted, run = state
            match = pattern.match(whole, pos)
            if match is not None:
                # A delimiter here, if the state takes it (else the general way says why not).
                terminal = accepted.get(match.group())
                if terminal is None:
                    return None
                stack = step(stack, terminal)
                if stack is None:
                    return None
                start, stop = pos, match.end()
                if in_call:
                    if terminal not in self._call_close or call_name is None:
                        return None
                    in_call = False
                    calls.append(assembled_call(new_tool_call_id(), call_name, call_arguments))
                elif terminal in self._call_open:
                    if in_reasoning or start < base:
                        return None
                    in_call = True
                    call_name = None
                elif terminal in self._sections:
                    return None
                elif terminal in self._reasoning_open:
                    in_reasoning = True
                elif terminal in self._reasoning_close:
                    in_reasoning = False
                elif terminal in self._end:
                    if in_reasoning:
                        return None
                    ended = True
                if stop > base:
                    spans.append(Span("delimiter", start - base if start > base else 0, stop - base, terminal, None))
                pos = stop
                continue
            if run is None:
                # Text where the grammar has none: only whitespace after the end, kept unparsed.
                if not ended or whole[pos:].strip(_WS):
                    return None
                spans.append(Span("unparsed", pos - base if pos > base else 0, end - base, None, None))
                break
            if run not in RUNS:
                return None
            stack = step(stack, run)
            if stack is None:
                return None
            search_from = pos
            json_end = -1
            if run == "TOOL_CALL":
                if pos < base:
                    return None
                read = self._call_body(whole, pos, tools)
                if read is None:
                    return None
                call_name, call_arguments, json_end = read
                if self._json_safe:
                    search_from = json_end
            pattern, accepted, _ = lexing.get(stack[-1]) or self._lexing_of(stack[-1])
            found = pattern.search(whole, search_from)
            if found is None:
                stop = end
            else:
                terminal = accepted.get(found.group())
                if terminal is None or step(stack, terminal) is None:
                    return None
                stop = found.start()
            if run == "TOOL_CALL":
                if stop < json_end or whole[json_end:stop].strip(_WS):
                    return None
                spans.append(Span("tool_call", pos - base, stop - base, None, len(calls)))
            elif stop > base:
                if run == "CONTENT":
                    if in_reasoning:
                        return None
                    content.append(whole[pos if pos > base else base : stop])
                    spans.append(Span("content", pos - base if pos > base else 0, stop - base, None, None))
                else:
                    reasoning.append(whole[pos if pos > base else base : stop])
                    spans.append(Span("reasoning", pos - base if pos > base else 0, stop - base, None, None))
            pos = stop
        if in_call or stack is None:
            return None
        if (in_reasoning or step(stack, "$END") is None) and not ended:
            reason: FinishReason = "length"
        elif calls:
            reason = "tool_calls"
        else:
            reason = "stop"
        joined = "".join(content)
        message = assembled_message(joined if joined or not calls else None, "".join(reasoning) or None, calls or None)
        return ParseResult(message=message, finish_reason=reason, diagnostics=[], spans=spans, text=text)

    def _lexing_of(self, state: int) -> tuple[re.Pattern[str], dict[str, str], str | None]:
        """What a parser state looks for: its spellings' regex, their terminals, its run."""
        known = self._lexing.get(state)
        if known is None:
            info = self.grammar.state_info("completion", state)
            known = (info.matcher.pattern, info.matcher.accepted, info.free_text)
            self._lexing[state] = known
        return known

    def _call_body(self, text: str, pos: int, tools: frozenset[str] | None) -> tuple[str, str, int] | None:
        """``{"name": "f", "arguments": {...}}`` at ``pos``: the name, the arguments as written,
        and where the object ends; None for any other body."""
        head = self._head.match(text, pos)
        if head is None:
            return None
        try:
            name, after = _scanstring(text, head.end())
            key = self._arguments.match(text, after)
            if key is None:
                return None
            arguments, value_end = _decoder.raw_decode(text, key.end())
        except (ValueError, RecursionError):
            return None
        if not name or not isinstance(arguments, dict) or (tools is not None and name not in tools):
            return None
        close = _OBJECT_END.match(text, value_end)
        if close is None:
            return None
        return name, text[key.end() : value_end], close.end()


_READERS: dict[int, tuple[Format, WholeTextReader]] = {}


def whole_text_reader(family: Format) -> WholeTextReader:
    """The format's reader, built once (its parse table steps are remembered across texts)."""
    known = _READERS.get(id(family))
    if known is None or known[0] is not family:
        known = (family, WholeTextReader(family))
        _READERS[id(family)] = known
    return known[1]
