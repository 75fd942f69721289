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

from chatcodec.events import ContentDelta, Event, ReasoningDelta
from chatcodec.formats.base import Format
from chatcodec.parse.result import ParseResult
from chatcodec.parse.spans import Span
from chatcodec.parse.whole import WholeTextReader, whole_text_reader

# A delta this long is taken for a whole completion (a model's delta is a few tokens).
MIN_WHOLE_FEED = 256


def read_first_feed(
    family: Format, prefill: str, tools: frozenset[str] | None, text: str
) -> tuple[ParseResult, list[Event], list[Event]] | None:
    """The one-shot result of ``text``, the events a stream gives for it, and those it gives
    at ``close()`` (the text it holds back), or None where the engine must read it. The
    result's spans are read when first asked for."""
    reader = whole_text_reader(family, "completion")
    held = reader.held_tails.start(text)
    events: list[Event] = []
    holds: list[int] = []
    # (Where the engine may hold a tail back, the spans tell what it is.)
    result = reader.parse(text, prefill, tools, spans=held is not None, events=events, holds=holds)
    if result is None:
        return None
    if held is not None:
        at_close = _held_back(reader, result, events, held, holds)
        return None if at_close is None else (result, events, at_close)

    def read_spans() -> list[Span]:
        # (The same reading again, keeping spans: it reads the text as before.)
        again = reader.parse(text, prefill, tools, spans=True)
        if again is None:
            raise RuntimeError("the one-shot reader read a text once and declined it the second time")
        return again.spans

    result.read_spans_later(read_spans)
    return result, events, []


def _held_back(
    reader: WholeTextReader, result: ParseResult, events: list[Event], at: int, holds: list[int]
) -> list[Event] | None:
    """The events of the text the engine holds back until ``close()``, taken off the end of
    ``events``; None where they cannot be told here. ``at`` is where the longest tail that
    begins any of the grammar's spellings starts; ``holds``, where in a last run of text the
    engine itself would begin to hold (its state looks for fewer spellings)."""
    if _silent_from(reader, result, at):
        return []  # (delimiters, or whitespace after the end: nothing to give either way)
    last = result.spans[-1]
    end = len(result.text)
    if last.end != end or last.start > at or (last.kind != "content" and last.kind != "reasoning") or not holds:
        return None
    hold = holds[-1]
    if hold == end:
        return []  # (the engine's state holds none of it)
    if hold > at:
        # The tail from ``at`` begins a spelling, and the state read here holds only a part
        # of it; the engine's may hold all of it (after a reasoning close it also looks for
        # that close written again: ``\n</``, where this state holds ``</``). It reads it.
        return None
    kind = ContentDelta if last.kind == "content" else ReasoningDelta
    run = events[-1] if events else None
    if hold < last.start or type(run) is not kind or len(run.text) != end - last.start:  # type: ignore[union-attr]
        return None
    # (A run that begins where the held text does gives no delta before ``close()``.)
    if hold == last.start:
        events.pop()
    else:
        events[-1] = kind(run.text[: hold - last.start])  # type: ignore[union-attr]
    return [kind(result.text[hold:])]


def _silent_from(reader: WholeTextReader, result: ParseResult, at: int) -> bool:
    """Does the text from ``at`` on give no event? Then the engine holding it back until
    ``close()`` changes nothing: a delimiter's spelling (a rendered answer's ``<|im_end|>\\n``
    begins ``<|im_end|>\\n<|im_start|>``), or whitespace after the end token. Not a delimiter
    that closes a call or its name (InternLM2's ``<|action_end|>`` begins ``<|action_end|>\\n``):
    the engine gives the call's end, or its start, once it has read that delimiter, so more
    text after such a delta would have it give them again."""
    return all(
        (span.kind == "delimiter" and not reader.ends_a_call_part(span.name)) or span.kind == "unparsed"
        for span in result.spans
        if span.end > at
    )
