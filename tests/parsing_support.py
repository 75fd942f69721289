"""Helpers shared by the parsing tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

import chatcodec
from chatcodec.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from chatcodec.parse.stream import ParseResult

FAMILIES = ("qwen3", "deepseek", "llama3_hermes")


def normalized(message: chatcodec.Message) -> dict[str, Any]:
    """An OpenAI dict of the message with the random tool-call ids replaced."""
    data = message.to_openai()
    for call in data.get("tool_calls", []):
        call["id"] = "ID"
    return data


def parse_both(codec: chatcodec.Codec, text: str, **options: Any) -> ParseResult:
    """Parse whole and one character at a time: the two must agree (message, finish reason,
    diagnostics), and the spans must give the text back."""
    whole = codec.parse_detailed(text, **options)
    _, streamed = feed_in_chunks(
        codec, text, [1], prompt=options.get("prompt"), tools=options.get("tools"), reasoning=options.get("reasoning")
    )
    assert normalized(streamed.message) == normalized(whole.message)
    assert streamed.finish_reason == whole.finish_reason
    assert [d.kind for d in streamed.diagnostics] == [d.kind for d in whole.diagnostics]
    assert whole.reassemble() == text
    return whole


def feed_in_chunks(
    codec: chatcodec.Codec, text: str, sizes: list[int], **options: Any
) -> tuple[list[Event], ParseResult]:
    """Feed ``text`` split at the given chunk sizes (cycled), then close."""
    parser = codec.stream(**options)
    events: list[Event] = []
    pos = 0
    index = 0
    while pos < len(text):
        size = max(1, sizes[index % len(sizes)])
        events += parser.feed(text[pos : pos + size])
        pos += size
        index += 1
    events += parser.close()
    return events, parser.result()


def summarize(events: list[Event]) -> dict[str, Any]:
    """What a client accumulates from events: joined deltas per channel and per tool call."""
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    calls: dict[int, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, ToolCallStart):
            calls[event.index] = {"name": event.name, "arguments": "", "id": event.id}
        elif isinstance(event, ToolCallArgumentsDelta):
            calls[event.index]["arguments"] += event.text
        elif isinstance(event, ToolCallEnd):
            calls[event.index]["end"] = event.arguments
    return {"content": content, "reasoning": reasoning, "calls": calls}


def draw_cut_answer(
    data: st.DataObject, answers: Sequence[str], pieces: st.SearchStrategy[str], *, splices: int, tail: int = 0
) -> str:
    """An answer a template writes (or nothing), cut anywhere, with up to ``splices`` pieces
    spliced in before the cut and up to ``tail`` appended after it."""
    valid = data.draw(st.sampled_from(answers)) if answers else ""
    cut = data.draw(st.integers(0, len(valid)))
    spliced = data.draw(st.lists(st.tuples(st.integers(0, cut), pieces), max_size=splices))
    text = valid[:cut]
    for at, piece in sorted(spliced, reverse=True):
        text = text[:at] + piece + text[at:]
    if tail:
        text += "".join(data.draw(st.lists(pieces, max_size=tail)))
    return text
