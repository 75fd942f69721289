"""Outputs from the peers' test suites (vLLM, SGLang, llama.cpp) that showed a kind of bug, each
read whole and one character at a time: nothing may be lost, and the message must be the same."""

from __future__ import annotations

import json
from typing import Any

import pytest
from parsing_support import feed_in_chunks, parse_both
from template_corpus import CORPUS, special_tokens

import chatcodec
from chatcodec.events import ContentDelta
from chatcodec.parse.stream import ParseResult

QWEN3 = chatcodec.load("qwen3")
DEEPSEEK = chatcodec.load("deepseek")
THINKING_OFF = QWEN3.render([{"role": "user", "content": "hi"}], add_generation_prompt=True, enable_thinking=False)
THINKING_ON = QWEN3.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
DEEPSEEK_PROMPT = DEEPSEEK.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
V3_CALL = "<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>"


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.message.tool_calls or []]


def test_a_string_valued_arguments_stays_the_json_string_it_is() -> None:
    # {"arguments": "hello"}: the model's value is a JSON string; bare `hello` would not be JSON.
    text = '<tool_call>\n{"name": "do_thing", "arguments": "hello"}\n</tool_call>'
    result = parse_both(QWEN3, text, prompt=THINKING_OFF)
    assert result.message.tool_calls[0].function.arguments == '"hello"'  # type: ignore[index]
    assert calls(result) == [("do_thing", "hello")]
    # (SGLang test_gigachat3_detector.py: JSON that is no object is no function's arguments.)
    assert [(d.kind, d.message) for d in result.diagnostics] == [
        ("malformed_tool_call", "tool call 0: the arguments are a JSON string, not an object")
    ]
    for value, kind in [("[1, 2]", "list"), ("5", "number"), ("null", "null"), ("true", "boolean")]:
        result = parse_both(QWEN3, text.replace('"hello"', value), prompt=THINKING_OFF)
        assert calls(result) == [("do_thing", json.loads(value))]
        assert [d.message for d in result.diagnostics] == [f"tool call 0: the arguments are a JSON {kind}, not an object"]
    # A string that holds JSON is the OpenAI convention: its text is the arguments.
    text = '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n</tool_call>'
    assert calls(parse_both(QWEN3, text, prompt=THINKING_OFF)) == [("f", {"a": 1})]


@pytest.mark.parametrize(
    "text,finish",
    [
        ("Let me look that up.<｜tool▁calls▁begin｜>get_weather", "stop"),
        ('<｜tool▁calls▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁calls▁end｜>', "stop"),
    ],
)
def test_a_malformed_deepseek_section_keeps_every_character_in_the_message(text: str, finish: str) -> None:
    result = parse_both(DEEPSEEK, text, prompt=DEEPSEEK_PROMPT)
    assert result.message.content == text and result.message.tool_calls is None
    assert result.finish_reason == finish
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]


def test_reasoning_that_mentions_the_section_tag_is_not_cut_there() -> None:
    text = "I could write <｜tool▁calls▁begin｜> here, but no.</think>Answer."
    result = parse_both(DEEPSEEK, text, reasoning=True)
    assert result.message.reasoning_content == "I could write <｜tool▁calls▁begin｜> here, but no."
    assert result.message.content == "Answer." and result.finish_reason == "stop"
    # (A section opener that opens no call is text, said so; no call was written in the block.)
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# Ollama trims the whitespace before a leading <think>; replies seen in the wild open with
# "\n\n\n<think>". Up to three spaces and newlines are read as leading the tag.
@pytest.mark.parametrize("lead", ["\n", "\n\n", " ", "\n\n\n", "  ", " \n ", "\n \n"])
def test_whitespace_before_the_opening_think_tag(lead: str) -> None:
    result = parse_both(QWEN3, lead + "<think>plan</think>\nrest")
    assert (result.message.reasoning_content, result.message.content) == ("plan", "rest")
    assert result.reassemble() == lead + "<think>plan</think>\nrest"


def test_a_longer_run_of_whitespace_before_the_tag_is_content() -> None:
    text = "    <think>plan</think>\nrest"
    result = parse_both(QWEN3, text)
    assert (result.message.reasoning_content, result.message.content) == (None, text)


