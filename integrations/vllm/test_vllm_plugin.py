"""chatcodec's vLLM parsers, driven by vLLM's own serving code (ParserManager, the composed
DelegatingParser, ChatStreamProcessor): every streamed message must equal chatcodec's one-shot
parse of the same completion, and vLLM's non-streaming path must agree too."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import (
    WEATHER_TOOL,
    chatcodec_reading,
    parse_through_vllm,
    parser_class,
    prompt_ids,
    request_for,
    stream_through_vllm,
    tokenizer_for,
)
from vllm.parser.parser_manager import ParserManager
from vllm.plugins import load_general_plugins
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
DS_CALL = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
# (template, render options, completion): each is checked streamed and whole.
CASES = [
    ("qwen3", {}, "<think>\nThe user wants weather.\n</think>\n\n" + CALL),
    ("qwen3", {}, "<think>\nLet me think.\n</think>\n\nIt is sunny in Paris, 18 °C."),
    ("qwen3", {}, "<think>\nFirst a call.\n" + CALL + "\nthen more thought\n</think>\n\nDone."),
    ("qwen3", {}, "<think>\nR1\n</think>\n\nLet me check." + CALL + "\n" + CALL.replace("Paris", "Lyon")),
    ("qwen3", {}, "<think>\nok\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>"),
    ("qwen3", {}, "<think>\nok\n</think>\n\n<tool_call>\n{\"name\": \"unknown\", \"arguments\": {}}\n</tool_call>"),
    ("qwen3", {}, "<think>\ncut short, still thinking"),
    ("qwen3", {}, "No reasoning at all, and a mention of </think> in content."),
    ("qwen3", {"enable_thinking": False}, "Sunny." + CALL),
    ("qwen3", {"enable_thinking": False}, "Plain answer with <think> spelled inside."),
    ("deepseek", {"thinking": True}, "Weather needed.\n</think>\n\n" + DS_CALL),
    ("deepseek", {"thinking": True}, "hm\n</think>\n\nParis is sunny."),
    ("deepseek", {"thinking": True}, "hm " + DS_CALL + " more thought</think>Answer."),
    ("deepseek", {}, "Sunny. " + DS_CALL),
    ("deepseek", {}, "\n\nSunny, after a prompt that closed reasoning with the bare tag. " + DS_CALL),
    ("llama3_hermes", {}, "Let me look.\n" + CALL),
    ("llama3_hermes", {}, "Just text, with a stray </tool_call> in it."),
]


def test_the_entry_point_registers_both_parsers() -> None:
    load_general_plugins()
    assert "chatcodec" in ToolParserManager.list_registered()
    assert "chatcodec" in ReasoningParserManager.list_registered()


@pytest.mark.parametrize("template, options, completion", CASES)
@pytest.mark.parametrize("group", [1, 3, 1000])
def test_streamed_through_vllm_equals_chatcodecs_parse(
    template: str, options: dict[str, object], completion: str, group: int
) -> None:
    load_general_plugins()
    prompt = prompt_ids(template, **options)
    request = request_for([WEATHER_TOOL], stream=True, chat_template_kwargs=options or None)
    streamed = stream_through_vllm(template, completion, request, prompt, group=group)
    assert streamed.summary() == chatcodec_reading(template, completion, prompt, [WEATHER_TOOL])
    assert streamed.finish_reason == ("tool_calls" if streamed.calls else "stop")


@pytest.mark.parametrize("template, options, completion", CASES)
def test_vllms_whole_output_path_agrees(template: str, options: dict[str, object], completion: str) -> None:
    load_general_plugins()
    prompt = prompt_ids(template, **options)
    whole = parse_through_vllm(
        template, completion, request_for([WEATHER_TOOL], chat_template_kwargs=options or None), prompt
    )
    reasoning, content, calls = chatcodec_reading(template, completion, prompt, [WEATHER_TOOL])
    if calls and not content.strip():
        content = ""  # vLLM's own rule: whitespace-only content beside calls is dropped
    assert whole == (reasoning, content, calls)


def test_hand_checked_call_inside_reasoning() -> None:
    """Written out by hand: a call inside a think block that is closed after it is reasoning
    (no call is made); inside one that never closes, it is a call, the block ended there, and
    the text after it is the answer."""
    load_general_plugins()
    prompt = prompt_ids("qwen3")
    completion = "<think>\nR1\n" + CALL + "\nR2\n</think>\n\nC"
    streamed = stream_through_vllm("qwen3", completion, request_for([WEATHER_TOOL], stream=True), prompt, group=2)
    assert streamed.summary() == ("R1\n" + CALL + "\nR2", "C", [])
    completion = "<think>\nR1\n" + CALL + "\nR2\n"
    streamed = stream_through_vllm("qwen3", completion, request_for([WEATHER_TOOL], stream=True), prompt, group=2)
    reasoning, content, calls = streamed.summary()
    assert calls == [("get_weather", '{"city": "Paris"}')]
    assert reasoning.strip() == "R1" and content.strip() == "R2" and "tool_call" not in reasoning + content


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(CASES),
    groups=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=12),
)
def test_any_token_grouping_gives_the_same_message(case: tuple[str, dict[str, object], str], groups: list[int]) -> None:
    load_general_plugins()
    template, options, completion = case
    prompt = prompt_ids(template, **options)
    request = request_for([WEATHER_TOOL], stream=True, chat_template_kwargs=options or None)
    streamed = stream_through_vllm(template, completion, request, prompt, group=groups)
    assert streamed.summary() == chatcodec_reading(template, completion, prompt, [WEATHER_TOOL])


def test_tool_choice_none_keeps_a_call_as_content() -> None:
    load_general_plugins()
    completion = "<think>\nno tools\n</think>\n\n" + CALL
    prompt = prompt_ids("qwen3")
    streamed = stream_through_vllm("qwen3", completion, request_for([WEATHER_TOOL], tool_choice="none", stream=True), prompt)
    assert streamed.calls == {}
    assert streamed.content == CALL
    assert streamed.reasoning == "no tools"


@pytest.mark.parametrize("reasoning", [True, False])
def test_the_request_keeps_special_tokens_spelled_as_written(reasoning: bool) -> None:
    # A slow tokenizer decodes two adjacent special tokens with a space between them unless
    # asked not to (vLLM's default asks it to): InternLM2's <|action_start|><|plugin|>.
    load_general_plugins()
    parser = parser_class("qwen3", reasoning=reasoning)(tokenizer_for("qwen3"), [WEATHER_TOOL])
    request = parser.adjust_request(request_for([WEATHER_TOOL]))
    assert request.skip_special_tokens is False and request.spaces_between_special_tokens is False
    if not reasoning:  # (with no calls to read, the tool parser leaves the request alone)
        untouched = parser.adjust_request(request_for([WEATHER_TOOL], tool_choice="none"))
        assert untouched.spaces_between_special_tokens is True


def test_without_a_reasoning_parser_the_think_block_stays_in_the_content() -> None:
    load_general_plugins()
    completion = "<think>\nhm\n</think>\n\nSunny." + CALL
    prompt = prompt_ids("qwen3")
    request = request_for([WEATHER_TOOL], stream=True)
    streamed = stream_through_vllm("qwen3", completion, request, prompt, reasoning=False)
    assert streamed.reasoning == ""
    assert streamed.content == "<think>\nhm\n</think>\n\nSunny."
    assert [(c["name"], c["arguments"]) for c in streamed.calls.values()] == [("get_weather", '{"city": "Paris"}')]
    whole = parse_through_vllm("qwen3", completion, request_for([WEATHER_TOOL]), prompt, reasoning=False)
    assert whole == ("", "<think>\nhm\n</think>\n\nSunny.", [("get_weather", '{"city": "Paris"}')])


@pytest.mark.parametrize(
    "template, options, expected",
    [
        ("qwen3", {}, False),  # a <think> may still open
        ("qwen3", {"enable_thinking": False}, True),  # the prompt wrote an empty think block
        ("llama3_hermes", {}, True),  # no reasoning in this format
    ],
)
def test_is_reasoning_end_reads_the_prompt(template: str, options: dict[str, object], expected: bool) -> None:
    load_general_plugins()
    parser = parser_class(template)(tokenizer_for(template), None)
    assert parser.is_reasoning_end(prompt_ids(template, **options)) is expected


def test_is_reasoning_end_inside_an_opened_think_block() -> None:
    load_general_plugins()
    tokenizer = tokenizer_for("qwen3")
    parser = parser_class("qwen3")(tokenizer, None)
    opened = prompt_ids("qwen3") + tokenizer.encode("<think>\nhm", add_special_tokens=False)
    assert parser.is_reasoning_end(opened) is False
    closed = opened + tokenizer.encode("\n</think>\n\n", add_special_tokens=False)
    assert parser.is_reasoning_end(closed) is True


def test_is_reasoning_end_streaming_sees_the_closing_tag_in_the_new_tokens() -> None:
    load_general_plugins()
    tokenizer = tokenizer_for("qwen3")
    reasoning_parser = parser_class("qwen3")(tokenizer, None).reasoning_parser
    before = tokenizer.encode("<think>\nhm", add_special_tokens=False)
    close = tokenizer.encode("</think>", add_special_tokens=False)
    assert reasoning_parser.is_reasoning_end_streaming(before + close, close) is True
    assert reasoning_parser.is_reasoning_end_streaming(before + close + [before[-1]], [before[-1]]) is False
    assert reasoning_parser.extract_content_ids(before + close + before) == before


def test_a_template_without_a_readable_format_fails_at_start_up() -> None:
    load_general_plugins()
    tokenizer = tokenizer_for("qwen3")
    saved = tokenizer.chat_template
    tokenizer.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    try:
        with pytest.raises(TypeError, match="--tool-call-parser chatcodec"):
            parser_class("qwen3")
    finally:
        tokenizer.chat_template = saved


@pytest.mark.parametrize(
    "template, options, completion",
    [case for case in CASES if "tool_call" not in case[2] and "tool▁call" not in case[2]],
)
@pytest.mark.parametrize("group", [1, 1000])
def test_with_the_reasoning_parser_alone_the_content_is_the_text_after_reasoning(
    template: str, options: dict[str, object], completion: str, group: int
) -> None:
    """`--reasoning-parser chatcodec` without auto tool choice: nothing the hand-over adds for
    a tool parser reaches the client."""
    load_general_plugins()
    prompt = prompt_ids(template, **options)
    request = request_for(None, stream=True)
    streamed = stream_through_vllm(template, completion, request, prompt, group=group, tool=False)
    reasoning, content, _ = chatcodec_reading(template, completion, prompt, None)
    assert (streamed.reasoning, streamed.content) == (reasoning, content)
    whole = parse_through_vllm(template, completion, request_for(None), prompt, tool=False)
    assert whole[:2] == (reasoning, content)


def test_a_tokenizer_without_a_template_is_matched_by_its_turn_markers() -> None:
    """Test tokenizers and some conversions carry no chat template: the bundled template whose
    turn marker the vocabulary holds is used (and a vocabulary with none is a clear error)."""
    load_general_plugins()
    from tiny_tokenizer import tiny_tokenizer

    tokenizer = tiny_tokenizer("deepseek", markers=["<｜Assistant｜>", "<｜User｜>"], eos_token="<｜end▁of▁sentence｜>")
    tokenizer.chat_template = None
    cls = ParserManager.get_parser(
        tool_parser_name="chatcodec", reasoning_parser_name="chatcodec", enable_auto_tools=True, tokenizer=tokenizer
    )
    assert cls(tokenizer, None).reasoning_parser.codec.name == "deepseek"
    bare = tiny_tokenizer("qwen3", markers=[], eos_token="</s>")
    bare.chat_template = None
    with pytest.raises(TypeError, match="--tool-call-parser chatcodec"):
        ParserManager.get_parser(
            tool_parser_name="chatcodec", reasoning_parser_name="chatcodec", enable_auto_tools=True, tokenizer=bare
        )
