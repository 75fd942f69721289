"""``chatcodec demo``: the main job, on the bundled example data.

For each bundled template: render the example conversation, stream a raw model completion
through the parser (showing the deltas as they come), and round-trip the conversation.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, TextIO

import chatcodec
from chatcodec.events import (
    ContentDelta,
    Diagnostic,
    Event,
    Finish,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)

DELTA_SIZE = 7  # characters per simulated network delta


def _example(name: str) -> dict[str, Any]:
    text = resources.files("chatcodec.examples").joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def example_conversation() -> dict[str, Any]:
    return _example("conversation.json")


def _heading(out: TextIO, title: str) -> None:
    out.write(f"\n=== {title} ===\n")


def describe(event: Event) -> str:
    """One line per event, as a streaming client would see it."""
    if isinstance(event, ReasoningDelta):
        return f"reasoning  {event.text!r}"
    if isinstance(event, ContentDelta):
        return f"content    {event.text!r}"
    if isinstance(event, ToolCallStart):
        return f"call #{event.index}    start {event.name} ({event.id})"
    if isinstance(event, ToolCallArgumentsDelta):
        return f"call #{event.index}    args  {event.text!r}"
    if isinstance(event, ToolCallEnd):
        return f"call #{event.index}    end   parsed={event.parsed!r}"
    if isinstance(event, Diagnostic):
        return f"diagnostic {event.kind} at {event.position}: {event.message}"
    if isinstance(event, Finish):
        return f"finish     {event.reason}"
    return repr(event)


def run_demo(out: TextIO) -> int:
    conversation = example_conversation()
    messages, tools = conversation["messages"], conversation["tools"]
    completions = _example("completions.json")
    for name in chatcodec.bundled_template_names():
        codec = chatcodec.load(name)
        kwargs = completions["template_kwargs"].get(name, {})

        _heading(out, f"{name}: render the example conversation")
        out.write(codec.render(messages, tools=tools) + "\n")

        _heading(out, f"{name}: stream a raw completion in {DELTA_SIZE}-character deltas")
        prompt = codec.render(messages[:2], tools=tools, add_generation_prompt=True, **kwargs)
        completion = completions["completions"][name]
        parser = codec.stream(prompt, tools=tools)
        for start in range(0, len(completion), DELTA_SIZE):
            out.writelines("  " + describe(event) + "\n" for event in parser.feed(completion[start : start + DELTA_SIZE]))
        out.writelines("  " + describe(event) + "\n" for event in parser.close())
        out.write("message: " + json.dumps(parser.message.to_openai(), ensure_ascii=False) + "\n")

        _heading(out, f"{name}: round trip render -> parse -> render")
        report = codec.roundtrip(messages, tools=tools)
        out.write(report.summary() + "\n")
    return 0