def test_an_opening_tag_the_prompt_already_wrote_is_the_tag_again() -> None:
    result = parse_both(QWEN3, "<think>\nplan</think>\n\nrest", prompt=THINKING_ON + "<think>\n")
    assert (result.message.reasoning_content, result.message.content) == ("plan", "rest")


# vLLM tests/reasoning/test_deepseekr1_reasoning_parser.py (new_line): after R1's prompt, which
# opens the block ("<think>\n"), the model writes the tag again with a newline before it.
@pytest.mark.parametrize("lead", ["", "\n", " ", "\n\n"])
@pytest.mark.parametrize("template", ["DeepSeek-R1", "DeepSeek-R1-Distill-Qwen-32B"])
def test_deepseek_r1_reads_a_reopened_tag_after_whitespace(template: str, lead: str) -> None:
    path = CORPUS / f"{template}.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert prompt.endswith("<think>\n")
    text = lead + "<think>This is a reasoning section</think>\nThis is the rest"
    result = parse_both(codec, text, prompt=prompt)
    assert result.message.reasoning_content == "This is a reasoning section"
    assert result.message.content == "\nThis is the rest"
    assert result.diagnostics == [] and result.finish_reason == "stop"


@pytest.mark.parametrize("codec_name", ["qwen3", "deepseek"])
def test_reasoning_resumes_after_a_call_inside_it(codec_name: str) -> None:
    # R1 <call A> R2 </think> <call B>: the block that holds call A is closed, so A is text the
    # model thought (as vLLM, SGLang and llama.cpp read it: no duplicate call is made), and B
    # is the call. In a block that never closes, A is a call and the reasoning goes on after it.
    if codec_name == "qwen3":
        codec = QWEN3
        call = '<tool_call>\n{{"name": "{}", "arguments": {{}}}}\n</tool_call>'.format
    else:
        codec = DEEPSEEK
        call = lambda name: "<｜tool▁calls▁begin｜>" + V3_CALL.format(name=name, arguments="{}") + "<｜tool▁calls▁end｜>"  # noqa: E731
    text = "R1" + call("a") + "R2</think>" + call("b")
    result = parse_both(codec, text, reasoning=True)
    assert [c.function.name for c in result.message.tool_calls or []] == ["b"]
    assert result.message.reasoning_content == "R1" + call("a") + "R2" and not result.message.content
    assert [d.kind for d in result.diagnostics] == ["tool_call_in_reasoning"] and result.finish_reason == "tool_calls"
    # A block never closed ended at its first call (vLLM's and llama.cpp's reading; llama.cpp
    # test-chat.cpp, Ling: "Prose after the last tool call is content").
    unclosed = parse_both(codec, "R1" + call("a") + "R2", reasoning=True)
    assert [c.function.name for c in unclosed.message.tool_calls or []] == ["a"]
    assert (unclosed.message.reasoning_content, unclosed.message.content) == ("R1", "R2")
    assert [d.kind for d in unclosed.diagnostics] == ["tool_call_in_reasoning"] and unclosed.finish_reason == "tool_calls"
    two = parse_both(codec, "R1" + call("a") + "R2" + call("b") + "R3", reasoning=True)
    assert [c.function.name for c in two.message.tool_calls or []] == ["a", "b"]
    assert (two.message.reasoning_content, two.message.content) == ("R1", "R2R3")


def test_whitespace_between_a_section_and_its_call_keeps_its_place_when_reasoning_ends() -> None:
    # Found by fuzzing: in a block never closed, a second section of calls with whitespace
    # before its call (``…e<｜tool▁calls▁begin｜>\t<｜tool▁call▁begin｜>…``). The block ends at the
    # first call and the text after it is content, in the order written: the events gave
    # ``e\t``, the message ``\te`` (the whitespace went to content while ``e`` still waited as
    # reasoning).
    call = "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
    text = "r<｜tool▁calls▁begin｜>" + call + "e<｜tool▁calls▁begin｜>\t" + call
    result = parse_both(DEEPSEEK, text, reasoning=True)
    assert (result.message.reasoning_content, result.message.content) == ("r", "e\t")
    events, _ = feed_in_chunks(DEEPSEEK, text, [len(text)], reasoning=True)
    assert "".join(event.text for event in events if isinstance(event, ContentDelta)) == "e\t"
    # Closed after the calls, the block holds them all, the whitespace where it was written.
    closed = parse_both(DEEPSEEK, text + "<｜tool▁calls▁end｜></think>x", reasoning=True)
    assert closed.message.reasoning_content == text + "<｜tool▁calls▁end｜>" and closed.message.content == "x"


