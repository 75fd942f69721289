"""chatcodec's SGLang detectors, driven the way SGLang's chat serving drives them: the reasoning
parser's normal text feeds the function-call parser, chunk by chunk, with both flushed at the
end; and the non-streaming path (parse_non_stream on both). Every result must equal chatcodec's
one-shot parse after the same prompt."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sglang.srt.entrypoints.openai.protocol import Function, Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

from servers import (
    WEATHER_TOOL,
    Accumulated,
    chatcodec_reading,
    drive_sglang,
    prompt_ids,
    token_deltas,
    tokenizer_for,
)

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
DS_CALL = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
# (template, render options, whether the prompt opened reasoning, completion)
CASES = [
    ("qwen3", {}, False, "<think>\nThe user wants weather.\n</think>\n\n" + CALL),
    ("qwen3", {}, False, "<think>\nLet me think.\n</think>\n\nIt is sunny in Paris, 18 °C."),
    ("qwen3", {}, False, "<think>\nR1\n</think>\n\nLet me check." + CALL + "\n" + CALL.replace("Paris", "Lyon")),
    ("qwen3", {}, False, '<think>\nok\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": </tool_call>'),
    ("qwen3", {}, False, '<think>\nok\n</think>\n\n<tool_call>\n{"name": "unknown", "arguments": {}}\n</tool_call>'),
    ("qwen3", {}, False, "<think>\ncut short, still thinking"),
    ("qwen3", {}, False, "No reasoning at all."),
    ("deepseek", {"thinking": True}, True, "Weather needed.\n</think>\n\n" + DS_CALL),
    ("deepseek", {"thinking": True}, True, "hm\n</think>\n\nParis is sunny."),
    ("llama3_hermes", {}, False, "Let me look.\n" + CALL),
]
TOOLS = [Tool(type="function", function=Function(**WEATHER_TOOL["function"]))]


def stream_through_sglang(template: str, forced: bool, completion: str, group: int | list[int]) -> Accumulated:
    tokenizer = tokenizer_for(template)
    reasoning_parser = ReasoningParser("chatcodec", True, forced, None, tokenizer=tokenizer, tool_call_parser_active=True)
    tool_parser = FunctionCallParser(TOOLS, "chatcodec", tokenizer=tokenizer)
    return drive_sglang(reasoning_parser, tool_parser, [text for text, _ in token_deltas(tokenizer, completion, group)])


def parse_through_sglang(template: str, forced: bool, completion: str) -> tuple[str, str, list[tuple[str, str]]]:
    tokenizer = tokenizer_for(template)
    reasoning, normal = ReasoningParser("chatcodec", False, forced, None, tokenizer=tokenizer).parse_non_stream(completion)
    tool_parser = FunctionCallParser(TOOLS, "chatcodec", tokenizer=tokenizer)
    calls: list[Any] = []
    if tool_parser.has_tool_call(normal or ""):
        normal, calls = tool_parser.parse_non_stream(normal or "")
    return reasoning or "", normal or "", [(call.name, call.parameters) for call in calls]


def test_the_entry_point_adds_both_detectors() -> None:
    load_plugins()
    assert "chatcodec" in FunctionCallParser.ToolCallParserEnum
    assert "chatcodec" in ReasoningParser.DetectorMap


@pytest.mark.parametrize("template, options, forced, completion", CASES)
@pytest.mark.parametrize("group", [1, 4, 1000])
def test_streamed_through_sglang_equals_chatcodecs_parse(
    template: str, options: dict[str, object], forced: bool, completion: str, group: int
) -> None:
    load_plugins()
    streamed = stream_through_sglang(template, forced, completion, group)
    assert streamed.summary() == chatcodec_reading(template, completion, prompt_ids(template, **options), [WEATHER_TOOL])


@pytest.mark.parametrize("template, options, forced, completion", CASES)
def test_sglangs_whole_output_path_agrees(template: str, options: dict[str, object], forced: bool, completion: str) -> None:
    load_plugins()
    whole = parse_through_sglang(template, forced, completion)
    assert whole == chatcodec_reading(template, completion, prompt_ids(template, **options), [WEATHER_TOOL])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), groups=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=12))
def test_any_token_grouping_gives_the_same_message(case: tuple[str, dict[str, object], bool, str], groups: list[int]) -> None:
    load_plugins()
    template, options, forced, completion = case
    streamed = stream_through_sglang(template, forced, completion, groups)
    assert streamed.summary() == chatcodec_reading(template, completion, prompt_ids(template, **options), [WEATHER_TOOL])


def test_hand_checked_call_inside_reasoning() -> None:
    """SGLang's tool detector has no reasoning field: a call that opens inside a think block
    goes to it when it opens, so the call is read (even though the block is closed after it,
    where the whole parse keeps it as reasoning), and the rest of the think block reaches the
    client as content, behind the opening tag written twice (the hand-over's marker), not lost.
    (The newline before the call is the call's: Qwen3 writes "\n<tool_call>".)"""
    load_plugins()
    completion = "<think>\nR1\n" + CALL + "\nR2\n</think>\n\nC"
    streamed = stream_through_sglang("qwen3", False, completion, 2)
    assert streamed.reasoning == "R1"
    assert [(c["name"], c["arguments"]) for c in streamed.calls.values()] == [("get_weather", '{"city": "Paris"}')]
    assert streamed.content == "<think>\n<think>\n" + "\nR2\n</think>\n\nC"


def test_without_a_tokenizer_the_first_tag_picks_the_format() -> None:
    """SGLang's server passes its tokenizer; code that builds the parsers without one gets the
    bundled template the output's first tag belongs to."""
    load_plugins()
    completion = (
        "hm</think>Sure<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    reasoning_parser = ReasoningParser("chatcodec", True, True, None)
    tool_parser = FunctionCallParser(TOOLS, "chatcodec")
    reasoning, content, calls = "", "", []
    for start in range(0, len(completion), 3):
        thought, normal = reasoning_parser.parse_stream_chunk(completion[start : start + 3])
        text, found = tool_parser.parse_stream_chunk(normal or "")
        reasoning, content, calls = reasoning + (thought or ""), content + text, calls + list(found)
    text, found = tool_parser.parse_stream_end()
    assert (reasoning, content + text) == ("hm", "Sure")
    assert [call.name for call in calls + list(found) if call.name] == ["get_weather"]
    assert "".join(call.parameters for call in calls + list(found)) == '{"city": "Paris"}'
