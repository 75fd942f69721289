"""The two halves servers split parsing into (`chatcodec.adapters.handover`): a reasoning half
that hands the rest of the output to a tool half. Fed in random chunkings, as a server does,
they must give the message the whole-output parse gives after the same prompt, on the outputs
each format's own template writes, whole and cut short anywhere (the fuzzer's inputs)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

import chatcodec
from chatcodec.adapters.handover import ReasoningHalf, ToolHalf, closed_prefill
from chatcodec.adapters.openai import ChunkAdapter
from chatcodec.events import Event

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz  # noqa: E402

Reading = tuple[str, str, list[tuple[str, str]]]
FORMATS = sorted(fuzz.FORMATS)


class Client:
    """What a server's client ends with: reasoning and content text, calls by index."""

    def __init__(self) -> None:
        self.reasoning: list[str] = []
        self.content: list[str] = []
        self.calls: dict[int, list[str]] = {}
        self.adapter = ChunkAdapter("m", reasoning_field="reasoning")

    def take(self, events: list[Event]) -> None:
        for delta in self.adapter.deltas(events):
            self.reasoning.append(delta.get("reasoning", ""))
            self.content.append(delta.get("content", ""))
            for call in delta.get("tool_calls", []):
                entry = self.calls.setdefault(call["index"], ["", ""])
                entry[0] += call.get("function", {}).get("name", "") or ""
                entry[1] += call.get("function", {}).get("arguments", "") or ""

    def reading(self) -> Reading:
        calls = [(name, arguments) for _, (name, arguments) in sorted(self.calls.items())]
        return "".join(self.reasoning), "".join(self.content), calls


def through_halves(codec: chatcodec.Codec, prompt: str | None, chunks: list[str], tools: Any) -> Reading:
    """The halves driven the way vLLM drives them: the reasoning half until it hands over (it
    is skipped when the prompt closed reasoning), then the tool half."""
    state = codec.prompt_state(prompt) if prompt is not None else None
    skipped = codec.format.reasoning is None or (state is not None and state.state != "reasoning" and state.prefill != "")
    reasoning_half = None if skipped else ReasoningHalf(codec, prompt, resend_reasoning=True)
    # The prompts here are the templates' own with no keywords: as vLLM's tool parser reads
    # them from a request that gives none.
    prefill = closed_prefill(codec, None) if prompt is not None else None
    tool_half: ToolHalf | None = None
    client = Client()
    for chunk in chunks:
        if reasoning_half is not None and not reasoning_half.handed_over:
            split = reasoning_half.feed(chunk)
            client.reasoning.append(split.reasoning)
            if reasoning_half.handed_over:
                tool_half = ToolHalf(codec, tools, closed_prefill=prefill)
                client.take(tool_half.feed(split.rest))
            continue
        tool_half = tool_half or ToolHalf(codec, tools, closed_prefill=prefill)
        client.take(tool_half.feed(chunk))
    if reasoning_half is not None and not reasoning_half.handed_over:
        reasoning, content = reasoning_half.finish()
        client.reasoning.append(reasoning)
        client.content.append(content)
    if tool_half is not None:
        client.take(tool_half.finish())
    return client.reading()


def whole(codec: chatcodec.Codec, text: str, prompt: str | None, tools: Any) -> Reading:
    message = codec.parse(text, prompt, tools=tools)
    calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
    return message.reasoning_content or "", message.content or "", calls


@pytest.mark.parametrize("name", FORMATS)
def test_the_halves_give_the_whole_parse(name: str) -> None:
    codec = fuzz.load(name)
    rng = random.Random(20261130)
    inputs = fuzz.Inputs(codec, rng, 800)
    for _ in range(60):
        text = rng.choice([inputs._valid, inputs._truncated])()
        prompt = inputs.prompt if rng.random() < 0.7 else None
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 8)))) if len(text) > 1 else []
        chunks = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)])]
        assert through_halves(codec, prompt, chunks, fuzz.TOOLS) == whole(codec, text, prompt, fuzz.TOOLS), (text, chunks)


def test_a_call_inside_reasoning_is_handed_over_behind_the_tag() -> None:
    """Hand-checked: the reasoning before the call is the reasoning half's, the call and the
    text after it the tool half's (a block never closed ended at its call: that text is the
    answer); in one delta, all of it goes to the tool half. Where the block is closed in the
    same delta, the call was reasoning: the half hands over after it."""
    codec = chatcodec.load("qwen3")
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    half = ReasoningHalf(codec, prompt, resend_reasoning=False)
    assert half.feed("<think>\nR1 ").reasoning == "R1 "
    split = half.feed(call + "R2")
    assert half.handed_over and split.reasoning == ""
    assert split.rest == "<think>\n<think>\n" + call + "R2"
    client = Client()
    tool_half = ToolHalf(codec, None)
    client.take(tool_half.feed(split.rest) + tool_half.finish())
    assert client.reading() == ("", "R2", [("f", "{}")])
    half = ReasoningHalf(codec, prompt, resend_reasoning=False)
    assert half.feed("<think>\nR1 ").reasoning == "R1 "
    split = half.feed(call + "R2</think>C")
    assert half.handed_over and (split.reasoning, split.rest) == (call + "R2", "C")


def test_think_blocks_stay_text_for_a_tool_half_alone() -> None:
    codec = chatcodec.load("qwen3")
    client = Client()
    half = ToolHalf(codec, None, think_blocks_as_text=True)
    text = '<think>\nhm\n</think>\n\nSure.<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    client.take(half.feed(text) + half.finish())
    assert client.reading() == ("", "<think>\nhm\n</think>\n\nSure.", [("f", "{}")])


def test_a_block_opened_in_the_same_delta_is_handed_over_once_marked() -> None:
    """The marker replaces the block's own opening tag when the block opens in the delta that
    hands over; reasoning written before a repeated tag is not dropped."""
    codec = chatcodec.load("qwen3")
    top_of_turn = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    half = ReasoningHalf(codec, top_of_turn, resend_reasoning=True)
    split = half.feed("<think>\nR1\n" + call + "R2")
    assert split.rest == "<think>\n<think>\nR1\n" + call + "R2"
    opened = top_of_turn + "<think>\n"
    half = ReasoningHalf(codec, opened, resend_reasoning=True)
    split = half.feed("R0 <think>\nR1\n" + call + "R2")
    assert split.rest.startswith("<think>\n<think>\nR0 ")
    client = Client()
    tool_half = ToolHalf(codec, None)
    client.take(tool_half.feed(split.rest) + tool_half.finish())
    assert client.reading() == codec_reading(codec, opened, "R0 <think>\nR1\n" + call + "R2")


def codec_reading(codec: chatcodec.Codec, prompt: str, text: str) -> Reading:
    return whole(codec, text, prompt, None)
