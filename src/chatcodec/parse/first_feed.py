"""A stream's first delta that holds a whole completion, read the one-shot way.

A caller with the whole text at hand (a non-streaming request served through the streaming
API, a handover, a test) feeds it in one delta. The engine would read it piece by piece; the
one-shot reader (``whole.py``) reads well-formed text several times faster and builds the same
result. Its result is turned into the events the engine gives for that text, in the same order:
the deltas of each run of reasoning and content, and per call its start, its arguments and its
end.

That is exact only where the engine would give every event at once: the one-shot reader found
nothing odd (it declines anything that has a diagnostic), and the text does not end with text
that could still become a delimiter (``<tool_ca``), which the engine holds back until it knows
and gives only at ``close()``. Anywhere else the engine reads the delta as usual.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcodec.events import ContentDelta, Event, ReasoningDelta, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.formats.base import Format
from chatcodec.parse.grammar import FamilyGrammar
from chatcodec.parse.lexer import LONG_SPELLING
from chatcodec.parse.result import ParseResult
from chatcodec.parse.whole import whole_text_reader

# A delta this long is taken for a whole completion (a model's delta is a few tokens).
MIN_WHOLE_FEED = 256

# Per grammar: the proper prefixes of its short spellings (two characters or more) by their
# last two characters, longest first, and those of one character; and its long spellings.
_Prefixes = tuple[dict[str, tuple[str, ...]], frozenset[str], tuple[str, ...]]
_PREFIXES: dict[int, tuple[FamilyGrammar, _Prefixes]] = {}


def read_first_feed(
    family: Format, prefill: str, tools: frozenset[str] | None, text: str
) -> tuple[ParseResult, list[Event]] | None:
    """The one-shot result of ``text`` and the events a stream gives for it, or None where
    the engine must read it."""
    held = _held_from(family.grammar, text)
    result = whole_text_reader(family, "completion").parse(text, prefill, tools, spans=True)
    if result is None or (held is not None and not _silent_from(result, held)):
        return None
    events = _events_of(result)
    return None if events is None else (result, events)


def _held_from(grammar: FamilyGrammar, text: str) -> int | None:
    """Where ``text``'s tail that begins a spelling of one of the grammar's delimiters starts
    (the engine may hold it back), or None. The longest such tail is found."""
    known = _PREFIXES.get(id(grammar))
    if known is None or known[0] is not grammar:
        known = _PREFIXES[id(grammar)] = (grammar, _prefixes_of(grammar.spellings))
    by_ending, singles, long_spellings = known[1]
    end = len(text)
    held = end
    for prefix in by_ending.get(text[-2:], ()):
        if text.endswith(prefix):
            held = end - len(prefix)
            break
    else:
        if text[-1:] in singles:
            held = end - 1
    # A long spelling (a default system prompt) is looked for where its first character
    # stands, as the lexer does: all its prefixes would take the square of its length.
    for spelling in long_spellings:
        at = text.find(spelling[0], max(0, end - len(spelling) + 1), held)
        while at >= 0:
            if spelling.startswith(text[at:]):
                held = at
                break
            at = text.find(spelling[0], at + 1, held)
    return None if held == end else held


def _prefixes_of(spellings: Iterable[str]) -> _Prefixes:
    """The proper prefixes of the short ``spellings``, two characters or more by their last two
    (a tail is matched against the few prefixes that end as it does), longest first, and one
    character; and the long spellings."""
    short = [spelling for spelling in spellings if len(spelling) <= LONG_SPELLING]
    prefixes = {spelling[:cut] for spelling in short for cut in range(1, len(spelling))}
    by_ending: dict[str, list[str]] = {}
    for prefix in sorted(prefixes, key=len, reverse=True):
        if len(prefix) > 1:
            by_ending.setdefault(prefix[-2:], []).append(prefix)
    singles = frozenset(prefix for prefix in prefixes if len(prefix) == 1)
    long_spellings = tuple(spelling for spelling in spellings if len(spelling) > LONG_SPELLING)
    return {ending: tuple(group) for ending, group in by_ending.items()}, singles, long_spellings


def _silent_from(result: ParseResult, at: int) -> bool:
    """Does the text from ``at`` on give no event? Then the engine holding it back until
    ``close()`` changes nothing: a delimiter's spelling (a rendered answer's ``<|im_end|>\\n``
    begins ``<|im_end|>\\n<|im_start|>``), or whitespace after the end token."""
    return all(span.kind == "delimiter" or span.kind == "unparsed" for span in result.spans if span.end > at)


def _events_of(result: ParseResult) -> list[Event] | None:
    """The events of ``result``'s spans in order; None where the spans' text is not the
    message's (then the message was not built from the spans alone)."""
    text = result.text
    calls = result.message.tool_calls or []
    events: list[Event] = []
    content_length = reasoning_length = 0
    open_call = -1  # the call whose spans are being read
    started = 0
    for span in result.spans:
        kind = span.kind
        if kind == "delimiter" or kind == "unparsed":
            continue  # (whitespace after the end token is unparsed: no event either way)
        if open_call >= 0 and (kind != "tool_call" or span.index != open_call):
            arguments = calls[open_call].function.arguments
            events.append(ToolCallEnd(open_call, arguments))
            open_call = -1
        if kind == "content":
            piece = text[span.start : span.end]
            content_length += len(piece)
            events.append(ContentDelta(piece))
        elif kind == "reasoning":
            piece = text[span.start : span.end]
            reasoning_length += len(piece)
            events.append(ReasoningDelta(piece))
        elif kind == "tool_call":
            index = span.index
            if index is None or index == open_call:
                continue
            if index != started or index >= len(calls):
                return None  # (calls out of order: not a shape this reads)
            started += 1
            call = calls[index]
            events.append(ToolCallStart(index, call.id or "", call.function.name))
            events.append(ToolCallArgumentsDelta(index, call.function.arguments))
            open_call = index
        else:
            return None
    if open_call >= 0:
        events.append(ToolCallEnd(open_call, calls[open_call].function.arguments))
    message = result.message
    # (The one-shot reader builds the message from these very pieces: their lengths check it.)
    if content_length != len(message.content or "") or reasoning_length != len(message.reasoning_content or ""):
        return None
    if started != len(calls):
        return None
    return events