def test_text_inside_the_call_that_ends_an_unclosed_block_is_content_too() -> None:
    # Found by the 10⁶ fuzz of DSML (seed 1640, input 765,085): a call inside a block never
    # closed, ended by text that is no part of it (its closing tag cut: ``</｜DSML｜inv``). The
    # block ends at the call, so that text is the answer's, with the text after it; the message
    # put it in the reasoning while its span said content.
    path = CORPUS / "DeepSeek-V3.2-llamacpp.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    text = (
        'R1<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜inv\n</｜DSML｜function_calls>\nthen more'
    )
    result = parse_both(codec, text, reasoning=True)
    assert [c.function.name for c in result.message.tool_calls or []] == ["get_weather"]
    assert (result.message.reasoning_content, result.message.content) == ("R1", "</｜DSML｜invthen more")
    assert result.finish_reason == "tool_calls"
    for kind, field in (("reasoning", result.message.reasoning_content), ("content", result.message.content)):
        assert "".join(text[span.start : span.end] for span in result.spans if span.kind == kind) == field


# SGLang test_reasoning_parser_apertus_cohere.py (test_bare_tools_prefix_without_bracket_is_reasoning):
# a call's opening tag the reasoning mentions, with no call after it, and the block closed
# inside what would be the call. The closing tag ends the block (the call was never one) and
# the answer after it is the answer, where it was read as more of the call, cut short.
@pytest.mark.parametrize(
    ("template", "text", "reasoning"),
    [
        ("qwen3", "<think>I could write <tool_call> here, but no.</think>Answer.", "I could write <tool_call> here, but no."),
        ("qwen3", '<think>I could write <tool_call>{"name": "x"} here</think>Answer.', 'I could write <tool_call>{"name": "x"} here'),
        ("ZhipuAI-GLM-4.6", "<think>before <tool_call> after</think>Answer.", "before <tool_call> after"),
        ("SwissAI-Apertus-8B-Instruct", "<|inner_prefix|>before <|tools_prefix|> after<|inner_suffix|>Answer.", "before <|tools_prefix|> after"),
    ],
)
def test_a_call_opened_in_reasoning_ends_where_the_block_does(template: str, text: str, reasoning: str) -> None:
    if template == "qwen3":
        codec = QWEN3
    else:
        path = CORPUS / f"{template}.jinja"
        codec = chatcodec.load(path, special_tokens=special_tokens(path))
    result = parse_both(codec, text)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, "Answer.")
    assert not result.message.tool_calls
    assert [d.kind for d in result.diagnostics] == ["tool_call_in_reasoning"] and result.finish_reason == "stop"
    # A closing tag inside one of the call's JSON strings is the call's text: the call ends
    # at its own closing tag, and the block after it.
    quoted = '<think>a <tool_call>{"name": "f", "arguments": {"q": "</think>"}}</tool_call> b</think>Answer.'
    result = parse_both(QWEN3, quoted)
    assert result.message.reasoning_content == quoted[len("<think>") : quoted.rindex("</think>")]


def test_a_call_that_ends_the_text_inside_reasoning_is_a_finished_call() -> None:
    result = parse_both(QWEN3, 'plan\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', reasoning=True)
    assert result.finish_reason == "tool_calls" and result.message.reasoning_content == "plan"


@pytest.mark.parametrize(
    "text",
    [
        # R1 distills open the section with <｜tool▁calls｜>.
        "<｜tool▁calls｜>" + V3_CALL.format(name="get_weather", arguments='{"city": "Paris"}') + "<｜tool▁calls▁end｜>",
        # V3.1 writes calls without the section's opening tag.
        V3_CALL.format(name="get_weather", arguments='{"city": "Paris"}') + "<｜tool▁calls▁end｜>",
        V3_CALL.format(name="get_weather", arguments='{"city": "Paris"}'),
    ],
)
def test_noncanonical_deepseek_calls_are_read_and_said_so(text: str) -> None:
    result = parse_both(DEEPSEEK, text, prompt=DEEPSEEK_PROMPT)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    assert result.finish_reason == "tool_calls"
