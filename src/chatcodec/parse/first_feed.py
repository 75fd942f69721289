"""A stream's first delta that holds a whole completion, read the one-shot way.

A caller with the whole text at hand (a non-streaming request served through the streaming
API, a handover, a test) feeds it in one delta. The engine would read it piece by piece; the
one-shot reader (``whole.py``) reads well-formed text several times faster and builds the same
result, and as it reads, the events the engine gives for that text, in the same order: the
deltas of each run of reasoning and content, and per call its start, its arguments and its
end. The spans are read when asked for (a second reading, keeping them): most callers never do.

That is exact only where the engine would give every event at once: the one-shot reader found
nothing odd (it declines anything that has a diagnostic), and the text does not end with text
that could still become a delimiter (``<tool_ca``), which the engine holds back until it knows
and gives only at ``close()``. Anywhere else the engine reads the delta as usual.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcodec.events import Event
from chatcodec.formats.base import Format
from chatcodec.parse.grammar import FamilyGrammar
from chatcodec.parse.lexer import LONG_SPELLING
from chatcodec.parse.result import ParseResult
from chatcodec.parse.spans import Span
from chatcodec.parse.whole import whole_text_reader

# A delta this long is taken for a whole completion (a model's delta is a few tokens).
MIN_WHOLE_FEED = 256

# Per grammar: the proper prefixes of its spellings up to LONG_SPELLING characters (two
# characters or more) by their last two characters, longest first, and those of one character;
# and its longer spellings.
_Prefixes = tuple[dict[str, tuple[str, ...]], frozenset[str], tuple[str, ...]]
_PREFIXES: dict[int, tuple[FamilyGrammar, _Prefixes]] = {}


def read_first_feed(
    family: Format, prefill: str, tools: frozenset[str] | None, text: str
) -> tuple[ParseResult, list[Event]] | None:
    """The one-shot result of ``text`` and the events a stream gives for it, or None where
    the engine must read it. The result's spans are read when first asked for."""
    held = _held_from(family.grammar, text)
    reader = whole_text_reader(family, "completion")
    events: list[Event] = []
    result = reader.parse(text, prefill, tools, spans=False, events=events)
    if result is None:
        return None

    def read_spans() -> list[Span]:
        # (The same reading again, keeping spans: it reads the text as before.)
        again = reader.parse(text, prefill, tools, spans=True)
        if again is None:
            raise RuntimeError("the one-shot reader read a text once and declined it the second time")
        return again.spans

    result.read_spans_later(read_spans)
    if held is not None and not _silent_from(result, held):
        return None
    return result, events


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
    # A tail longer than LONG_SPELLING that begins a long spelling (a default system prompt)
    # ends with the text's last LONG_SPELLING characters, found in the spelling where the
    # prefix it would be ends (rarely anywhere: text with a character the spelling lacks is
    # told at once).
    if long_spellings and end > LONG_SPELLING:
        last = text[end - LONG_SPELLING :]
        for spelling in long_spellings:
            at = spelling.find(last)
            while at >= 0:
                cut = at + LONG_SPELLING  # ``text`` would end with ``spelling[:cut]``
                if cut < len(spelling) and end - cut < held and text.endswith(spelling[:cut]):
                    held = end - cut
                at = spelling.find(last, at + 1)
    return None if held == end else held


def _prefixes_of(spellings: Iterable[str]) -> _Prefixes:
    """The proper prefixes of ``spellings`` up to ``LONG_SPELLING`` characters, two characters
    or more by their last two (a tail is matched against the few prefixes that end as it does),
    longest first, and one character; and the spellings longer than that (all their prefixes
    would take the square of their length)."""
    prefixes = {spelling[:cut] for spelling in spellings for cut in range(1, min(len(spelling), LONG_SPELLING + 1))}
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
