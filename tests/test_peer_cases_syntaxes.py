"""Outputs from the peers' test suites (vLLM, SGLang, llama.cpp) for the call syntaxes beyond the
bundled formats, where chatcodec read them wrong. Each is read whole and one character at a time
(the two must agree), and the expected message is the one the model meant, which the peers'
tests expect too."""

from __future__ import annotations

import json
import warnings
from functools import cache
from typing import Any

import pytest
from parsing_support import feed_in_chunks
from parsing_support import parse_both as parse_both_ways
from template_corpus import CORPUS, special_tokens

import chatcodec
from chatcodec.events import ToolCallStart
from chatcodec.parse.stream import ParseResult

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_status", "get_time", "f", "g", "set_config", "get_weather")
]


@cache
def codec_for(template: str) -> chatcodec.Codec:
    path = CORPUS / f"{template}.jinja"
    return chatcodec.load(path, special_tokens=special_tokens(path))


def parse_both(template: str, text: str, **options: Any) -> ParseResult:
    return parse_both_ways(codec_for(template), text, **options)


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.message.tool_calls or []]


# llama.cpp test-chat.cpp (LFM2), vLLM tests/tool_parsers/test_olmo3_tool_parser.py
# (more_types_json_literals): models trained on JSON write its literals in Python calls.
@pytest.mark.parametrize(
    ("template", "text", "expected"),
    [
        (
            "LiquidAI-LFM2.5-8B-A1B",
            '<|tool_call_start|>[set_config(config={"enabled": true, "note": null}, dry=false)]<|tool_call_end|>',
            [("set_config", {"config": {"enabled": True, "note": None}, "dry": False})],
        ),
        (
            "AllenAI-Olmo-3.1-32B-Instruct",
            '<function_calls>f(x={"a": true})\ng(y=null, z=[true, false])</function_calls>',
            [("f", {"x": {"a": True}}), ("g", {"y": None, "z": [True, False]})],
        ),
        ("vLLM-Llama-4-pythonic", "[f(x=true, y=null)]", [("f", {"x": True, "y": None})]),
        # SGLang test_pythonic_detector.py: a triple-quoted string holding a quote.
        ("vLLM-Llama-4-pythonic", "[search(query='''a ' b''')]", [("search", {"query": "a ' b"})]),
        # SGLang test_pythonic_detector.py (quoted brackets): a triple-quoted string holding a
        # quote and a bracket; before, the bracket read as left open and the answer as cut short.
        ("vLLM-Llama-4-pythonic", '[search(query="""a " and [ b\nc""")]', [("search", {"query": 'a " and [ b\nc'})]),
        ("vLLM-Llama-4-pythonic", "[search(query='''a ' and [ b''', n='')]", [("search", {"query": "a ' and [ b", "n": ""})]),
        # vLLM tests/tool_parsers/test_lfm2_tool_parser.py (leading_zero_int): an integer with
        # leading zeros, as dates are written; in a string, or a float, the zeros stay.
        (
            "LiquidAI-LFM2.5-8B-A1B",
            "<|tool_call_start|>[set_date(month=07, day=05, note='007', at=007.5, hex=0x1F, zero=00)]<|tool_call_end|>",
            [("set_date", {"month": 7, "day": 5, "note": "007", "at": 7.5, "hex": 31, "zero": 0})],
        ),
        ("AllenAI-Olmo-3.1-32B-Instruct", "<function_calls>f(month=07)\ng(x='\n07')</function_calls>", [("f", {"month": 7}), ("g", {"x": "\n07"})]),
        # One call a line: a newline inside a call's string or brackets is the call's own, not
        # a line between calls (before, the string read "a, b").
        (
            "AllenAI-Olmo-3.1-32B-Instruct",
            "<function_calls>f(x='''a\nb''')\ng(\n  y=[1,\n 2]\n)\nh(z='c\nd')</function_calls>",
            [("f", {"x": "a\nb"}), ("g", {"y": [1, 2]}), ("h", {"z": "c\nd"})],
        ),
    ],
)
def test_python_calls_may_write_json_literals(template: str, text: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected and not result.diagnostics
    assert result.finish_reason == "tool_calls"


# llama.cpp runs its LFM2 cases on these templates; none renders a call, and LFM2 models write
# Python calls between <|tool_call_start|> and <|tool_call_end|>.
@pytest.mark.parametrize("template", ["LiquidAI-LFM2.5-Instruct", "LiquidAI-LFM2-8B-A1B", "llamacpp-lfm2"])
def test_lfm2_templates_that_render_no_calls_read_lfm2_calls(template: str) -> None:
    text = 'Let me check.<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>'
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_time", {"city": "Paris"})]
    assert result.message.content == "Let me check."


# vLLM tests/tool_parsers/test_gemma4_tool_parser.py (test_no_arguments,
# test_trailing_dot_float_partial_withheld), llama.cpp test-chat.cpp (call:empty_args{}).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|tool_call>call:get_status{}<tool_call|>", {}),
        ("<|tool_call>call:get_status{ }<tool_call|>", {}),
        ("<|tool_call>call:f{left:108.,right:22.8}<tool_call|>", {"left": 108.0, "right": 22.8}),
        ("<|tool_call>call:f{a:.5,b:+3,c:[1.,2]}<tool_call|>", {"a": 0.5, "b": 3, "c": [1.0, 2]}),
    ],
)
def test_gemma_calls_with_no_arguments_and_python_spelled_numbers(text: str, expected: dict[str, Any]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert [arguments for _, arguments in calls(result)] == [expected]
    assert not result.diagnostics and result.finish_reason == "tool_calls"


def test_gemma_reads_back_the_empty_call_its_template_writes() -> None:
    codec = codec_for("Google-gemma-4-31B-it")
    rendered = codec.render(
        [
            {"role": "user", "content": "status?"},
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_status", "arguments": {}}}]},
        ]
    )
    assert "call:get_status{}" in rendered
    result = parse_both("Google-gemma-4-31B-it", "<|tool_call>call:get_status{}<tool_call|>")
    assert calls(result) == [("get_status", {})]



# vLLM tests/tool_parsers/test_mistral_tool_parser.py (text after the call's JSON), llama.cpp
# test-chat.cpp (Ministral: " and more" after a call): the call is whole, the rest is text.
@pytest.mark.parametrize(
    ("template", "text", "content", "expected"),
    [
        ("Mistral-Small-3.2-24B-Instruct-2506", 'Intro [TOOL_CALLS]f[ARGS]{"a": 1}\nThanks!', "Intro \nThanks!", [("f", {"a": 1})]),
        (
            "Mistral-7B-Instruct-v0.3-jsonschema",
            '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}] and more',
            " and more",
            [("f", {"a": 1}), ("g", {})],
        ),
        (
            "Moonshot-Kimi-K2-Instruct",
            "Hi<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
            '{"a": 1} junk<|tool_call_end|><|tool_calls_section_end|>',
            "Hi junk",
            [("f", {"a": 1})],
        ),
        ("Hermes-3-Llama-3.1-8B-tool_use", '<tool_call>\n{"name": "f", "arguments": {"a": 1}} oops\n</tool_call>', " oops", [("f", {"a": 1})]),
    ],
)
def test_text_after_a_calls_arguments_is_content(template: str, text: str, content: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == ["unexpected_text"]
    assert result.finish_reason == "tool_calls"
    # The text keeps its place: a content span where it was written.
    assert any(span.kind == "content" and result.span_text(span) == content.removeprefix("Intro ").removeprefix("Hi") for span in result.spans)


# vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py (a value holding "</parameter>"; the text
# after the first one was dropped): text inside a call that is no parameter is content, where it
# was written.
@pytest.mark.parametrize(
    ("template", "text", "content", "expected"),
    [
        (
            "Qwen-Qwen3-Coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\nJUNK\n</function>\n</tool_call>",
            "JUNK",
            {"a": "x"},
        ),
        ("ZhipuAI-GLM-4.6", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\nJUNK\n</tool_call>", "JUNK", {"a": "x"}),
        (
            "MiniMax-M2",
            '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">x</parameter>\nJUNK\n</invoke>\n</minimax:tool_call>',
            "JUNK",
            {"a": "x"},
        ),
        (
            "ByteDance-Seed-OSS-36B-Instruct",
            "<seed:tool_call>\n<function=f>\n<parameter=a>x</parameter>\nJUNK\n</function>\n</seed:tool_call>",
            "JUNK",
            {"a": "x"},
        ),
        (
            "DeepSeek-V3.2-llamacpp",
            '\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n{"city": "SF"} and more\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
            '{"city": "SF"} and more',
            {},
        ),
    ],
)
def test_text_between_xml_parameters_is_content(template: str, text: str, content: str, expected: dict[str, Any]) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("f", expected)]
    assert (result.message.content or "").strip() == content.strip()
    assert [d.kind for d in result.diagnostics] == ["unexpected_text"]
    assert result.diagnostics[0].position == text.index(content.strip()[:4])


# SGLang test_function_call_parser.py and unit/test_deepseek_detectors.py (DSML with a JSON
# body): a call with no parameters whose body is one JSON object has it as its arguments, with a
# `noncanonical` diagnostic (DeepSeek V3.2 writes it so at times); so in the other XML syntaxes.
@pytest.mark.parametrize(
    ("template", "text", "content", "expected"),
    [
        (
            "DeepSeek-V3.2-llamacpp",
            "I'll navigate there now.<｜DSML｜function_calls>"
            '<｜DSML｜invoke name="navigate">{"destination":"library"}</｜DSML｜invoke>'
            '<｜DSML｜invoke name="navigate">{"destination":"museum"}</｜DSML｜invoke></｜DSML｜function_calls>',
            "I'll navigate there now.",
            [("navigate", {"destination": "library"}), ("navigate", {"destination": "museum"})],
        ),
        (
            "DeepSeek-V3.2-llamacpp",
            '<｜DSML｜function_calls>\n            <｜DSML｜invoke name="get_favorite_tourist_spot">\n            {\n'
            '                "city": "San Francisco"\n            }\n            </｜DSML｜invoke>\n        </｜DSML｜function_calls>',
            None,
            [("get_favorite_tourist_spot", {"city": "San Francisco"})],
        ),
        ("Qwen-Qwen3-Coder", '<tool_call>\n<function=f>\n{"a": [1, "x"]}\n</function>\n</tool_call>', None, [("f", {"a": [1, "x"]})]),
        ("MiniMax-M2", '<minimax:tool_call>\n<invoke name="f">\n{"a": 1}\n</invoke>\n</minimax:tool_call>', None, [("f", {"a": 1})]),
        # Ollama's glm46_test.go and laguna_test.go: GLM's name has no closing tag of its own,
        # so the object came with the name and the call was content.
        ("ZhipuAI-GLM-4.6", '<tool_call>get_weather\n{"location":"San Francisco"}</tool_call>', None, [("get_weather", {"location": "San Francisco"})]),
        ("Poolside-Laguna-XS-2.1", '<tool_call>f{"a": 1}</tool_call>', None, [("f", {"a": 1})]),
        # mlx-lm's GLM tool parser repairs a whole Hermes-style call object in GLM's tags, as
        # GLM models write it at times: the name and the arguments are the object's. Before,
        # the block was content with `malformed_tool_call`.
        (
            "ZhipuAI-GLM-4.6",
            'Checking.<tool_call>{"name": "get_weather", "arguments": {"location": "San Francisco"}}</tool_call>',
            "Checking.",
            [("get_weather", {"location": "San Francisco"})],
        ),
        (
            "ZhipuAI-GLM-4.7-Flash",
            '<tool_call>{"name": "f", "parameters": {"a": [1, "x"]}}</tool_call><tool_call>{"name": "g"}</tool_call>',
            None,
            [("f", {"a": [1, "x"]}), ("g", {})],
        ),
    ],
)
def test_a_json_object_as_an_xml_calls_body_is_its_arguments(
    template: str, text: str, content: str | None, expected: list[tuple[str, Any]]
) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected
    assert (result.message.content or "").strip() == (content or "")  # (indentation between tags stays)
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] * len(expected)
    assert result.finish_reason == "tool_calls"
    # The object's text is the call's: every character of the call lies in its spans.
    assert not any(span.kind == "content" and "{" in result.span_text(span) for span in result.spans)


# vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py (test_none_tool_calls_filtered): a name
# whose ">" is left out ends with its call, and the next call is read.
def test_a_function_name_left_unclosed_ends_with_its_call() -> None:
    text = (
        "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>"
    )
    result = parse_both("Qwen-Qwen3-Coder", text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Dallas"})]
    assert result.message.content == "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>"
    assert [d.kind for d in result.diagnostics] == ["unknown_tool"]
    # Without tools the name was read: it stays a call, malformed.
    result = parse_both("Qwen-Qwen3-Coder", text)
    assert calls(result) == [("bad_func_no_gt", {}), ("get_weather", {"city": "Dallas"})]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# vLLM tests/tool_parsers/test_glm4_moe_tool_parser.py (test_extract_tool_calls_malformed_xml): a
# parameter name that never ends; the call's closing tag still closes the call.
def test_a_parameter_name_left_unclosed_is_content_and_the_call_ends() -> None:
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Seattle</arg_value>\n"
        "<arg_key>incomplete_arg\n<arg_value>value</arg_value>\n</tool_call>"
    )
    result = parse_both("ZhipuAI-GLM-4.6", text)
    assert calls(result) == [("get_weather", {"city": "Seattle"})]
    # (The tag that opened the name goes with it: vLLM's glm4_moe malformed_xml case lost it.)
    assert result.message.content == "<arg_key>incomplete_arg\n<arg_value>value</arg_value>"
    assert [(d.kind, d.position) for d in result.diagnostics] == [("unexpected_text", text.rindex("<arg_key>"))]
    assert result.finish_reason == "tool_calls"
    content_spans = [text[span.start : span.end] for span in result.spans if span.kind == "content"]
    assert "".join(content_spans) == result.message.content


# llama.cpp test-chat.cpp (Kimi K2 Thinking, two calls, the first without <|tool_call_end|>):
# the next call's opening tag ends the open call, and both are read.
@pytest.mark.parametrize(
    ("template", "text", "finish"),
    [
        (
            "Moonshot-Kimi-K2-Thinking",
            "<think>I need to call two functions<|tool_call_begin|>functions.special_function:0"
            '<|tool_call_argument_begin|>{"arg1": 1}<|tool_call_begin|>functions.python:1'
            '<|tool_call_argument_begin|>{"code": "print(\'hey\')"}',
            "length",
        ),
        (
            "Moonshot-Kimi-K2-Instruct",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.special_function:0<|tool_call_argument_begin|>"
            '{"arg1": 1}<|tool_call_begin|>functions.python:1<|tool_call_argument_begin|>{"code": "print(\'hey\')"}'
            "<|tool_call_end|><|tool_calls_section_end|>",
            "tool_calls",
        ),
    ],
)
def test_a_kimi_call_left_unclosed_ends_where_the_next_one_opens(template: str, text: str, finish: str) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("special_function", {"arg1": 1}), ("python", {"code": "print('hey')"})]
    assert [call.id for call in result.message.tool_calls or []] == ["functions.special_function:0", "functions.python:1"]
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]
    assert result.finish_reason == finish


# The same slip before the section's closing tag: the section's end ends the call, which is
# read (malformed_tool_call, as above), and the turn ends with its calls, not cut short.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        (
            "Moonshot-Kimi-K2-Instruct",
            "ok<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
            '{"a": 1}<|tool_call_end|><|tool_call_begin|>functions.g:1<|tool_call_argument_begin|>{"b": 2}'
            "<|tool_calls_section_end|>",
        ),
        (
            "DeepSeek-V3.1",
            'ok<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>'
            '<｜tool▁call▁begin｜>g<｜tool▁sep｜>{"b": 2}<｜tool▁calls▁end｜>',
        ),
    ],
)
def test_a_call_left_unclosed_ends_where_its_section_closes(template: str, text: str) -> None:
    result = parse_both(template, text, reasoning=False)
    assert result.message.content == "ok"
    assert calls(result) == [("f", {"a": 1}), ("g", {"b": 2})]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert result.finish_reason == "tool_calls"


# llama.cpp test-chat.cpp (Command A: "cmd3-citations_no_tool_calls"; Command R7B), vLLM's
# CohereCommand4 reasoning cases. A server strips <|END_OF_TURN_TOKEN|> (the end-of-sequence
# token) and leaves <|END_RESPONSE|>, which ends the answer on its own.
@pytest.mark.parametrize(
    "template",
    ["Cohere-command-a-03-2025", "Cohere-command-a-reasoning-08-2025", "Cohere-command-r7b-12-2024"],
)
def test_cohere_answers_end_at_end_response_without_the_end_token(template: str) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, "Hello there<|END_RESPONSE|>", prompt=prompt)
    assert result.message.content == "Hello there"
    assert not result.diagnostics and result.finish_reason == "stop"


# vLLM tests/tool_parsers/test_kimi_k3_tool_parser.py: the server strips <|end_of_msg|>, which
# ends every Kimi K3 turn, and the answer ends with <|close|>message<|sep|>. A template read
# alone, with no end-of-sequence token given, still tells its stop token: the one every turn
# ends with.
@pytest.mark.parametrize(
    ("template", "text", "content"),
    [
        ("Moonshot-Kimi-K3", "Hello<|close|>message<|sep|>", "Hello"),
        ("Moonshot-Kimi-K3", "Hello<|close|>response<|sep|><|close|>message<|sep|>", "Hello"),
        ("Moonshot-Kimi-K3", "Hello<|close|>message<|sep|><|end_of_msg|>", "Hello"),
        ("Cohere-command-a-03-2025", "Hello there<|END_RESPONSE|>", "Hello there"),
    ],
)
def test_a_template_read_alone_ends_its_answer_without_the_stop_token(template: str, text: str, content: str) -> None:
    codec = chatcodec.load(CORPUS / f"{template}.jinja")
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True, thinking=False)
    result = parse_both_ways(codec, text, prompt=prompt)
    assert result.message.content == content
    assert not result.diagnostics and result.finish_reason == "stop"


@pytest.mark.parametrize("eos_token", ["<|im_end|>", None])
def test_an_answer_closing_tag_leaves_no_newline_as_the_end_of_a_turn(eos_token: str | None) -> None:
    # ERNIE 4.5 Thinking ends an answer with </response>\n<|im_end|>: with the tag taken away
    # (an answer the model leaves unclosed) the turn ends at <|im_end|>, not at a newline.
    tokens = {"eos_token": eos_token} if eos_token else {}
    codec = chatcodec.load(CORPUS / "Baidu-ERNIE-4.5-21B-A3B-Thinking.jinja", special_tokens=tokens)
    assert not any(not end.strip() for end in codec.format.framing.end)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    for text in ["r\n</think>\n\n<response>\nline1\nline2\n</response>\n<|im_end|>", "r</think>\nline1\nline2"]:
        result = parse_both_ways(codec, text, prompt=prompt)
        assert (result.message.reasoning_content, result.message.content) == ("r", "line1\nline2")
        assert not result.diagnostics and result.finish_reason == "stop"


def test_command_a_reasoning_closes_its_thinking_before_a_call_or_nothing() -> None:
    template = "Cohere-command-a-reasoning-08-2025"
    call = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "foo", "parameters": {"query": "q"}}]<|END_ACTION|>'
    result = parse_both(template, "<|START_THINKING|>plan<|END_THINKING|>" + call)
    assert result.message.reasoning_content == "plan"
    assert calls(result) == [("foo", {"query": "q"})] and not result.diagnostics
    result = parse_both(template, "<|START_THINKING|>plan<|END_THINKING|>")
    assert result.message.reasoning_content == "plan" and result.finish_reason == "stop"
    result = parse_both(template, "<|START_THINKING|>plan<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>")
    assert (result.message.reasoning_content, result.message.content) == ("plan", "Hi")


def test_command_r7b_tool_use_reads_its_calls_with_its_real_end_token() -> None:
    # Every Cohere turn ends with <|END_OF_TURN_TOKEN|>: it is no end of the answer of its own,
    # and the template's calls are still read.
    codec = chatcodec.load(
        CORPUS / "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        special_tokens={"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    )
    assert codec.format.calls is not None and codec.format.calls.name == "cohere"


# Whole-answer JSON syntaxes: JSON that is complete but no call is an answer, not a cut-short one
# (a server strips <|eot_id|> before parsing, so the end token is not there to say so).
@pytest.mark.parametrize("text", ['{"a": 1}', '<|python_tag|>{"a": 1}', '{"name": "unknown_fn", "parameters": {}}'])
def test_complete_json_that_is_no_call_finishes_stop(text: str) -> None:
    result = parse_both("Llama-3.2-3B-Instruct", text, tools=TOOLS)
    assert result.message.content == text and not result.message.tool_calls
    assert result.finish_reason == "stop"
    truncated = parse_both("Llama-3.2-3B-Instruct", '{"a": ', tools=TOOLS)
    assert truncated.finish_reason == "length"


# A call written flat (``{"name": ..., "city": ...}``, no arguments member): the members beside
# the name are its arguments, with a noncanonical diagnostic (they were dropped).
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Llama-3.2-3B-Instruct", '{"name": "get_weather", "city": "Paris", "days": [1, {"a": 2}]}'),
        ("Hermes-3-Llama-3.1-8B-tool_use", '<tool_call>\n{"name": "get_weather", "city": "Paris", "days": [1, {"a": 2}]}\n</tool_call>'),
    ],
)
def test_a_flat_call_keeps_its_arguments(template: str, text: str) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris", "days": [1, {"a": 2}]})]
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    # With an arguments member, it is the arguments; the members beside it are left out, and a
    # diagnostic names them (a call has no place for them).
    result = parse_both(template, text.replace('"city"', '"arguments": {"x": 1}, "city"'), tools=TOOLS)
    assert calls(result) == [("get_weather", {"x": 1})]
    assert [(d.kind, d.message) for d in result.diagnostics] == [
        ("noncanonical", 'tool call 0: members beside its name and arguments are left out: "city", "days"')
    ]


# What an OpenAI call object carries beside its function (an id, ``"type": "function"``), which
# models copy, is left out without a word: the call has an id and a type of its own.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Llama-3.2-3B-Instruct", '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}'),
        (
            "Hermes-3-Llama-3.1-8B-tool_use",
            '<tool_call>\n{"id": "call_1", "type": "function", "name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        ),
    ],
)
def test_an_openai_call_objects_id_and_type_are_no_news(template: str, text: str) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.diagnostics == []
    with_more = parse_both(template, text.replace('"name"', '"tags": ["x"], "name"'), tools=TOOLS)
    assert calls(with_more) == [("get_weather", {"city": "Paris"})]
    assert [(d.kind, d.message) for d in with_more.diagnostics] == [
        ("noncanonical", 'tool call 0: members beside its name and arguments are left out: "tags"')
    ]
    with pytest.raises(chatcodec.ParseError, match='left out: "tags"'):
        codec_for(template).parse(text.replace('"name"', '"tags": ["x"], "name"'), tools=TOOLS, strict=True)


# vLLM tests/tool_parsers/test_llama3_json_tool_parser.py (json_fragment_trailing): an object with
# members but no name is no call, and the only diagnostic says so: it is not a flat call either.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Llama-3.2-3B-Instruct", '{"query": "test"}'),
        ("Hermes-3-Llama-3.1-8B-tool_use", '<tool_call>\n{"query": "test"}\n</tool_call>'),
    ],
)
def test_an_object_without_a_name_is_malformed_not_flat(template: str, text: str) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert result.message.content == text and not result.message.tool_calls
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    with pytest.raises(chatcodec.ParseError, match="no tool name"):
        codec_for(template).parse(text, tools=TOOLS, strict=True)


# llama.cpp test-chat.cpp (Ministral 3 reasoning, "fake_call_in_reasoning"): a Mistral call
# written inside [THINK] that the model then closes is reasoning, not a call (llama.cpp reads
# only the call after [/THINK]); the answer follows, and the spans keep the text's order.
@pytest.mark.parametrize(
    ("thought", "after"),
    [
        ('Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1} and more', "The answer."),
        ('Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1}', "The answer."),
        ('Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1} and more', '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}'),
    ],
)
def test_a_mistral_call_inside_reasoning_ends_with_the_reasoning(thought: str, after: str) -> None:
    result = parse_both("Mistral-Ministral-3-14B-Reasoning-2512", "[THINK]" + thought + "[/THINK]" + after)
    made = after.startswith("[TOOL_CALLS]")
    assert calls(result) == ([("special_function", {"arg1": 1})] if made else [])
    assert (result.message.reasoning_content, result.message.content) == (thought, None if made else after)
    assert [span.start for span in result.spans] == sorted(span.start for span in result.spans)


# vLLM tests/tool_parsers/test_deepseekv32_tool_parser.py (string_attr_true_coerced_by_schema,
# string_attr_true_composed_object, null_coerced_back_to_string): the tool's schema types a DSML
# value; the model's string="true|false" does where there is no schema.
def test_dsml_values_follow_the_schema_then_the_string_attribute() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "s": {"type": "string"},
                        "n": {"type": "integer"},
                        "o": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                    },
                },
            },
        }
    ]

    def parameter(name: str, string: str, value: str) -> str:
        return f'<｜DSML｜parameter name="{name}" string="{string}">{value}</｜DSML｜parameter>\n'

    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n'
        + parameter("s", "false", "null")
        + parameter("n", "true", "42")
        + parameter("o", "true", '{"a": 1}')
        + parameter("x", "true", "42")
        + parameter("y", "false", "42")
        + "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    result = parse_both("DeepSeek-V3.2-llamacpp", text, tools=tools)
    assert calls(result) == [("f", {"s": "null", "n": 42, "o": {"a": 1}, "x": "42", "y": 42})]


# vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py (missing_closing_param): a value whose
# closing tag is left out ends at the next parameter's tag (or the call's), and the call is
# malformed but whole.
@pytest.mark.parametrize(
    ("template", "text", "expected"),
    [
        (
            "Qwen-Qwen3-Coder",
            "<tool_call>\n<function=f>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n"
            "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
            {"city": "Dallas", "state": "TX", "unit": "fahrenheit"},
        ),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>", {"a": "x"}),
        (
            "ZhipuAI-GLM-4.6",
            "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x\n<arg_key>b</arg_key>\n<arg_value>y</arg_value>\n</tool_call>",
            {"a": "x", "b": "y"},
        ),
    ],
)
def test_a_parameter_value_left_unclosed_ends_at_the_next_tag(template: str, text: str, expected: dict[str, Any]) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("f", expected)]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert result.finish_reason == "tool_calls"


# SGLang test/srt/test_function_call_parser.py (test_parse_streaming_text_after_tool_call,
# test_parse_streaming_multiple_tool_calls): text after a list of Python calls is content.
@pytest.mark.parametrize(
    ("template", "text", "content"),
    [
        ("vLLM-Llama-4-pythonic", "[get_weather(location='Tokyo')] Here's the forecast:", " Here's the forecast:"),
        ("vLLM-Llama-4-pythonic", "[get_weather(location='Berlin')] and [search(query='restaurants')]", " and [search(query='restaurants')]"),
        ("LiquidAI-LFM2.5-8B-A1B", "<|tool_call_start|>[get_weather(location='Tokyo')] oops<|tool_call_end|>", " oops"),
    ],
)
def test_text_after_a_list_of_python_calls_is_content(template: str, text: str, content: str) -> None:
    result = parse_both(template, text)
    assert [name for name, _ in calls(result)] == ["get_weather"]
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == ["unexpected_text"]
    assert result.finish_reason == "tool_calls"


# (gpt-oss-20b's first template revision ends a call with <|end|> itself; the model writes
# what the later ones do.)
GPT_OSS_TEMPLATES = ["OpenAI-gpt-oss-120b", "OpenAI-gpt-oss-20b-2025-08-07", "OpenAI-gpt-oss-20b-2025-08-04"]


# llama.cpp test-chat.cpp (gpt-oss structured_output): the final channel constrained to JSON.
@pytest.mark.parametrize("template", GPT_OSS_TEMPLATES)
@pytest.mark.parametrize("header", ["<|channel|>final <|constrain|>json<|message|>", "<|channel|>final<|constrain|>json<|message|>"])
def test_gpt_oss_final_channel_constrained_to_json(template: str, header: str) -> None:
    text = "<|channel|>analysis<|message|>I need to output the invoice.<|end|><|start|>assistant" + header + '{"amount": 13.5}'
    result = parse_both(template, text)
    assert (result.message.reasoning_content, result.message.content) == ("I need to output the invoice.", '{"amount": 13.5}')
    assert not result.diagnostics and result.finish_reason == "stop"


# llama.cpp test-chat.cpp (gpt-oss, "commentary to=assistant before reasoning" and before the
# final answer): a header the model begins with and then supersedes with the next <|channel|>.
# Before, the reasoning's tag was stray and the answer, after the <|end|>, was left out of the
# message.
@pytest.mark.parametrize("template", GPT_OSS_TEMPLATES)
@pytest.mark.parametrize(
    ("text", "reasoning"),
    [
        (
            "<|channel|>commentary to=assistant<|channel|>analysis<|message|>I'm\nthinking<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?",
            "I'm\nthinking",
        ),
        ("<|channel|>commentary to=assistant<|channel|>final<|message|>Hello, world!\nWhat's up?", None),
    ],
)
def test_gpt_oss_header_superseded_by_the_next_channel(template: str, text: str, reasoning: str | None) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, "Hello, world!\nWhat's up?")
    assert not result.diagnostics and result.finish_reason == "stop"


# Ollama's harmony tests feed a completion that begins with the message header the prompt
# already wrote (`<|start|>assistant`), as a model that starts a message of its own does. Read
# as the header, whatever message follows it: the reasoning, a preamble, the answer. Before,
# the header and the channel after it were content with `stray_delimiter`.
@pytest.mark.parametrize("template", GPT_OSS_TEMPLATES)
@pytest.mark.parametrize(
    ("text", "reasoning", "content", "finish"),
    [
        ("<|start|>assistant<|channel|>final<|message|>Hi there.<|return|>", None, "Hi there.", "stop"),
        (
            "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi.",
            "Think.",
            "Hi.",
            "stop",
        ),
        (
            "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
            '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
            None,
            "Let me check.",
            "tool_calls",
        ),
    ],
)
def test_gpt_oss_completion_that_repeats_the_prompts_header(
    template: str, text: str, reasoning: str | None, content: str, finish: str
) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert prompt.endswith("<|start|>assistant")
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert not result.diagnostics and result.finish_reason == finish


# Ollama server/routes_harmony_streaming_test.go (tool call parsed and returned correctly): a
# call ended with a message's <|end|> where its <|call|> belongs, and another message after it.
# Before, the call stayed open to the end: the rest was content with its tokens, and `length`.
@pytest.mark.parametrize("template", GPT_OSS_TEMPLATES)
@pytest.mark.parametrize(
    "after",
    ["<|start|>assistant<|message|>The weather is sunny<|end|>", "<|start|>assistant<|channel|>final<|message|>The weather is sunny<|return|>"],
)
def test_gpt_oss_call_ended_by_a_messages_end(template: str, after: str) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    text = '<|channel|>commentary to=functions.get_weather<|message|>{"location":"San Francisco"}<|end|>' + after
    result = parse_both(template, text, prompt=prompt)
    assert calls(result) == [("get_weather", {"location": "San Francisco"})]
    assert result.message.content == "The weather is sunny"
    canonical = template.endswith("2025-08-04")  # (its own template ends a call so)
    assert [d.kind for d in result.diagnostics] == ([] if canonical else ["noncanonical"])
    assert result.finish_reason == "tool_calls"


GPT_OSS = GPT_OSS_TEMPLATES
SEARCH = '{"query":"x"}'


# vLLM vllm/parser/harmony.py (_SegmentType: commentary with no recipient is content) and
# SGLang's harmony parser (a commentary message ended by <|end|> is normal text): a preamble
# to the user before a call, and reasoning in several messages.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize(
    ("text", "reasoning", "content", "expected"),
    [
        (
            "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary<|message|>"
            "Let me check.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
            '<|message|>{"city": "Paris"}<|call|>',
            "Need the weather.",
            "Let me check.",
            [("get_weather", {"city": "Paris"})],
        ),
        (
            "<|channel|>analysis<|message|>A.<|end|><|start|>assistant<|channel|>analysis<|message|>B.<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Answer.<|return|>",
            "A.B.",
            "Answer.",
            [],
        ),
        (
            "<|channel|>analysis<|message|>A.<|end|><|start|>assistant<|channel|>commentary<|message|>On it.<|end|>",
            "A.",
            "On it.",
            [],
        ),
    ],
    ids=["preamble-then-call", "two-analysis-messages", "preamble-is-the-answer"],
)
def test_gpt_oss_messages_before_the_answer(
    template: str, text: str, reasoning: str, content: str, expected: list[tuple[str, Any]]
) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert calls(result) == expected
    assert not result.diagnostics


# SGLang test_lfm2_detector.py (json_simple, json_multiple_calls, json_parameters_key): LFM2's
# llama.cpp template writes one JSON object per block, and models also write a JSON list of
# them in one block. Both are calls; the list says it is not the template's form.
@pytest.mark.parametrize(
    ("body", "expected", "kinds"),
    [
        ('{"name": "get_weather", "arguments": {"city": "Berlin"}}', [("get_weather", {"city": "Berlin"})], []),
        ('[{"name": "get_weather", "arguments": {"city": "Berlin"}}]', [("get_weather", {"city": "Berlin"})], ["noncanonical"]),
        (
            '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "search", "parameters": {"query": "hotels"}}]',
            [("get_weather", {"city": "Paris"}), ("search", {"query": "hotels"})],
            ["noncanonical"],
        ),
    ],
)
def test_lfm2_json_calls_as_an_object_or_a_list(body: str, expected: list[tuple[str, Any]], kinds: list[str]) -> None:
    result = parse_both("LiquidAI-LFM2-8B-A1B-llamacpp-first", "Checking. <|tool_call_start|>" + body + "<|tool_call_end|>")
    assert calls(result) == expected and result.message.content == "Checking. "
    assert [d.kind for d in result.diagnostics] == kinds and result.finish_reason == "tool_calls"


# SGLang's GptOssDetector tests (test_reasoning_parser.py, analysis then final) and its harmony
# parser: the analysis message's <|end|> and then the next message's channel, with the header
# <|start|>assistant left out, or its role. The reasoning ends at the message's end.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize("between", ["<|end|>", "<|end|><|start|>"])
@pytest.mark.parametrize(
    ("after", "content", "expected", "finish"),
    [
        ("<|channel|>final<|message|>the answer<|end|>", "the answer", [], "stop"),
        ("<|channel|>final <|constrain|>json<|message|>{}<|return|>", "{}", [], "stop"),
        (
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + SEARCH + "<|call|>",
            None,
            [("get_weather", {"query": "x"})],
            "tool_calls",
        ),
        (
            "<|channel|>commentary<|message|>Let me check.<|end|><|channel|>commentary to=functions.f<|message|>{}<|call|>",
            "Let me check.",
            [("f", {})],
            "tool_calls",
        ),
    ],
    ids=["final", "final-json", "call", "preamble-then-call"],
)
def test_gpt_oss_next_message_without_its_header(
    template: str, between: str, after: str, content: str | None, expected: list[tuple[str, Any]], finish: str
) -> None:
    result = parse_both(template, "<|channel|>analysis<|message|>thinking hard" + between + after, tools=TOOLS)
    assert (result.message.reasoning_content, result.message.content) == ("thinking hard", content)
    assert calls(result) == expected
    assert result.finish_reason == finish and not result.diagnostics


@pytest.mark.parametrize("template", GPT_OSS)
def test_gpt_oss_reasoning_ended_by_its_message_end(template: str) -> None:
    # The analysis message is whole, and nothing follows it (a server that stops at <|end|>):
    # as after any closed reasoning block, the answer is empty.
    result = parse_both(template, "<|channel|>analysis<|message|>thinking<|end|>")
    assert (result.message.reasoning_content, result.message.content) == ("thinking", "")
    assert result.finish_reason == "stop" and not result.diagnostics


# llama.cpp test-chat-parser.cpp (test_gpt_oss_harmony_format, "real server scenario"): the
# analysis message's <|end|> left out, the next message's header right after its text. The
# header is a special token, never reasoning: it ends the reasoning, with `noncanonical`.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize(
    ("after", "content", "finish"),
    [
        ("<|channel|>final<|message|>Could you specify the location?", "Could you specify the location?", "stop"),
        ("<|channel|>final<|message|>The answer is 42<|end|>", "The answer is 42", "stop"),
        ("<|channel|>final<|message|>The answer is 42<|return|>", "The answer is 42", "stop"),
    ],
)
def test_gpt_oss_reasoning_ended_by_the_next_messages_header(template: str, after: str, content: str, finish: str) -> None:
    text = "<|channel|>analysis<|message|>Need location info<|start|>assistant" + after
    result = parse_both(template, text, tools=TOOLS)
    assert (result.message.reasoning_content, result.message.content) == ("Need location info", content)
    assert [(d.kind, d.position) for d in result.diagnostics] == [("noncanonical", text.index("<|start|>"))]
    assert result.finish_reason == finish
    prompt = codec_for(template).render([{"role": "user", "content": "Weather?"}], add_generation_prompt=True)
    assert parse_both(template, text, prompt=prompt, tools=TOOLS).message == result.message


# SGLang's harmony parser (test_repetitive_tool_calls_with_commentary_filler): after a call's
# <|call|>, the next message with its header <|start|>assistant left out, as after <|end|>.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize(
    ("after", "reasoning", "content", "names", "finish"),
    [
        (
            "<|channel|>analysis<|message|>Tool not responding<|end|><|start|>assistant<|channel|>final<|message|>Unable<|return|>",
            "Tool not responding",
            "Unable",
            ["get_weather"],
            "tool_calls",
        ),
        ("<|channel|>final<|message|>Done.<|return|>", None, "Done.", ["get_weather"], "tool_calls"),
        (
            "<|channel|>commentary<|message|>Retrying.<|end|><|channel|>commentary to=functions.f<|message|>{}<|call|>",
            None,
            "Retrying.",
            ["get_weather", "f"],
            "tool_calls",
        ),
        ("<|channel|>commentary<|message|>Retrying.", None, "Retrying.", ["get_weather"], "tool_calls"),
        ("<|channel|>analysis<|message|>still thin", "still thin", None, ["get_weather"], "length"),
    ],
    ids=["analysis-then-final", "final", "preamble-then-call", "preamble-last", "analysis-cut-short"],
)
def test_gpt_oss_message_after_a_call_without_its_header(
    template: str, after: str, reasoning: str | None, content: str | None, names: list[str], finish: str
) -> None:
    text = '<|channel|>commentary to=functions.get_weather<|message|>{"city":"Boston"}<|call|>' + after
    result = parse_both(template, text, tools=TOOLS)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert [name for name, _ in calls(result)] == names
    assert result.finish_reason == finish and not result.diagnostics
    prompt = codec_for(template).render([{"role": "user", "content": "Weather?"}], add_generation_prompt=True)
    assert parse_both(template, text, prompt=prompt, tools=TOOLS).message.content == content


# SGLang's HarmonyChatParser tests (test_reasoning_then_tool_then_final,
# test_recipient_before_channel_at_every_token_split, test_legacy_header_fallback): a call
# addressed before its channel (analysis or commentary, with or without the space a prompt
# ending in <|start|>assistant leaves), the older header that names the recipient last, and an
# answer after the calls.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize(
    "header",
    [
        "to=functions.search<|channel|>analysis",
        " to=functions.search<|channel|>analysis",
        "to=functions.search<|channel|>commentary",
        "<|channel|>analysis to=functions.search",
        "<|channel|>commentary<|constrain|>json to=functions.search",
        # Ollama harmony/harmonyparser_test.go: the constraint right after the channel's name.
        " to=functions.search<|channel|>commentary<|constrain|>json",
        " to=functions.search<|channel|>analysis<|constrain|>json",
        # openai/harmony's test data: the ``code`` content type after the recipient.
        "<|channel|>commentary to=functions.search code",
        " to=functions.search<|channel|>commentary code",
    ],
)
def test_gpt_oss_call_headers(template: str, header: str) -> None:
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}]
    result = parse_both(template, header + "<|message|>" + SEARCH + "<|call|>", tools=tools)
    assert calls(result) == [("search", {"query": "x"})]
    assert (result.message.reasoning_content, result.message.content) == (None, None)
    assert result.finish_reason == "tool_calls" and not result.diagnostics


# openai/harmony's test data: a call to a built-in tool with the ``code`` content type is that
# tool's call (its arguments are code, no JSON: kept as written, with a diagnostic).
@pytest.mark.parametrize("template", GPT_OSS)
def test_gpt_oss_builtin_calls_with_the_code_content_type(template: str) -> None:
    thought = "<|channel|>analysis<|message|>Need a tool.<|end|><|start|>assistant"
    browser = parse_both(template, thought + '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>')
    assert calls(browser) == [("browser.search", {"query": "x"})] and not browser.diagnostics
    python = parse_both(template, thought + "<|channel|>analysis to=python code<|message|>print(2**100)<|call|>")
    (call,) = python.message.tool_calls or []
    assert (call.function.name, call.function.arguments) == ("python", "print(2**100)")
    assert (python.message.reasoning_content, python.message.content) == ("Need a tool.", None)
    assert [d.kind for d in python.diagnostics] == ["malformed_tool_call"] and python.finish_reason == "tool_calls"


# openai/harmony renders a built-in tool's recipient in the role's header: read there too, its
# namespace the beginning of the call's name.
@pytest.mark.parametrize("template", GPT_OSS)
@pytest.mark.parametrize(
    ("header", "name"),
    [
        (" to=browser.search<|channel|>analysis", "browser.search"),
        (" to=container.exec<|channel|>commentary code", "container.exec"),
        ("<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant to=browser.open<|channel|>analysis", "browser.open"),
    ],
)
def test_gpt_oss_builtin_recipient_in_the_role_header(template: str, header: str, name: str) -> None:
    result = parse_both(template, header + '<|message|>{"id": 1}<|call|>')
    assert calls(result) == [(name, {"id": 1})] and not result.diagnostics
    assert result.message.content is None and result.finish_reason == "tool_calls"


@pytest.mark.parametrize("template", GPT_OSS)
def test_gpt_oss_reasoning_calls_then_the_answer(template: str) -> None:
    text = (
        "<|channel|>analysis<|message|>Think 中文<|end|>"
        "<|start|>assistant to=functions.search<|channel|>analysis<|message|>" + SEARCH + "<|call|>"
        '<|start|>assistant to=functions.get_document<|channel|>commentary<|message|>{"docid":"1"}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>Answer<|return|>"
    )
    tools = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
        for name in ("search", "get_document")
    ]
    result = parse_both(template, text, tools=tools)
    assert (result.message.reasoning_content, result.message.content) == ("Think 中文", "Answer")
    assert calls(result) == [("search", {"query": "x"}), ("get_document", {"docid": "1"})]
    assert not result.diagnostics


# Ollama harmony/harmonyparser_test.go: arguments that are no JSON at all stay whole, as the
# call's (malformed) arguments, up to its end; only text after a JSON value is no part of it.
@pytest.mark.parametrize(
    ("body", "arguments", "content", "kinds"),
    [
        ("hello world", "hello world", None, ["malformed_tool_call"]),
        ('{"a": 1} world', '{"a": 1}', " world", ["unexpected_text"]),
    ],
)
def test_gpt_oss_arguments_that_are_no_json_stay_whole(body: str, arguments: str, content: str | None, kinds: list[str]) -> None:
    text = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + body + "<|call|>"
    result = parse_both("OpenAI-gpt-oss-120b", text, tools=TOOLS)
    assert [(c.function.name, c.function.arguments) for c in result.message.tool_calls or []] == [("get_weather", arguments)]
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == kinds


# Ollama model/parsers/olmo3_test.go and lfm2_test.go: an argument named by a Python keyword
# (a schema may well call one ``from``) is read under its name.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("AllenAI-Olmo-3.1-32B-Instruct", '<function_calls>book_flight(from="SFO", to="NYC")</function_calls>'),
        ("LiquidAI-LFM2.5-8B-A1B", '<|tool_call_start|>[book_flight(from="SFO", to="NYC")]<|tool_call_end|>'),
        ("vLLM-Llama-4-pythonic", '[book_flight(from="SFO", to="NYC")]'),
    ],
)
def test_python_calls_may_name_an_argument_by_a_python_keyword(template: str, text: str) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("book_flight", {"from": "SFO", "to": "NYC"})]
    assert not result.diagnostics and result.message.content is None


# Ollama model/parsers/gemma4_test.go (raw_quoted_string_*, nested mixed values): Gemma 4
# models also write strings with JSON's quotes; their spaces, commas and braces are the string's.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<|tool_call>call:f{q:"a b"}<tool_call|>', {"q": "a b"}),
        ('<|tool_call>call:f{q:"a,b}",n:2}<tool_call|>', {"q": "a,b}", "n": 2}),
        ('<|tool_call>call:f{r:["a b","c"],s:{k:"v \\"w\\""}}<tool_call|>', {"r": ["a b", "c"], "s": {"k": 'v "w"'}}),
    ],
)
def test_gemma_strings_in_json_quotes_keep_their_text(text: str, expected: dict[str, Any]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert calls(result) == [("f", expected)]
    assert not result.diagnostics


# Found by fuzzing: a string in JSON's quotes followed by a comma ends there, and a key in JSON's
# quotes is the string's value (``noncanonical``), so a model that writes JSON in Gemma's call
# (``{"city":"Paris","days":2}``) loses no member: the one after such a string was dropped, and
# the key kept its quotes.
@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        ('<|tool_call>call:f{"city":"Paris","days":2}<tool_call|>', {"city": "Paris", "days": 2}, ["noncanonical"]),
        ('<|tool_call>call:f{a:"",b:0}<tool_call|>', {"a": "", "b": 0}, []),
        ('<|tool_call>call:f{a:"x, y","b\\"c":0}<tool_call|>', {"a": "x, y", 'b"c': 0}, ["noncanonical"]),
    ],
)
def test_gemma_keys_and_strings_in_json_quotes(text: str, expected: dict[str, Any], kinds: list[str]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert calls(result) == [("f", expected)]
    assert [d.kind for d in result.diagnostics] == kinds


# Found by fuzzing: Gemma's reader set its quoted strings aside behind NUL characters, so a NUL
# the model wrote itself (or a quoted string run on into other text) raised ValueError.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<|tool_call>call:f{q:<|"|>a\x00b<|"|>,n:1}<tool_call|>', {"q": "a\x00b", "n": 1}),
        ('<|tool_call>call:f{q:a\x00b}<tool_call|>', None),  # (an unquoted string, as `q:ab` is)
        ('<|tool_call>call:f{q:\x00}<tool_call|>', None),
        ('<|tool_call>call:search{filters:\x00{a:[1,{b:<|"|>}<|"|>}]}}<tool_call|>', None),
        # (The reading stops after the string; the rest of the call is content.)
        ('<|tool_call>call:f{q:<|"|>a<|"|>b}<tool_call|>', "b}"),
    ],
)
def test_gemma_arguments_holding_nul_characters(text: str, expected: dict[str, Any] | str | None) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert result.reassemble() == text
    if isinstance(expected, str):
        assert [d.kind for d in result.diagnostics] == ["malformed_tool_call", "unexpected_text"]
        assert result.message.content == expected
    elif expected is None:  # not Gemma's syntax: the call keeps the text, and says so
        assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    else:
        assert calls(result) == [("f", expected)] and not result.diagnostics


# transformers tests/utils/test_chat_parsing.py (cohere fixtures): the end-of-turn token a
# Cohere model writes after its calls ends the answer, as the template writes it.
@pytest.mark.parametrize(
    "template", ["Cohere-command-a-reasoning-08-2025", "Cohere-command-a-03-2025", "CohereForAI-c4ai-command-r7b-12-2024-tool_use"]
)
def test_cohere_calls_end_with_the_end_of_turn_token(template: str) -> None:
    text = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "P"}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>'
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "P"})]
    assert result.message.content is None and result.finish_reason == "tool_calls" and not result.diagnostics


# transformers tests/utils/test_chat_parsing.py (gemma4_tool_call): Gemma 4 stops at the
# <|tool_response> its template writes right after a call.
@pytest.mark.parametrize("template", ["Google-gemma-4-31B-it", "Google-gemma-4-31B-it-interleaved"])
def test_gemma_calls_end_where_the_tool_response_would_begin(template: str) -> None:
    text = '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>'
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content is None and result.finish_reason == "tool_calls" and not result.diagnostics


# Ollama model/parsers/cohere_test.go (two calls without the comma between them): the calls read
# so far stand, and the rest of the list, which continues no list, is content; nothing is lost.
@pytest.mark.parametrize(
    ("template", "text", "rest"),
    [
        (
            "Cohere-command-a-03-2025",
            '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_status", "parameters": {}}'
            '{"tool_call_id": "1", "tool_name": "get_time", "parameters": {"x": 1}}]<|END_ACTION|>',
            '{"tool_call_id": "1", "tool_name": "get_time", "parameters": {"x": 1}}]',
        ),
        (
            "Mistral-7B-Instruct-v0.3-jsonschema",
            '[TOOL_CALLS] [{"name": "get_status", "arguments": {}} {"name": "get_time", "arguments": {}}]',
            '{"name": "get_time", "arguments": {}}]',
        ),
    ],
)
def test_a_list_of_calls_missing_a_comma_keeps_the_rest_as_content(template: str, text: str, rest: str) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt, tools=TOOLS)
    assert calls(result) == [("get_status", {})]
    assert result.message.content == rest
    assert [d.kind for d in result.diagnostics] == ["unexpected_text"] and result.finish_reason == "tool_calls"


# transformers tests/utils/test_chat_parsing.py (Qwen3 XML calls): a call that leaves out
# </function> still ends with </tool_call>, with a ``noncanonical`` diagnostic (LMDeploy's
# validator refuses it: tests/test_lmdeploy/.../test_arguments_validation.py).
@pytest.mark.parametrize("template", ["Qwen3-Coder-30B-A3B-Instruct", "Qwen-Qwen3-Coder"])
@pytest.mark.parametrize("end", ["", "<|im_end|>"])
def test_an_xml_call_without_its_function_tag_ends_with_its_call_tag(template: str, end: str) -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</tool_call>" + end
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content is None and result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]


# Ollama model/parsers/qwen3vl_thinking_test.go (a malformed call inside thinking): a block
# that is no call, inside a reasoning block that goes on after it, stays in the reasoning.
def test_a_malformed_call_inside_reasoning_stays_in_the_reasoning() -> None:
    result = parse_both("Qwen3-4B-Thinking-2507", "I'm thinking<tool_call>junk</tool_call> more</think>after", reasoning=True)
    assert (result.message.reasoning_content, result.message.content) == ("I'm thinking<tool_call>junk</tool_call> more", "after")
    # (The block is closed after it: what it holds is reasoning, call or not.)
    assert [d.kind for d in result.diagnostics] == ["tool_call_in_reasoning"]
    unclosed = parse_both("Qwen3-4B-Thinking-2507", "I'm thinking<tool_call>junk</tool_call> more", reasoning=True)
    assert unclosed.message.reasoning_content == "I'm thinking<tool_call>junk</tool_call> more"
    assert [d.kind for d in unclosed.diagnostics] == ["tool_call_in_reasoning", "malformed_tool_call"]


# vLLM tests/tool_parsers/test_seed_oss_tool_parser.py (tool_call_unlimited_thinking_budget): the
# reasoning quotes the call format before the block closes and the real call is made; the
# quoted one is reasoning, and only the real one is a call.
def test_a_call_quoted_in_closed_reasoning_is_no_second_call() -> None:
    template = "ByteDance-Seed-OSS-36B-Instruct"
    call = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona</parameter>\n</function>\n</seed:tool_call>"
    reasoning = "The format is " + call + ". Wait, let me make it."
    result = parse_both(template, "<seed:think>" + reasoning + "</seed:think>" + call)
    assert calls(result) == [("get_weather", {"location": "Barcelona"})]
    assert result.message.reasoning_content == reasoning
    assert [d.kind for d in result.diagnostics] == ["tool_call_in_reasoning"]


# Ollama model/parsers/cohere_test.go (Command A North): the answer opens with <|START_TEXT|>,
# which the template writes after a prompt that opened the thinking.
def test_command_a_north_reads_its_answer_opening() -> None:
    codec = codec_for("Cohere-North-Mini-Code-Cohere2MoE")
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True, reasoning=True)
    text = "Let me think.<|END_THINKING|><|START_TEXT|>Hello world!<|END_TEXT|><|END_OF_TURN_TOKEN|>"
    result = parse_both("Cohere-North-Mini-Code-Cohere2MoE", text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == ("Let me think.", "Hello world!")
    assert not result.diagnostics and result.finish_reason == "stop"


# Ollama model/parsers/apertus15_test.go: a list cut short before its closing tag, and an
# object naming two calls, are malformed, not read as whole calls in silence. The object's
# first name is the call; the rest of the object is content (Ollama rejects the object).
@pytest.mark.parametrize(
    ("text", "expected", "content"),
    [
        ('<|tools_prefix|>[{"get_status":<|tools_suffix|>', [("get_status", {})], None),
        ('<|tools_prefix|>[{"get_status":{},"get_time":{}}]<|tools_suffix|>', [("get_status", {})], '"get_time":{}'),
        (
            '<|tools_prefix|>[{"get_status":{"id":1}, "get_time":{"zone":"UTC"}, "x": 2 },{"ping":{}}]<|tools_suffix|>',
            [("get_status", {"id": 1}), ("ping", {})],
            '"get_time":{"zone":"UTC"}, "x": 2 ',
        ),
    ],
)
def test_apertus_calls_cut_short_or_doubled_are_malformed(text: str, expected: list[tuple[str, object]], content: str | None) -> None:
    result = parse_both("SwissAI-Apertus-8B-Instruct", text)
    assert [(c.function.name, c.function.parsed_arguments) for c in result.message.tool_calls or []] == expected
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    # (With tools given, a second name that is no tool's is text all the same.)
    with_tools = parse_both("SwissAI-Apertus-8B-Instruct", text, tools=["get_status", "ping"])
    assert (calls(with_tools), with_tools.message.content) == (calls(result), content)


# Ollama model/parsers/deepseek3_test.go, minimaxm2_test.go: a call that leaves out a tag ends
# where its section does, not at the end of the text (which would say the answer was cut short).
@pytest.mark.parametrize(
    ("template", "text", "expected", "content", "kinds", "finish"),
    [
        (
            "DeepSeek-V3.1",
            "Testing.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bad_tool{\"arg\":\"value\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>Done.",
            [],
            # A section whose calls are all text is text, its tags too.
            'Testing.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bad_tool{"arg":"value"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>Done.',
            ["malformed_tool_call", "malformed_tool_call"],
            "stop",
        ),
        (
            "DeepSeek-V3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
            '{"city":"Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            [("get_weather", {"city": "Paris"})],
            None,
            [],
            "tool_calls",
        ),
        (
            "MiniMax-M2",
            '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Tokyo</parameter>\n</minimax:tool_call>',
            [("get_weather", {"city": "Tokyo"})],
            None,
            ["malformed_tool_call"],
            "tool_calls",
        ),
    ],
    ids=["deepseek-no-separator", "deepseek-v3-no-closing-fence", "minimax-no-invoke-end"],
)
def test_a_call_missing_a_tag_ends_with_its_section(
    template: str, text: str, expected: list[tuple[str, Any]], content: str | None, kinds: list[str], finish: str
) -> None:
    result = parse_both(template, text, tools=TOOLS, reasoning=False)
    assert calls(result) == expected
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == kinds and result.finish_reason == finish


# llama.cpp test-chat.cpp (Command R7B) and transformers' cohere fixtures: R7B's tool-use
# template writes no generation prompt of its own, so the model writes the answer's header,
# <|START_RESPONSE|>, itself.
@pytest.mark.parametrize(
    "template", ["CohereForAI-c4ai-command-r7b-12-2024-tool_use", "CohereForAI-c4ai-command-r7b-12-2024-tool_use-llamacpp-first"]
)
def test_command_r7b_answers_open_with_the_header_the_model_writes(template: str) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, "<|START_RESPONSE|>Hello, world!<|END_RESPONSE|>", prompt=prompt)
    assert result.message.content == "Hello, world!"
    assert not result.diagnostics and result.finish_reason == "stop"


# Found by fuzzing the answers R7B's template writes: after a thinking block the model writes
# the header too (as Command A Reasoning does), whole or after the prompt that leaves thinking to
# it (``enable_thinking``; the tool-use template writes the chatbot's header after every
# conversation, asked for or not, and closes thinking there unless it is enabled).
@pytest.mark.parametrize(
    "template", ["CohereForAI-c4ai-command-r7b-12-2024-tool_use", "CohereForAI-c4ai-command-r7b-12-2024-tool_use-llamacpp-first"]
)
@pytest.mark.parametrize("with_prompt", [False, True])
def test_command_r7b_writes_its_header_after_its_thinking(template: str, with_prompt: bool) -> None:
    codec = codec_for(template)
    question = [{"role": "user", "content": "hi"}]
    prompt = codec.render(question, add_generation_prompt=True, enable_thinking=True) if with_prompt else None
    text = "<|START_THINKING|>plan<|END_THINKING|><|START_RESPONSE|>Hello<|END_RESPONSE|>"
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == ("plan", "Hello")
    assert not result.diagnostics and result.finish_reason == "stop"
    call = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "foo", "parameters": {"q": 1}}]<|END_ACTION|>'
    result = parse_both(template, "<|START_THINKING|>plan<|END_THINKING|><|START_RESPONSE|>" + call, prompt=prompt)
    assert calls(result) == [("foo", {"q": 1})] and not result.diagnostics


# vLLM tests/tool_parsers/test_glm47_moe_tool_parser.py (zero_arg_inline, zero_arg_newline) and
# test_glm4_moe_tool_parser.py (zero_argument_tool_call): a call with no arguments is the name
# alone, which the call's closing tag ends (GLM-4.6 renders it so with a newline, 4.7 without).
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.6", "ZhipuAI-GLM-4.7-Flash", "ZhipuAI-GLM-5.1"])
@pytest.mark.parametrize(
    "text", ["<tool_call>get_time</tool_call>", "<tool_call>get_time\n</tool_call>", "Sure.<tool_call>get_time\n</tool_call>"]
)
def test_a_glm_call_with_no_arguments_is_whole(template: str, text: str) -> None:
    result = parse_both(template, text, tools=TOOLS[:2])
    assert calls(result) == [("get_time", {})]
    assert result.diagnostics == [] and result.finish_reason == "tool_calls"
    assert result.message.content == ("Sure." if text.startswith("Sure.") else None)


# vLLM tests/reasoning/test_qwen3_reasoning_parser.py (tool_call_no_think_end,
# thinking_disabled_with_tool_call): Qwen3-Coder's templates write the content trimmed, a
# newline, then "\n<tool_call>": both newlines are the call's, so the text before the call reads
# back as the content that was rendered (vLLM's reasoning parser, which reads no call, keeps them).
@pytest.mark.parametrize("template", ["Qwen-Qwen3-Coder", "Qwen-Qwen3.5-4B", "Qwen3-Coder-30B-A3B-Instruct"])
def test_the_newlines_before_a_qwen3_coder_call_are_the_calls(template: str) -> None:
    call = "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>"
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
    result = parse_both(template, "I need to read the file.\n\n" + call, tools=tools)
    assert calls(result) == [("bash", {"command": "cat /etc/hosts"})]
    assert result.message.content == "I need to read the file." and result.diagnostics == []
    codec = codec_for(template)
    answer = {"role": "assistant", "content": "I need to read the file.", "tool_calls": [{"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}]}
    report = codec.roundtrip([{"role": "user", "content": "hi"}, answer], tools=tools)
    assert report.text_survived and not [loss for loss in report.losses if loss.kind == "content_changed"]


# vLLM tests/tool_parsers/test_openai_tool_parser.py (not_json_no_content_type), Ollama
# model/parsers qwen3vl (WrapsToolCallParseErrors): a malformed call's diagnostic tells text that
# is no JSON (from which character) from JSON cut short.
@pytest.mark.parametrize(
    ("template", "text", "message"),
    [
        ("OpenAI-gpt-oss-120b", "<|channel|>commentary to=functions.f<|message|>foo<|call|>", "the arguments are not JSON from character 0 on"),
        ("OpenAI-gpt-oss-120b", '<|channel|>commentary to=functions.f json<|message|>{"a": tru<|call|>', "the tool call's JSON is incomplete"),
        ("Qwen3-0.6B", '<tool_call>{"name":"foo","arguments":{broken</tool_call>', "the arguments are not JSON from character 1 on"),
        ("Qwen3-0.6B", '<tool_call>{"name":"foo","arguments":{"a": 1.</tool_call>', "the tool call's JSON is incomplete"),
    ],
)
def test_a_malformed_calls_diagnostic_tells_no_json_from_json_cut_short(template: str, text: str, message: str) -> None:
    result = parse_both(template, text)
    assert [(d.kind, d.message) for d in result.diagnostics] == [("malformed_tool_call", f"tool call 0: {message}")]


# llama.cpp test-chat.cpp (Ling 3.0, "Prose after the last tool call is content"): the prompt
# opens the think block and the model calls a tool at once, then writes to the user; the block,
# never closed, ended at the call.
def test_prose_after_a_call_in_a_think_block_never_closed_is_content() -> None:
    template = "InclusionAI-Ling-3.0-flash"
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    prompt = codec_for(template).render([{"role": "user", "content": "Hey there!"}], add_generation_prompt=True, tools=tools)
    assert prompt.endswith("<think>")
    text = "<tool_call>get_time\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\nThe time has been checked."
    result = parse_both(template, text, prompt=prompt, tools=tools)
    assert calls(result) == [("get_time", {"city": "Paris"})]
    assert (result.message.reasoning_content, result.message.content) == (None, "\nThe time has been checked.")
    assert result.finish_reason == "tool_calls" and [d.kind for d in result.diagnostics] == ["tool_call_in_reasoning"]


# Ollama model/parsers/minicpm5_test.go (tool_call_with_arguments_wrapper): the parameters
# wrapped in <arguments>, which the template does not write, are the call's.
def test_minicpm_parameters_wrapped_in_arguments() -> None:
    text = '<function name="get_weather"><arguments><param name="city">Paris</param></arguments></function>'
    result = parse_both("OpenBMB-MiniCPM5-1B", text)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content is None and not result.diagnostics and result.finish_reason == "tool_calls"


# llama.cpp test-chat.cpp (Qwen3-Coder XML): models indent the function's tag inside
# <tool_call>, or leave a blank line: the opening is the call's all the same.
@pytest.mark.parametrize("template", ["Qwen-Qwen3-Coder", "Qwen-Qwen3.5-4B", "Qwen3-Coder-30B-A3B-Instruct"])
@pytest.mark.parametrize("gap", ["\n  ", "\n\n", " ", "\n    ", "\n\t"])
def test_an_indented_qwen3_coder_function_tag_opens_the_call(template: str, gap: str) -> None:
    text = f"I'll look.<tool_call>{gap}<function=special_function>\n    <parameter=arg1>\n1\n</parameter>\n  </function>\n</tool_call>"
    result = parse_both(template, text)
    assert calls(result) == [("special_function", {"arg1": 1})]
    assert result.message.content == "I'll look." and result.diagnostics == []


# Ollama model/parsers/qwen3coder_bare_test.go (prose that mentions a tag): a name the answer's
# end token cuts holds no call; the end is read, and the text is whole.
@pytest.mark.parametrize("template", ["Qwen-Qwen3-Coder", "Qwen3-Coder-30B-A3B-Instruct"])
def test_a_function_name_cut_by_the_end_token_is_text_and_the_answer_ends(template: str) -> None:
    result = parse_both(template, "the tag <function=foo is documented here.<|im_end|>")
    assert result.message.content == "the tag <function=foo is documented here."
    assert result.finish_reason == "stop" and not result.message.tool_calls
    assert [d.kind for d in result.diagnostics] == ["noncanonical", "malformed_tool_call"]
    # Without the end token the text may have been cut inside a call's name.
    result = parse_both(template, "the tag <function=foo is documented here")
    assert result.finish_reason == "length"


# mlx-lm tests/test_tool_parsing.py (test_gemma4) and vllm-mlx's Gemma 4 tests
# (test_multiple_tool_calls_in_one_block): Gemma 4 writes several calls in one block, each
# after the last one's closing brace; its template writes one a block.
@pytest.mark.parametrize("template", ["Google-gemma-4-31B-it", "Google-gemma-4-31B-it-interleaved"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '<|tool_call>call:glob{pattern:<|"|>README*.md<|"|>}call:glob{pattern:<|"|>CONTRIBUTING.md<|"|>}<tool_call|>',
            [("glob", {"pattern": "README*.md"}), ("glob", {"pattern": "CONTRIBUTING.md"})],
        ),
        (
            '<|tool_call>call:search{query:<|"|>x<|"|>,limit:3} call:configure{settings:{on:true}}<tool_call|>',
            [("search", {"query": "x", "limit": 3}), ("configure", {"settings": {"on": True}})],
        ),
    ],
)
def test_gemma_calls_written_in_one_block(template: str, text: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected and result.message.content is None
    assert not result.diagnostics and result.finish_reason == "tool_calls"


# vLLM tests/tool_parsers/test_gemma4_tool_parser.py (TestParseGemma4Args: empty_value,
# stray_closing_bracket): a value Gemma's syntax cannot read is kept as the text the model wrote,
# a string, and the reading goes on; the arguments stay JSON and the call is malformed.
@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        ("key:", {"key": ""}),
        ("a:1,b:oops x,c:<|\"|>y<|\"|>", {"a": 1, "b": "oops x", "c": "y"}),
        ("a:[42,]trailing", {"a": "[42,]trailing"}),
    ],
)
def test_a_gemma_value_that_is_no_value_is_kept_as_written(body: str, arguments: dict[str, Any]) -> None:
    result = parse_both("Google-gemma-4-31B-it", "<|tool_call>call:f{" + body + "}<tool_call|>")
    assert calls(result) == [("f", arguments)]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert result.finish_reason == "tool_calls" and result.message.content is None


# vLLM tests/tool_parsers/test_llama3_json_tool_parser.py (brace_in_trailing_text) and
# test_mistral_tool_parser.py (pre_v11_regex_fallback_fails): a block that stopped being JSON
# before the text ended is text (or a malformed call), and the text was not cut short.
@pytest.mark.parametrize(
    ("template", "text", "expected", "content", "finish"),
    [
        (
            "Llama-3.1-8B-Instruct",
            '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
            [("searchTool", {"query": "test"})],
            " I used {searchTool} for this.",
            "tool_calls",
        ),
        ("Llama-3.1-8B-Instruct", "{x} and more", [], "{x} and more", "stop"),
        ("Mistral-7B-Instruct-v0.3-jsonschema", "[TOOL_CALLS] not json at all", [], "[TOOL_CALLS] not json at all", "stop"),
    ],
)
def test_a_block_that_is_no_json_does_not_make_the_text_cut_short(
    template: str, text: str, expected: list[tuple[str, Any]], content: str, finish: str
) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected and result.message.content == content
    assert result.finish_reason == finish
    assert "unclosed_tool_call" not in [d.kind for d in result.diagnostics]
    # A body cut short inside its JSON is still cut short.
    cut = '{"name": "a", "parameters": {"q": "unterminated' if template.startswith("Llama") else '[TOOL_CALLS] [{"name": "a"'
    assert parse_both(template, cut).finish_reason == "length"


# Found beside vLLM's test_llama4_pythonic_tool_parser.py (mismatched_brackets): a ")" that
# closes the list of calls is no end of it; the block is read whole, and no character of it is
# left out of the message.
@pytest.mark.parametrize("text", ["[foo(x=1))]", "[foo(x=1)))]", "[foo(x=1)) bar]"])
def test_a_list_of_python_calls_closed_by_the_wrong_bracket_loses_nothing(text: str) -> None:
    result = parse_both("vLLM-Llama-4-pythonic", text)
    assert result.message.content == text and not result.message.tool_calls
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]


# vLLM tests/tool_parsers/test_qwen3_xml_coder_shared.py (content_with_real_param_name_literal):
# a parameter written twice (or a value that spells the parameter's tag) gives arguments whose
# key repeats, which a JSON reader takes the last of: the call says so.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=path>\na\n</parameter>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>"),
        ("ZhipuAI-GLM-4.6", "<tool_call>f\n<arg_key>path</arg_key>\n<arg_value>a</arg_value>\n<arg_key>path</arg_key>\n<arg_value>b</arg_value>\n</tool_call>"),
        ("MiniMax-M2", '<minimax:tool_call>\n<invoke name="f">\n<parameter name="path">a</parameter>\n<parameter name="path">b</parameter>\n</invoke>\n</minimax:tool_call>'),
    ],
)
def test_a_parameter_written_twice_makes_the_call_malformed(template: str, text: str) -> None:
    result = parse_both(template, text)
    assert [(c.function.name, c.function.arguments) for c in result.message.tool_calls or []] == [("f", '{"path": "a", "path": "b"}')]
    assert [(d.kind, "written twice" in d.message) for d in result.diagnostics] == [("malformed_tool_call", True)]


# vLLM tests/tool_parsers/test_qwen3coder_tool_parser.py (malformed_xml_no_gt_delimiter): the
# name's ">" is left out, so the name runs on into the parameter's tag; no function has that
# name, and the block is text (with no tools given too).
def test_a_qwen3_coder_name_that_runs_into_a_tag_is_no_call() -> None:
    text = "<tool_call>\n<function=get_current_weather\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>"
    result = parse_both("Qwen-Qwen3-Coder", text)
    assert not result.message.tool_calls and result.message.content == text
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# vLLM tests/tool_parsers/test_deepseekv32_tool_parser.py (arguments_wrapper_repaired,
# input_wrapper_repaired): DeepSeek V3.2 may wrap the arguments in one parameter the tool has
# no place for; its object is the arguments, read as a form beside the canonical one.
@pytest.mark.parametrize(("key", "string"), [("arguments", "false"), ("input", "true")])
def test_dsml_arguments_wrapped_in_one_parameter_are_the_arguments(key: str, string: str) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}]
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        f'<｜DSML｜parameter name="{key}" string="{string}">{{"location":"Beijing"}}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    result = parse_both("DeepSeek-V3.2-llamacpp", text, tools=tools)
    assert calls(result) == [("get_weather", {"location": "Beijing"})]
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    # Without the tool's schema nothing says the parameter is no argument of its own.
    assert calls(parse_both("DeepSeek-V3.2-llamacpp", text)) == [("get_weather", {key: {"location": "Beijing"} if string == "false" else '{"location":"Beijing"}'})]


# vLLM tests/tool_parsers/test_minicpm5xml_tool_parser.py (test_properties_wrapped_arguments):
# the arguments wrapped in a parameter named as the schema's own ``properties``, and written as
# a Python dict. Before, the call had one string argument the tool does not have.
@pytest.mark.parametrize("value", ["{'phone_number': '555-123-2002'}", '{"phone_number": "555-123-2002"}'])
def test_arguments_wrapped_in_a_properties_parameter_are_the_arguments(value: str) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "get_customer_by_phone", "parameters": {"type": "object", "properties": {"phone_number": {"type": "string"}}}},
        }
    ]
    text = f'<function name="get_customer_by_phone"><param name="properties">{value}</param></function>'
    result = parse_both("OpenBMB-MiniCPM5-1B", text, tools=tools)
    assert calls(result) == [("get_customer_by_phone", {"phone_number": "555-123-2002"})]
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]


# vLLM tests/tool_parsers/test_minicpm5xml_tool_parser.py (single_call_with_surrounding_text):
# the template writes a newline before a call and none after it, so the newline after a call is
# the text's own. Before, both were taken and the text around the call ran together.
def test_text_around_a_minicpm_call_keeps_its_newline() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    call = '<function name="get_weather"><param name="city">上海</param></function>'
    result = parse_both("OpenBMB-MiniCPM5-1B", f"Intro before.\n{call}\nOutro after.\n", tools=tools)
    assert result.message.content == "Intro before.\nOutro after.\n"
    assert calls(result) == [("get_weather", {"city": "上海"})]
    # Between two calls, the newline is the one the template writes before the second.
    result = parse_both("OpenBMB-MiniCPM5-1B", f"{call}\n{call}", tools=tools)
    assert result.message.content is None and len(calls(result)) == 2


# Found beside vLLM's tests/tool_parsers/test_gemma4_regex_and_bare_calls.py
# (turn_end_closure_instead_of_tool_call_end): text after a Gemma call's closing brace, before
# its closing tag (the next call opened there, or the turn's end token), is no part of the call
# and stays in the message as content.
@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("<|tool_call>call:f{a:1}<|tool_call>call:g{}<tool_call|>", "<|tool_call>call:g{}"),
        ("<|tool_call>call:f{a:1} and more<tool_call|>", " and more"),
    ],
)
def test_text_after_a_gemma_calls_brace_stays_in_the_message(text: str, content: str) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert [c.function.name for c in result.message.tool_calls or []] == ["f"]
    assert result.message.content == content
    assert "unexpected_text" in [d.kind for d in result.diagnostics]


# SGLang test/registered/function_call/test_kimik2_detector.py (unparsable tool ids, bare
# counters): a section whose calls are all text (an unknown tool, no name) is text, its tags
# too; the message keeps every character.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Moonshot-Kimi-K2-Instruct-early", "pre<|tool_calls_section_begin|><|tool_call_begin|>weird@id<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>post"),
        ("MiniMax-M2", 'pre<minimax:tool_call><invoke name="foo"><parameter name="a">1</parameter></invoke></minimax:tool_call>post'),
        ("DeepSeek-V3.2-llamacpp", 'pre<｜DSML｜function_calls>\n<｜DSML｜invoke name="foo">\n<｜DSML｜parameter name="a" string="true">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>post'),
    ],
)
def test_a_section_of_calls_that_are_all_text_is_text(template: str, text: str) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert not result.message.tool_calls and result.message.content == text
    assert result.finish_reason == "stop" and "unknown_tool" in [d.kind for d in result.diagnostics]


# vLLM tests/tool_parsers/test_llama4_pythonic_tool_parser.py (malformed lists): a list whose
# brackets close but do not match is malformed, and whole (`stop`); one whose brackets never
# close was cut short (`length`). Either way the text is content.
@pytest.mark.parametrize(
    ("text", "finish", "kinds"),
    [
        ("[foo(x=1])]", "stop", ["malformed_tool_call"]),
        ("[foo(x=1))]", "stop", ["malformed_tool_call"]),
        ("[foo(x=1]", "length", ["unclosed_tool_call", "malformed_tool_call"]),
        ("[foo(x=[1)]", "length", ["unclosed_tool_call", "malformed_tool_call"]),
        # SGLang test_function_call_parser.py (Pythonic: text that is no call): prose in
        # brackets is whole, whatever its quotes.
        ("[don't panic] done", "stop", ["malformed_tool_call"]),
        ("[Note: it's raining] Take an umbrella.", "stop", ["malformed_tool_call"]),
    ],
)
def test_a_python_list_ends_whole_once_its_brackets_close(text: str, finish: str, kinds: list[str]) -> None:
    result = parse_both("vLLM-Llama-4-pythonic", text)
    assert not result.message.tool_calls and result.message.content == text
    assert result.finish_reason == finish
    assert [d.kind for d in result.diagnostics] == kinds


# vLLM tests/tool_parsers/test_gemma4_tool_parser.py (a call closed by the end of the turn):
# a call whose body is whole, then the turn's end token where the closing tag belongs, ends
# with the turn; the token is a delimiter, the call is kept, and a diagnostic says so.
@pytest.mark.parametrize(
    ("template", "text", "expected", "end"),
    [
        ("Google-gemma-4-31B-it", '<|tool_call>call:gdb{args:<|"|>-batch -ex run /tmp/poc<|"|>}<turn|>', ("gdb", {"args": "-batch -ex run /tmp/poc"}), "<turn|>"),
        ("Qwen3-0.6B", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n<|im_end|>', ("f", {"a": 1}), "<|im_end|>"),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</func<|im_end|>", ("f", {"a": 1}), "<|im_end|>"),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<|im_end|>", ("f", {"a": 1}), "<|im_end|>"),
    ],
)
def test_a_call_may_end_with_the_turn(template: str, text: str, expected: tuple[str, Any], end: str) -> None:
    result = parse_both(template, text)
    assert calls(result) == [expected]
    assert result.message.content is None
    assert result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    assert result.spans[-1].kind == "delimiter" and result.span_text(result.spans[-1]) == end


@pytest.mark.parametrize(
    ("template", "text"),
    [
        # Text after the end token: the call was not ended by it.
        ("Qwen3-0.6B", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}<|im_end|>x'),
        # A body cut short: no end of the call.
        ("Qwen3-0.6B", '<tool_call>\n{"name": "f", "arguments": {"a": 1<|im_end|>'),
        # Text that is no closing tag before the end token.
        ("Google-gemma-4-31B-it", "<|tool_call>call:f{a:1} more<turn|>"),
    ],
)
def test_a_call_that_does_not_end_at_the_turns_end_is_cut_short(template: str, text: str) -> None:
    result = parse_both(template, text)
    assert result.finish_reason == "length"
    assert "unclosed_tool_call" in [d.kind for d in result.diagnostics]


# Llama 3.1's template ends a turn that awaits a tool's answer with <|eom_id|> (the model card's
# "end of message"): a call ends there as at <|eot_id|>.
def test_llama_calls_end_with_the_end_of_message_token() -> None:
    result = parse_both("Llama-3.1-8B-Instruct", '<|python_tag|>{"name": "f", "parameters": {"a": 1}}<|eom_id|>')
    assert calls(result) == [("f", {"a": 1})]
    assert result.message.content is None and result.finish_reason == "tool_calls" and not result.diagnostics


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


NUMBER_TOOL = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"p": {"type": "number"}}}}}]


# SGLang test/registered/function_call/test_nonfinite_coercion.py: a value that reads as a
# number JSON cannot write (1e999 is infinite as a float; NaN and Infinity are no JSON) stays
# the text the model wrote; the arguments are always JSON.
@pytest.mark.parametrize(
    ("template", "text", "value"),
    [
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=p>\n1e999\n</parameter>\n</function>\n</tool_call>", "1e999"),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=p>\nNaN\n</parameter>\n</function>\n</tool_call>", "NaN"),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=p>\n-Infinity\n</parameter>\n</function>\n</tool_call>", "-Infinity"),
        ("MiniMax-M2", '<minimax:tool_call><invoke name="f"><parameter name="p">1e999</parameter></invoke></minimax:tool_call>', "1e999"),
        ("Google-gemma-4-31B-it", "<|tool_call>call:f{p:1e999}<tool_call|>", "1e999"),
        ("Google-gemma-4-31B-it", "<|tool_call>call:f{p:NaN}<tool_call|>", "NaN"),
    ],
)
def test_numbers_json_cannot_write_stay_as_written(template: str, text: str, value: str) -> None:
    result = parse_both(template, text, tools=NUMBER_TOOL)
    [call] = result.message.tool_calls or []
    assert _strict_json(call.function.arguments) == {"p": value}


def test_nan_in_a_json_call_is_malformed_and_kept_as_written() -> None:
    result = parse_both("Qwen3-0.6B", '<tool_call>\n{"name": "f", "arguments": {"p": NaN}}\n</tool_call>')
    [call] = result.message.tool_calls or []
    assert call.function.arguments == '{"p": NaN}'
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# llama.cpp test-chat.cpp (Seed-OSS, edit with quotes): Seed's template writes a parameter's
# value with no newline around it, so a newline at the value's edge is the value's.
def test_seed_parameter_values_keep_newlines_at_their_edges() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "edit",
                "parameters": {"type": "object", "properties": {k: {"type": "string"} for k in ("s", "t", "u")}},
            },
        }
    ]
    arguments = {"s": 'return arg + "bar"\n', "t": "\nb", "u": "\n\nc\n\n"}
    codec = codec_for("ByteDance-Seed-OSS-36B-Instruct")
    question = [{"role": "user", "content": "hi"}]
    answer = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "edit", "arguments": arguments}}]}
    prompt = codec.render(question, tools=tools, add_generation_prompt=True)
    full = codec.render([*question, answer], tools=tools)
    assert full.startswith(prompt) and "<parameter=t>\nb</parameter>" in full
    result = parse_both("ByteDance-Seed-OSS-36B-Instruct", full[len(prompt) :], prompt=prompt, tools=tools)
    assert calls(result) == [("edit", arguments)]


# SGLang test_function_call_parser.py (GLM-4.x, a key written twice): a parameter's name, then
# another name's tags before any value; the value is the last name's, and the call is malformed.
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.6", "ZhipuAI-GLM-4.7-Flash", "Laguna-v2"])
def test_an_xml_parameter_name_with_no_value_gives_way_to_the_next(template: str) -> None:
    text = "<tool_call>get_weather\n<arg_key>location</arg_key><arg_key>count</arg_key><arg_value>3</arg_value>\n</tool_call>"
    result = parse_both(template, text)
    assert calls(result) == [("get_weather", {"count": 3})]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert "'location' has no value" in result.diagnostics[0].message


# Ollama model/parsers/glm46_test.go (unopened arg_value after arg_key, mixed unopened and valid
# arg_values): GLM-4.6 at times leaves out a value's <arg_value>. The value is read up to its
# closing tag, noncanonical; a name followed by the next name still has no value.
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.6", "ZhipuAI-GLM-4.7-Flash", "Laguna-v2"])
@pytest.mark.parametrize(
    ("body", "arguments", "kinds"),
    [
        ("<arg_key>city</arg_key>\nNew York</arg_value>\n<arg_key>unit</arg_key>\ncelsius</arg_value>", {"city": "New York", "unit": "celsius"}, ["noncanonical", "noncanonical"]),
        ("<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>unit</arg_key>\ncelsius</arg_value>", {"city": "Paris", "unit": "celsius"}, ["noncanonical"]),
        ("<arg_key>days</arg_key>3</arg_value>", {"days": 3}, ["noncanonical"]),
    ],
)
def test_a_glm_value_whose_opening_tag_is_left_out(template: str, body: str, arguments: dict[str, Any], kinds: list[str]) -> None:
    result = parse_both(template, "<tool_call>get-weather\n" + body + "</tool_call>")
    assert calls(result) == [("get-weather", arguments)]
    assert [d.kind for d in result.diagnostics] == kinds
    assert result.message.content is None and result.finish_reason == "tool_calls"


# SGLang test_kimik2_detector.py and test_reasoning_parser.py (Kimi K2): a call written with no
# separator and no arguments ends at its closing tag (malformed), so the calls after it are read;
# a section opened inside reasoning that holds no call is reasoning, its tags in place.
@pytest.mark.parametrize("name", ["junk", "functions.junk:0"])
def test_a_kimi_call_with_no_arguments_ends_at_its_closing_tag(name: str) -> None:
    text = (
        f"<|tool_calls_section_begin|><|tool_call_begin|>{name}<|tool_call_end|>"
        "<|tool_call_begin|>functions.f:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>The answer"
    )
    result = parse_both("Moonshot-Kimi-K2-Instruct", text)
    assert calls(result) == [("junk", {}), ("f", {})]
    assert result.message.content == "The answer" and result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    known = parse_both("Moonshot-Kimi-K2-Instruct", text, tools=[{"type": "function", "function": {"name": "f"}}])
    assert calls(known) == [("f", {})]
    # (A section whose first call is text is text, its tags too.)
    assert known.message.content == (
        f"<|tool_calls_section_begin|><|tool_call_begin|>{name}<|tool_call_end|><|tool_calls_section_end|>The answer"
    )


def test_a_kimi_section_inside_reasoning_that_holds_no_call_is_reasoning() -> None:
    result = parse_both("Moonshot-Kimi-K2-Thinking", "<think>thinking<|tool_calls_section_begin|><|tool_call_begin|>")
    assert result.message.reasoning_content == "thinking<|tool_calls_section_begin|><|tool_call_begin|>"
    assert not result.message.content and result.finish_reason == "length"


LIST_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]


# SGLang test/registered/unit/function_call/test_unknown_tool_name.py, on lists of calls: a call
# to a tool `tools=` does not have is dropped from the calls (as SGLang does), and its text is
# content with `unknown_tool` (nothing the model wrote is lost); so is a call in a Python list
# that is no Python.
@pytest.mark.parametrize(
    ("template", "text", "dropped"),
    [
        ("cogito-v1-preview-llama-3B", '[{"name": "get_weather", "parameters": {"city": "Tokyo"}},{"name": "rm_rf", "parameters": {"path": "/"}}]', '{"name": "rm_rf", "parameters": {"path": "/"}}'),
        ("cogito-v1-preview-llama-3B", '[{"name": "rm_rf", "parameters": {"path": "/"}}, {"name": "get_weather", "parameters": {"city": "Tokyo"}}]', '{"name": "rm_rf", "parameters": {"path": "/"}}'),
        ("AI21-Jamba-Large-1.6", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Tokyo"}},{"name": "rm_rf", "arguments": {"path": "/"}}]</tool_calls>', '{"name": "rm_rf", "arguments": {"path": "/"}}'),
        ("Mistral-7B-Instruct-v0.3-jsonschema", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Tokyo"}},{"name": "rm_rf", "arguments": {}}]', '{"name": "rm_rf", "arguments": {}}'),
        ("vLLM-Llama-4-pythonic", "[get_weather(city='Tokyo'), rm_rf(path='/')]", "rm_rf(path='/')"),
        ("LiquidAI-LFM2.5-8B-A1B", '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "x"}}, {"name": "rm", "arguments": {}}]<|tool_call_end|>', '{"name": "rm", "arguments": {}}'),
        ("AllenAI-Olmo-3.1-32B-Instruct", '<function_calls>get_weather(city="x")\nrm(a=1)</function_calls>', "rm(a=1)"),
        ("vLLM-Llama-4-pythonic", "[get_weather(city='Tokyo'), get_time(x=foo bar), get_time()]", "get_time(x=foo bar)"),
    ],
)
def test_a_call_of_a_list_that_is_no_call_is_content(template: str, text: str, dropped: str) -> None:
    result = parse_both(template, text, tools=LIST_TOOLS)
    assert [name for name, _ in calls(result)] == [n for n in ("get_weather", "get_time") if f"{n}(" in text.replace(dropped, "") or f'"{n}"' in text]
    assert result.message.content == dropped
    kinds = [d.kind for d in result.diagnostics]
    assert kinds == (["malformed_tool_call"] if "foo bar" in dropped else ["unknown_tool"])
    assert result.diagnostics[0].position == text.index(dropped)


# A tool named as MCP tools are (``mcp__fs.read-file_v2``, a dash in it) is read back from the
# Python call its template writes (the dash is no Python, but no name would be either), and a
# dash in a string argument stays what it is.
@pytest.mark.parametrize("template", ["LiquidAI-LFM2.5-8B-A1B", "vLLM-Llama-4-pythonic", "AllenAI-Olmo-3.1-32B-Instruct"])
def test_a_python_call_to_a_tool_with_a_dash_in_its_name(template: str) -> None:
    name, arguments = "mcp__fs.read-file_v2", {"path": "/tmp/a-b(c)"}
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
    codec = codec_for(template)
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    rendered = codec.render([{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call]}], tools=tools)
    prompt = codec.render([{"role": "user", "content": "x"}], tools=tools, add_generation_prompt=True)
    assert rendered.startswith(prompt) and name + "(" in rendered
    result = parse_both(template, rendered[len(prompt) :], prompt=prompt, tools=tools)
    assert calls(result) == [(name, arguments)]


# Python calls written as a list without its brackets (``f(a=1), junk``): an element that is no
# call is content, as in the list with them, not dropped.
@pytest.mark.parametrize("bracketed", [False, True])
def test_python_calls_without_the_lists_brackets_keep_an_element_that_is_no_call(bracketed: bool) -> None:
    body = "get_weather(city='Paris'), junk"
    text = "<|tool_call_start|>" + (f"[{body}]" if bracketed else body) + "<|tool_call_end|>"
    result = parse_both("LiquidAI-LFM2.5-8B-A1B", text)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == "junk" and [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert result.diagnostics[0].position == text.index("junk")


# A call's object that breaks or never ends still names the members beside its name and its
# arguments that it leaves out, and a member it broke in is content: ``"x": [}``, read to its
# end but no JSON, as ``"x": }`` is.
@pytest.mark.parametrize(
    ("body", "content", "left_out"),
    [
        ('{"name": "get_time", "arguments": {"a": 1}, "x": [}', '"x": [}', None),
        ('{"name": "get_time", "arguments": {"a": 1}, "x": }', '"x": }', None),
        ('{"name": "get_time", "note": "keep", "arguments": {"a": 1},}', None, '"note"'),
        ('{"name": "get_time", "x": 1, "arguments": {"a": 1}', None, '"x"'),
    ],
)
def test_a_broken_call_object_names_or_keeps_its_other_members(body: str, content: str | None, left_out: str | None) -> None:
    result = parse_both("Qwen3-0.6B", f"<tool_call>\n{body}\n</tool_call>", tools=TOOLS)
    assert calls(result) == [("get_time", {"a": 1})] and result.message.content == content
    said = [d.message for d in result.diagnostics if d.kind == "noncanonical"]
    assert said == ([f"tool call 0: members beside its name and arguments are left out: {left_out}"] if left_out else [])
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]


# mlx-lm's Apertus cases: two elements of a list that are no call, one after the other, are one
# run of content with the comma between them (no character of the list is lost from the message).
@pytest.mark.parametrize(
    ("template", "text", "dropped"),
    [
        ("SwissAI-Apertus-8B-Instruct", '<|tools_prefix|>[{"get_time": {}}, {"nope": {}},  {"rm": {}}]<|tools_suffix|>', '{"nope": {}},  {"rm": {}}'),
        ("cogito-v1-preview-llama-3B", '[{"name": "get_time", "parameters": {}}, {"name": "a", "parameters": {}}, {"name": "b", "parameters": {}}]', '{"name": "a", "parameters": {}}, {"name": "b", "parameters": {}}'),
    ],
)
def test_elements_of_a_list_that_are_no_call_keep_the_comma_between_them(template: str, text: str, dropped: str) -> None:
    result = parse_both(template, text, tools=LIST_TOOLS)
    assert [name for name, _ in calls(result)] == ["get_time"]
    assert result.message.content == dropped
    assert [d.kind for d in result.diagnostics] == ["unknown_tool", "unknown_tool"]


# A Gemma 4 value written as JSON writes it goes into the arguments as written (a float keeps 17
# digits: ``123456789.12345679``); one JSON spells otherwise (``007``, ``.5``) as JSON writes it.
def test_gemma_numbers_keep_their_spelling() -> None:
    text = "<|tool_call>call:calc{x:123456789.123456789,y:1.50,z:[1, 2.50],w:007,v:.5}<tool_call|>"
    result = parse_both("Google-gemma-4-31B-it", text)
    (call,) = result.message.tool_calls or []
    assert call.function.arguments == '{"x": 123456789.123456789, "y": 1.50, "z": [1, 2.50], "w": 7, "v": 0.5}'
    assert not result.diagnostics


# A Gemma 4 key that no value follows, the call closed after it, is no member: its text is
# content, as an XML parameter's name with no value is (cut short by the end of the text, it
# stays in the call's span with the call).
@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days<tool_call|>', "days", {"city": "Paris"}),
        ("<|tool_call>call:get_weather{days<tool_call|>", "days", {}),
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days', None, {"city": "Paris"}),
    ],
)
def test_a_gemma_key_no_value_follows_is_content(text: str, content: str | None, expected: dict[str, Any]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert calls(result) == [("get_weather", expected)] and result.message.content == content
    assert [d.kind for d in result.diagnostics] == (["malformed_tool_call", "unexpected_text"] if content else ["unclosed_tool_call"])


# SGLang test/registered/unit/function_call/test_gemma4_string_delimiters.py: Gemma 4 leaves out
# a string's opening <|"|> (`query:weather in Tokyo<|"|>`); the text before the quote is the
# string (noncanonical). A bracket left open before the closing brace keeps the value as written.
@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        ('<|tool_call>call:web_search{query:weather in Tokyo<|"|>}<tool_call|>', {"query": "weather in Tokyo"}, ["noncanonical"]),
        ('<|tool_call>call:web_search{query:weather in Tokyo<|"|>,n:3}<tool_call|>', {"query": "weather in Tokyo", "n": 3}, ["noncanonical"]),
        ("<|tool_call>call:web_search{a:[1,2}<tool_call|>", {"a": "[1,2"}, ["malformed_tool_call"]),
        # (test_omitted_opening_delimiter_with_comma: the string holds a comma, and goes on past it.)
        ('<|tool_call>call:web_search{query:Paris, France<|"|>,limit:5}<tool_call|>', {"query": "Paris, France", "limit": 5}, ["noncanonical"]),
        ('<|tool_call>call:web_search{query:a, b, c<|"|>}<tool_call|>', {"query": "a, b, c"}, ["noncanonical"]),
        # A key after the comma ends the value there, as before.
        ("<|tool_call>call:web_search{n:1, limit:5}<tool_call|>", {"n": 1, "limit": 5}, []),
    ],
)
def test_gemma_strings_and_lists_left_unopened_or_unclosed(text: str, expected: dict[str, Any], kinds: list[str]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert calls(result) == [("web_search", expected)]
    assert [d.kind for d in result.diagnostics] == kinds


# Ollama model/parsers/gemma4_test.go (RepairsIssue15315Examples, from Gemma 4's own output): a
# string's closing <|"|> left out before the arguments' closing brace, and prose left unquoted
# whose commas are followed by no key. Nothing of the call's text may go missing: the text after
# a reading that stops at an error is content.
@pytest.mark.parametrize(
    ("body", "arguments", "content", "kinds"),
    [
        ('{command:<|"|>ls}', {"command": "ls"}, None, ["noncanonical"]),
        ('{command:<|"|>ls} ', {"command": "ls"}, None, ["noncanonical"]),
        ('{path:<|"|>/tmp<|"|>,command:<|"|>ls}', {"path": "/tmp", "command": "ls"}, None, ["noncanonical"]),
        # (a brace inside the string stays the string's: only the last one closes the arguments)
        ('{command:<|"|>a}b}', {"command": "a}b"}, None, ["noncanonical"]),
        ("{q:a, b, c}", {"q": "a, b, c"}, None, ["malformed_tool_call"]),
        ("{content:\n\nsource code, designed to last.}", {"content": "source code, designed to last."}, None, ["malformed_tool_call"]),
        ("{content:hello,mode:<|\"|>fast<|\"|>}", {"content": "hello", "mode": "fast"}, None, ["malformed_tool_call"]),
        # Ollama refuses this one; the string ran on past the next key, the rest is content.
        ('{first:<|"|>one,second:<|"|>two<|"|>}', {"first": "one,second:"}, 'two<|"|>}', ["malformed_tool_call", "unexpected_text"]),
    ],
)
def test_gemma_quoting_left_out_keeps_every_character(body: str, arguments: dict[str, Any], content: str | None, kinds: list[str]) -> None:
    result = parse_both("Google-gemma-4-31B-it", f"<|tool_call>call:f{body}<tool_call|>")
    assert calls(result) == [("f", arguments)]
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == kinds
    assert result.finish_reason == "tool_calls"


# Ollama model/parsers/laguna_test.go (thinking on): Laguna's template writes a closing tag
# alone after the assistant's header when there is no reasoning, and opens the block in the
# prompt when thinking is on; the tag is no part of the header.
@pytest.mark.parametrize("template", ["Laguna-v2", "Laguna-v8"])
def test_laguna_prompts_with_thinking_on_open_the_reasoning(template: str) -> None:
    codec = codec_for(template)
    question = [{"role": "user", "content": "hi"}]
    thinking = codec.render(question, add_generation_prompt=True, enable_thinking=True)
    assert thinking.endswith("<think>")
    result = parse_both(template, "Reasoning here.\n</think>\nThe answer.", prompt=thinking)
    assert (result.message.reasoning_content, result.message.content) == ("Reasoning here.", "The answer.")
    assert not result.diagnostics
    plain = codec.render(question, add_generation_prompt=True)
    result = parse_both(template, "The answer.", prompt=plain)
    assert (result.message.reasoning_content, result.message.content) == (None, "The answer.")


# SGLang test_function_call_parser.py (Llama 4, text after the calls): <|python_end|> after a
# call is its end, a delimiter; the text after it is content.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("vLLM-Llama-4-pythonic", "<|python_start|>[search(query='hello')]<|python_end|> Done."),
        ("Meta-Llama-4-Scout-17B-16E-Instruct", '<|python_start|>{"name": "search", "parameters": {"query": "hello"}}<|python_end|> Done.'),
        ("Meta-Llama-4-Scout-17B-16E-Instruct", '<|python_start|>{"name": "search", "parameters": {"query": "hello"}}<|python_end|>'),
    ],
)
def test_python_end_closes_a_llama_4_call(template: str, text: str) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("search", {"query": "hello"})]
    assert result.message.content == (" Done." if text.endswith("Done.") else None)
    assert "<|python_end|>" in [result.span_text(span) for span in result.spans if span.kind == "delimiter"]


# llama.cpp test-chat.cpp and Ollama model/parsers/glimmer_test.go (Muse Glimmer): a reasoning
# message, then the answer's message, as the template writes them after its prompt. vLLM's copy
# of the template writes its default system block only when asked for the prompt: the prompt was
# not found, and no call syntax either.
@pytest.mark.parametrize("template", ["Muse-Glimmer", "vLLM-Muse-Glimmer"])
def test_muse_reasoning_then_the_answer_reads_back(template: str) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    text = " to=self<|message|>thought<|eom|><|start|>assistant to=user<|message|>Done.<|eot|>"
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == ("thought", "Done.")
    assert not result.diagnostics and result.finish_reason == "stop"
    call = (
        ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>'
    )
    called = parse_both(template, call, prompt=prompt)
    assert calls(called) == [("get_weather", {"city": "Paris"})]
    assert called.finish_reason == "tool_calls" and not called.diagnostics


# llama.cpp test-chat.cpp and vLLM's Qwen3-Coder tests: a call written without <tool_call> (a
# bare <function=…>…</function>) is read, with a noncanonical diagnostic; with tools given, a
# name they do not have keeps the text as content.
@pytest.mark.parametrize("template", ["Qwen-Qwen3-Coder", "Qwen-Qwen3.5-4B"])
def test_a_qwen3_coder_call_without_its_tool_call_tag(template: str) -> None:
    text = "Let me check.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>"
    result = parse_both(template, text, tools=LIST_TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == "Let me check." and result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    prose = "Write <function=rm_rf> to call it."
    assert parse_both(template, prose, tools=LIST_TOOLS).message.content == prose


# Ollama model/parsers/qwen3coder_test.go (typed values): an integer written with leading zeros
# and a boolean in capitals are what the schema asks for; without a schema they stay as written.
@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [("007", {"type": "integer"}, 7), ("TRUE", {"type": "boolean"}, True), ("FALSE", {"type": "boolean"}, False), ("007", {"type": "string"}, "007"), ("yes", {"type": "boolean"}, "yes")],
)
def test_xml_values_the_schema_types_loosely(value: str, schema: dict[str, Any], expected: Any) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"p": schema}}}}]
    text = f"<tool_call>\n<function=f>\n<parameter=p>\n{value}\n</parameter>\n</function>\n</tool_call>"
    assert calls(parse_both("Qwen-Qwen3-Coder", text, tools=tools)) == [("f", {"p": expected})]
    assert calls(parse_both("Qwen-Qwen3-Coder", text)) == [("f", {"p": value})]



# An object or a list parameter written as JSON is written into the arguments as the model wrote
# it: its numbers keep their digits and a key written twice both its values (as a Hermes call's
# JSON is kept), where a float and a dict would keep 17 digits and the last value.
@pytest.mark.parametrize(
    "value",
    ['{"n": 1.0000000000000000001, "m": 1e-400}', '{"a": "first", "a": "second"}', "[123456789.123456789,2]", '{"k": [{"x": -0.0}]}'],
)
def test_xml_json_values_are_written_as_the_model_wrote_them(value: str) -> None:
    text = f"<tool_call>\n<function=f>\n<parameter=p>\n{value}\n</parameter>\n</function>\n</tool_call>"
    result = parse_both("Qwen-Qwen3-Coder", text)
    (call,) = result.message.tool_calls or []
    assert call.function.arguments == '{"p": ' + value + "}"
    assert call.function.parsed_arguments == {"p": json.loads(value)} and not result.diagnostics


# mlx-lm's Qwen3-Coder cases: a list or an object parameter written as JSON but for raw newlines
# and tabs in its strings (multi-line code) is that list or object; a string parameter keeps the
# text as written.
def test_xml_lists_and_objects_with_raw_newlines_in_their_strings() -> None:
    schema = {"x": {"type": "array"}, "y": {"type": "object"}, "z": {"type": "string"}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": schema}}}]
    listed, mapped = '["def f():\n    return 1", "b"]', '{"code": "a\n\tb"}'
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in (("x", listed), ("y", mapped), ("z", listed)))
    text = f"<tool_call>\n<function=f>\n{parameters}</function>\n</tool_call>"
    result = parse_both("Qwen-Qwen3-Coder", text, tools=tools)
    assert calls(result) == [("f", {"x": ["def f():\n    return 1", "b"], "y": {"code": "a\n\tb"}, "z": listed})]
    assert not result.diagnostics
    # Without a schema that asks for a list, the text stays a string.
    assert calls(parse_both("Qwen-Qwen3-Coder", text)) == [("f", {"x": listed, "y": mapped, "z": listed})]


# A number the model wrote as JSON writes one keeps its spelling in the arguments: read as a
# float it would come back rounded to 17 digits (``1.2345678901234567e+19``) or respelled
# (``1.5`` for ``1.50``). A number JSON spells otherwise is written as JSON writes it.
@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("12345678901234567890.123456789", "12345678901234567890.123456789"),
        ("99999999999999999999e+40", "99999999999999999999e+40"),
        ("1.50", "1.50"),
        ("-0.0", "-0.0"),
        ("007", "7"),
        ("+3", "3"),
    ],
)
@pytest.mark.parametrize("schema", [{"type": "number"}, None])
def test_xml_numbers_keep_their_spelling(value: str, written: str, schema: dict[str, Any] | None) -> None:
    properties = {"p": schema} if schema else {}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]
    text = f"<tool_call>\n<function=f>\n<parameter=p>\n{value}\n</parameter>\n</function>\n</tool_call>"
    result = parse_both("Qwen-Qwen3-Coder", text, tools=tools)
    (call,) = result.message.tool_calls or []
    if schema is None and value in ("007", "+3"):
        written = json.dumps(value)  # no number in JSON, and no schema asks for one: the text
    assert call.function.arguments == '{"p": ' + written + "}"
    assert call.function.parsed_arguments == {"p": json.loads(written)}

# Ollama model/parsers (qwen3.5, nemotron3nano, laguna: thinking off) and llama.cpp: after a
# prompt that closed the reasoning block, the closing tag written again is the tag.
@pytest.mark.parametrize(
    ("template", "options"),
    [("Qwen-Qwen3.5-4B", {"enable_thinking": False}), ("NVIDIA-Nemotron-3-Nano-30B-A3B", {"enable_thinking": False}), ("Laguna-v2", {})],
)
def test_the_closing_tag_written_again_after_a_prompt_that_closed_the_block(template: str, options: dict[str, Any]) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True, **options)
    result = parse_both(template, "</think>\nTokyo", prompt=prompt)
    assert (result.message.content, result.message.reasoning_content) == ("Tokyo", None)
    assert not result.diagnostics
    assert result.span_text(result.spans[0]).strip() == "</think>" and result.spans[0].kind == "delimiter"


# Ollama harmony/harmonyparser_test.go and llama.cpp (gpt-oss): <|call|> is a stop token, which a
# server strips from the text it returns; a call whose JSON is whole when the text ends is whole.
@pytest.mark.parametrize(
    ("body", "finish", "kinds"),
    [('{"location":"Tokyo"}', "tool_calls", []), ('{"location":"Tokyo"}\n', "tool_calls", []), ('{"location":"Tok', "length", ["unclosed_tool_call"])],
)
def test_a_gpt_oss_call_without_its_stop_token(body: str, finish: str, kinds: list[str]) -> None:
    prompt = codec_for("OpenAI-gpt-oss-120b").render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    text = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + body
    result = parse_both("OpenAI-gpt-oss-120b", text, prompt=prompt)
    assert [call.function.name for call in result.message.tool_calls or []] == ["get_weather"]
    assert result.finish_reason == finish and [d.kind for d in result.diagnostics] == kinds


# llama.cpp test-chat.cpp and vLLM's Apriel reasoning parser: Apriel 1.6's prompt opens the
# reasoning with a line of words ("Here are my reasoning steps:"), "[BEGIN FINAL RESPONSE]" ends
# it, and a call may follow.
@pytest.mark.parametrize(
    ("text", "content", "expected_calls"),
    [
        ("I'm\nthinking\n[BEGIN FINAL RESPONSE]\nHello, world!\nWhat's up?", "Hello, world!\nWhat's up?", []),
        (
            "I'm\nthinking\n[BEGIN FINAL RESPONSE]\n"
            '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>',
            None,
            [("get_weather", {"city": "Paris"})],
        ),
    ],
)
def test_apriel_reasoning_opened_by_its_prompt(text: str, content: str | None, expected_calls: list[tuple[str, Any]]) -> None:
    template = "ServiceNow-Apriel-1.6-15b-Thinker-fixed"
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], tools=LIST_TOOLS, add_generation_prompt=True)
    assert prompt.endswith("Here are my reasoning steps:\n")
    result = parse_both(template, text, prompt=prompt, tools=LIST_TOOLS)
    assert (result.message.reasoning_content, result.message.content) == ("I'm\nthinking", content)
    assert calls(result) == expected_calls and not result.diagnostics
    # Written out by the model too, the line opens the reasoning.
    again = parse_both(template, "Here are my reasoning steps:\n" + text, tools=LIST_TOOLS)
    assert again.message.reasoning_content == "I'm\nthinking"


# llama.cpp test-chat.cpp (Apriel 1.6, continuing the reasoning): the template writes an
# answer's reasoning right after the header, with no opening line, so a prompt that ends inside
# the reasoning (continue_final_message="reasoning_content") holds text that may be either; the
# completion's "[BEGIN FINAL RESPONSE]" says which. The prompt's text is no part of the message.
def test_apriel_prompt_that_continues_the_reasoning() -> None:
    template = "ServiceNow-Apriel-1.6-15b-Thinker-fixed"
    codec = codec_for(template)
    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "reasoning_content": "I'm", "content": ""}]
    prompt = codec.render(conversation, continue_final_message="reasoning_content")
    assert prompt.endswith("<|begin_assistant|>\nI'm")
    assert codec.prompt_state(prompt).state == "undecided"
    result = parse_both(template, " thinking\n[BEGIN FINAL RESPONSE]\nHello, world!\nWhat's up?", prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (" thinking", "Hello, world!\nWhat's up?")
    assert not result.diagnostics and result.finish_reason == "stop"
    # With no closing line, the text was the answer all along.
    result = parse_both(template, " am here.", prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (None, " am here.")


# vLLM tests/reasoning/test_granite_reasoning_parser.py: Granite 3.2's system prompt asks for the
# thoughts after "Here is my thought process:" and the answer after "Here is my response:"
# (models also write "Here's").
@pytest.mark.parametrize(
    ("text", "reasoning", "content", "finish"),
    [
        ("Here is my thought process:This is a reasoning sectionHere is my response:This is the rest", "This is a reasoning section", "This is the rest", "stop"),
        ("Here's my thought process:\nR\nHere's my response:\nThe answer", "R", "The answer", "stop"),
        ("Here is my thought process:cut", "cut", None, "length"),
        ("Just an answer, here is my response: none", None, "Just an answer, here is my response: none", "stop"),
    ],
)
def test_granite_reasoning_in_words(text: str, reasoning: str | None, content: str | None, finish: str) -> None:
    result = parse_both("IBM-granite-3.2-8b-instruct", text)
    assert (result.message.reasoning_content, result.message.content or None) == (reasoning, content)
    assert result.finish_reason == finish


# EXAONE Deep's generation prompt opens the thought block (``[|assistant|]<thought>\n``).
def test_exaone_deep_prompt_opens_the_thought() -> None:
    codec = codec_for("LGAI-EXAONE-Deep-2.4B")
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert prompt.endswith("<thought>\n")
    for given in ({"prompt": prompt}, {}):
        result = parse_both("LGAI-EXAONE-Deep-2.4B", "Let me see.\n</thought>\n\nFour.", **given)
        assert (result.message.reasoning_content, result.message.content) == ("Let me see.", "Four.")


# llama.cpp test-chat.cpp (Command R): the tool-use templates write a system turn of instructions
# after the last turn, so no footer of theirs is the answer's end; the model stops at its
# end-of-sequence token, which ends the answer.
@pytest.mark.parametrize("template", ["Cohere-c4ai-command-r-v01-tool_use", "CohereForAI-c4ai-command-r-plus-tool_use"])
def test_command_r_tool_use_answer_ends_at_its_end_token(template: str) -> None:
    result = parse_both(template, "Hello, world!<|END_OF_TURN_TOKEN|>")
    assert (result.message.content, result.finish_reason) == ("Hello, world!", "stop")
    assert result.span_text(result.spans[-1]) == "<|END_OF_TURN_TOKEN|>"


# llama.cpp test-chat.cpp (Granite 3.3): with thinking on, the system prompt asks for the answer
# between <response></response>; the tags are delimiters, and a closing tag with no opening one
# is text.
@pytest.mark.parametrize(
    "text",
    [
        "<think>I'm\nthinking</think><response>Hello, world!\nWhat's up?</response>",
        "<think>I'm\nthinking</think><response>Hello, world!\nWhat's up?",
        "<think>I'm\nthinking</think>\n<response>\nHello, world!\nWhat's up?\n</response>",
        "<think>I'm\nthinking</think>Hello, world!\nWhat's up?",
    ],
)
def test_granite_answer_between_response_tags(text: str) -> None:
    template = "IBM-granite-3.3-2b-instruct"
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True, thinking=True)
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == ("I'm\nthinking", "Hello, world!\nWhat's up?")
    assert not result.diagnostics and result.finish_reason == "stop"
    prose = "Close it with </response> and stop."
    result = parse_both(template, prose, prompt=prompt)
    assert result.message.content == prose


# SGLang test_reasoning_parser_apertus_cohere.py: Apertus reasons between <|inner_prefix|> and
# <|inner_suffix|> (its template writes them from a message's "thoughts" blocks).
@pytest.mark.parametrize(
    ("text", "reasoning", "content", "finish"),
    [
        ("<|inner_prefix|>thoughts<|inner_suffix|>answer", "thoughts", "answer", "stop"),
        ("<|inner_prefix|>still thinking", "still thinking", None, "length"),
        ("hello world", None, "hello world", "stop"),
        ("x<|innerXy", None, "x<|innerXy", "stop"),
    ],
)
def test_apertus_reasoning_tags(text: str, reasoning: str | None, content: str | None, finish: str) -> None:
    template = "SwissAI-Apertus-8B-Instruct"
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content or None) == (reasoning, content)
    assert result.finish_reason == finish and not result.diagnostics


# Ollama model/parsers/cohere_test.go: a model that leaves out the tag closing its answer
# (<|END_TEXT|>, <|END_RESPONSE|>) still stops at the end-of-turn token, which ends the answer.
@pytest.mark.parametrize(
    ("template", "text", "reasoning"),
    [
        ("Cohere-North-Mini-Code-Cohere2MoE", "t<|END_THINKING|><|START_TEXT|>answer<|END_OF_TURN_TOKEN|>", "t"),
        ("Cohere-North-Mini-Code-Cohere2MoE", "t<|END_THINKING|>answer<|END_OF_TURN_TOKEN|>", "t"),
        ("Cohere-command-a-03-2025", "answer<|END_OF_TURN_TOKEN|>", None),
    ],
)
def test_cohere_answer_ends_at_the_end_of_turn_token(template: str, text: str, reasoning: str | None) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, "answer")
    assert result.finish_reason == "stop" and not result.diagnostics
    assert result.span_text(result.spans[-1]) == "<|END_OF_TURN_TOKEN|>"


# llama.cpp test-chat.cpp (DeepSeek R1): a distill writes <｜tool▁calls｜> for both opening tags
# of its first call; read, with a noncanonical diagnostic.
def test_r1_distill_tool_calls_token_opens_the_call() -> None:
    text = '<｜tool▁calls｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    result = parse_both("llamacpp-deepseek-r1-llamacpp-first", text)
    assert calls(result) == [("get_weather", {"city": "Paris"})] and not result.message.content
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] and result.finish_reason == "tool_calls"


# SGLang test_muse_glimmer_detector.py, Ollama model/parsers/glimmer_test.go, llama.cpp
# test-chat.cpp (Muse Glimmer): each part of an answer is a message with a recipient; a message
# to a tool (" to=NAME<|message|>") holds its call, a function named "TOOL.FUNCTION" (an OpenAI
# tool's "NAME.NAME") is that tool's, and markup in a message to "self" or "user" is text.
MUSE_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "x": {"type": "integer"}}}}}
    for name in ("get_weather", "weather.get", "second")
]


def _atem(name: str, **parameters: str) -> str:
    body = "".join(f'<atem:parameter name="{key}">{value}</atem:parameter>\n' for key, value in parameters.items())
    return f'<atem:function_calls>\n<atem:invoke name="{name}">\n{body}</atem:invoke>\n</atem:function_calls>'


MUSE_NEXT = "<|eom|><|start|>assistant"


@pytest.mark.parametrize(
    ("text", "expected_calls", "reasoning", "content"),
    [
        (" to=self<|message|>Need weather." + MUSE_NEXT + " to=get_weather.get_weather<|message|>" + _atem("get_weather.get_weather", city="Paris"),
         [("get_weather", {"city": "Paris"})], "Need weather.", None),
        (" to=get_weather<|message|>" + _atem("get_weather", city="SF") + "<|eot|>", [("get_weather", {"city": "SF"})], None, None),
        (" to=self<|message|>Think" + MUSE_NEXT + " to=get_weather<|message|>" + _atem("get_weather", x="1") + MUSE_NEXT
         + " to=second<|message|>" + _atem("second") + "<|eot|>",
         [("get_weather", {"x": 1}), ("second", {})], "Think", None),
        (" to=self<|message|>r" + MUSE_NEXT + " to=weather.get<|message|>" + _atem("weather.get", city="Paris") + MUSE_NEXT
         + " to=user<|message|>It is sunny.",
         [("weather.get", {"city": "Paris"})], "r", "It is sunny."),
        (" to=user<|message|>Let me check." + MUSE_NEXT + " to=get_weather<|message|>" + _atem("get_weather", city="Paris"),
         [("get_weather", {"city": "Paris"})], None, "Let me check."),
        (" to=get_weather<|message|>" + _atem("get_weather", city='line1\nline2\n"quoted"\n'),
         [("get_weather", {"city": 'line1\nline2\n"quoted"\n'})], None, None),
        # SGLang test_muse_glimmer_detector.py (whitespace before the header): a newline
        # between the reasoning message's end and the next message's header.
        (" to=self<|message|>r<|eom|>\n<|start|>assistant to=get_weather<|message|>" + _atem("get_weather", city="Paris"),
         [("get_weather", {"city": "Paris"})], "r", None),
    ],
)
def test_muse_messages_to_a_tool_are_calls(
    text: str, expected_calls: list[tuple[str, Any]], reasoning: str | None, content: str | None
) -> None:
    prompt = codec_for("Muse-Glimmer").render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both("Muse-Glimmer", text, prompt=prompt, tools=MUSE_TOOLS)
    assert calls(result) == expected_calls
    assert (result.message.reasoning_content, result.message.content or None) == (reasoning, content)
    assert result.finish_reason == "tool_calls" and not result.diagnostics
    headers = [result.span_text(span) for span in result.spans if span.kind == "delimiter"]
    assert " to=" in headers and "<|message|>" in headers


# Ollama model/parsers/glimmer_test.go (TestGlimmerParserImplicitMessageBoundary): the next
# message's header ends a message whose <|eom|> is left out, after reasoning or after a call;
# the header is a special token, never text there (after the answer's text it still is).
@pytest.mark.parametrize(
    ("text", "expected_calls", "kinds"),
    [
        (
            " to=self<|message|>Think<|start|>assistant to=get_weather<|message|>" + _atem("get_weather", city="SF")
            + "<|start|>assistant to=user<|message|>Done<|eot|>",
            [("get_weather", {"city": "SF"})],
            ["noncanonical", "noncanonical"],
        ),
        (" to=self<|message|>Think<|start|>assistant to=user<|message|>Done<|eot|>", [], ["noncanonical"]),
    ],
)
def test_muse_header_ends_a_message_whose_end_is_left_out(text: str, expected_calls: list[tuple[str, Any]], kinds: list[str]) -> None:
    prompt = codec_for("Muse-Glimmer").render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both("Muse-Glimmer", text, prompt=prompt, tools=MUSE_TOOLS)
    assert calls(result) == expected_calls
    assert (result.message.reasoning_content, result.message.content) == ("Think", "Done")
    assert [d.kind for d in result.diagnostics] == kinds


@pytest.mark.parametrize(
    ("text", "reasoning", "content", "kinds", "finish"),
    [
        # Markup in a message to "user" or "self" is text.
        (" to=user<|message|>You invoke it like this:\n" + _atem("get_weather", city="X") + "<|eot|>", None,
         "You invoke it like this:\n" + _atem("get_weather", city="X"), {"stray_delimiter"}, "stop"),
        (" to=self<|message|>I could use " + _atem("get_weather") + " here" + MUSE_NEXT + " to=user<|message|>Hello!<|eot|>",
         "I could use " + _atem("get_weather") + " here", "Hello!", {"stray_delimiter"}, "stop"),
        # A header quoted in the answer is text, and so is the message it seems to open.
        (" to=self<|message|>r" + MUSE_NEXT + " to=user<|message|>after prose:\n<|start|>assistant to=get_weather<|message|>"
         + _atem("get_weather", city="X"), "r", "after prose:\n<|start|>assistant to=get_weather<|message|>" + _atem("get_weather", city="X"),
         {"stray_delimiter"}, "stop"),
        # " to=" in prose is text, as written.
        (" to=user<|message|>Call f(a, to=b) now.<|eot|>", None, "Call f(a, to=b) now.", set(), "stop"),
        (" to=user<|message|>I sent x to=5 and done", None, "I sent x to=5 and done", set(), "stop"),
        # A message to a tool with no call in it is text, said so; cut short, it is a call cut short.
        (" to=get_weather<|message|>{\"city\": 1}<|eot|>", None, " to=get_weather<|message|>{\"city\": 1}", {"malformed_tool_call"}, "stop"),
        (" to=get_weather<|message|>", None, " to=get_weather<|message|>", {"unclosed_tool_call"}, "length"),
        (" to=get_wea", None, " to=get_wea", {"unclosed_tool_call"}, "length"),
    ],
)
def test_muse_text_that_is_no_call(text: str, reasoning: str | None, content: str, kinds: set[str], finish: str) -> None:
    prompt = codec_for("Muse-Glimmer").render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both("Muse-Glimmer", text, prompt=prompt, tools=MUSE_TOOLS)
    assert not result.message.tool_calls
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert {d.kind for d in result.diagnostics} == kinds and result.finish_reason == finish


# llama.cpp test-chat.cpp (Llama 3.1): a built-in tool's call, written as Python after
# <|python_tag|> (the template writes it so for the tools in `builtin_tools`), ended by
# <|eom_id|> or the end of the text.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|python_tag|>code_interpreter.call(code=\"print('hey')\")", [("code_interpreter", {"code": "print('hey')"})]),
        ("<|python_tag|>python.call(code=\"print('hey')\")", [("python", {"code": "print('hey')"})]),
        ('<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>', [("brave_search", {"query": "weather in Paris"})]),
    ],
)
def test_llama_built_in_tool_calls(text: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both("Llama-3.1-8B-Instruct", text)
    assert calls(result) == expected and result.message.content is None
    assert result.finish_reason == "tool_calls" and not result.diagnostics


def test_llama_built_in_tool_calls_read_back() -> None:
    codec = codec_for("Llama-3.1-8B-Instruct")
    call = {"type": "function", "function": {"name": "brave_search", "arguments": {"query": "x y"}}}
    text = codec.render([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}], builtin_tools=["brave_search"])
    body = text[text.rindex("<|end_header_id|>\n\n") + len("<|end_header_id|>\n\n") :]
    assert body == '<|python_tag|>brave_search.call(query="x y")<|eom_id|>'
    assert calls(parse_both("Llama-3.1-8B-Instruct", body)) == [("brave_search", {"query": "x y"})]
    # Not a built-in call: text, said so; cut short where a bracket is left open.
    result = parse_both("Llama-3.1-8B-Instruct", "<|python_tag|>print('hi')<|eom_id|>")
    assert result.message.content == "<|python_tag|>print('hi')" and [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    result = parse_both("Llama-3.1-8B-Instruct", "<|python_tag|>get_weather(city='Paris')")
    assert result.finish_reason == "stop" and [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    result = parse_both("Llama-3.1-8B-Instruct", '<|python_tag|>brave_search.call(query="wea')
    assert result.finish_reason == "length" and result.message.content == '<|python_tag|>brave_search.call(query="wea'


# SGLang test_function_call_parser.py (Llama32: test_with_python_tag_prefix) and
# test_llama32_detector.py (test_normal_text_before_python_tag): text before <|python_tag|>, a
# special token, is the answer's content and the calls follow it; a bare JSON object after text
# is still text (vLLM's llama3_json tests: a JSON call is the whole answer).
@pytest.mark.parametrize("template", ["Llama-3.1-8B-Instruct", "Llama-3.2-3B-Instruct"])
@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ('Some intro. <|python_tag|>{"name": "get_weather", "parameters": {}}', "Some intro.", [("get_weather", {})]),
        (
            'Let me check. <|python_tag|>{"name": "get_weather", "arguments": {"city": "Tokyo"}}',
            "Let me check.",
            [("get_weather", {"city": "Tokyo"})],
        ),
        (
            'Two.\n<|python_tag|>{"name": "f", "parameters": {}}; {"name": "g", "parameters": {"a": 1}}',
            "Two.",
            [("f", {}), ("g", {"a": 1})],
        ),
        ('Searching. <|python_tag|>brave_search.call(query="x")', "Searching.", [("brave_search", {"query": "x"})]),
        ('Here is one: {"name": "f", "parameters": {}}', 'Here is one: {"name": "f", "parameters": {}}', []),
    ],
)
def test_llama_calls_after_text_open_with_the_python_tag(template: str, text: str, content: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both(template, text)
    assert result.message.content == content and calls(result) == expected
    assert not result.diagnostics and result.finish_reason == ("tool_calls" if expected else "stop")


# vLLM tests/tool_parsers (Kimi K2, invalid_funcall_id_skipped): "functions." with no ":INDEX"
# after the name is no call id; the call names nothing and stays text, said so, and the next
# call is read.
def test_kimi_call_id_without_its_index_names_nothing() -> None:
    begin, end = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
    call = "<|tool_call_begin|>{} <|tool_call_argument_begin|>{}<|tool_call_end|>".format
    text = "Help. " + begin + call("functions.invalid.0", '{"city": "Beijing"}') + call("functions.valid:1", '{"city": "Shanghai"}') + end
    result = parse_both("Moonshot-Kimi-K2-Instruct-early", text)
    assert calls(result) == [("valid", {"city": "Shanghai"})]
    assert "functions.invalid.0" in (result.message.content or "")
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call", "malformed_tool_call"]
    assert "names no function" in result.diagnostics[1].message


# vLLM tests/tool_parsers/test_hy_v3_tool_parser.py, SGLang's GLM-4.5 detector tests: models
# write other whitespace between a key's closing tag and the value's opening one than the
# template does (a blank line, a Windows line end); the parameter is still read, its value kept.
@pytest.mark.parametrize("gap", ["\n\n", "\r\n", " \n", "\n ", " ", "\t"])
@pytest.mark.parametrize(
    ("template", "suffix"),
    [("ZhipuAI-GLM-4.6", ""), ("ZhipuAI-GLM-4.7-Flash", ""), ("Poolside-Laguna-XS-2.1", ""), ("Tencent-Hy3", ":opensource")],
)
def test_whitespace_between_a_key_and_its_value_keeps_the_parameter(template: str, suffix: str, gap: str) -> None:
    def tag(word: str) -> str:
        return f"<{word}{suffix}>"

    body = (
        f"{tag('tool_call')}get_weather{tag('tool_sep') if suffix else ''}\n"
        f"{tag('arg_key')}city{tag('/arg_key')}{gap}{tag('arg_value')}Beijing{tag('/arg_value')}\n"
        f"{tag('arg_key')}date{tag('/arg_key')}\n{tag('arg_value')}x{tag('/arg_value')}\n{tag('/tool_call')}"
    )
    text = f"{tag('tool_calls')}{body}{tag('/tool_calls')}" if suffix else body
    result = parse_both(template, text, tools=["get_weather"])
    assert calls(result) == [("get_weather", {"city": "Beijing", "date": "x"})]
    assert result.diagnostics == [] and result.message.content is None


def _kept_as_content(text: str, result: ParseResult) -> str:
    return "".join(text[span.start : span.end] for span in result.spans if span.kind == "content")


# vLLM tests/tool_parsers/test_minimax_tool_parser.py (test_extract_tool_calls_invalid_json) and
# the other JSON lists of calls: an element that stops being JSON is no call, and it and the
# elements after it (which the JSON walk never reached) are content, not dropped. MiniMax-M1
# writes one object a line: there the lines after the broken one are read still, as vLLM does.
@pytest.mark.parametrize(
    ("template", "text", "expected", "content"),
    [
        (
            "MiniMax-M1",
            '<tool_calls>\n{"name": "f", "arguments": {"city": "Seattle"}}\n{invalid json here}\n'
            '{"name": "g", "arguments": {"param": "value"}}\n</tool_calls>',
            [("f", {"city": "Seattle"}), ("g", {"param": "value"})],
            "{invalid json here}",
        ),
        (
            "MiniMax-M1",
            '<tool_calls>\n{"name": "f", "arguments": {"x": 1}}\n{,}\n{"name": "g", "arguments": {"x": 2}}\n</tool_calls>',
            [("f", {"x": 1}), ("g", {"x": 2})],
            "{,}",
        ),
        # A call's object whose closing brace is left out: the call stands (malformed), the
        # next object is text.
        (
            "MiniMax-M1",
            '<tool_calls>\n{"name": "f", "arguments": {"x": 1}}\n{"name": "g", "arguments": {"x": 1}\n'
            '{"name": "f", "arguments": {"x": 2}}\n</tool_calls>',
            [("f", {"x": 1}), ("g", {"x": 1})],
            '{"name": "f", "arguments": {"x": 2}}',
        ),
        # (Blank lines between the objects, where a stream's delta may end: found by the fuzz.)
        (
            "MiniMax-M1",
            '<tool_calls>\n{"name": "f", "arguments": {}}\n\n\n{"name": "g", "arguments" {"query": "x"}}\n</tool_calls>',
            [("f", {}), ("g", {})],
            # (From the member the JSON broke in: its key, with no colon after it, too.)
            '"arguments" {"query": "x"}}',
        ),
        ("AI21-Jamba-Large-1.6", '<tool_calls>[{"name": "f", "arguments": {"x": 1}}, {invalid}]</tool_calls>', [("f", {"x": 1})], "{invalid}]"),
        ("NVIDIA-Nemotron-Nano-9B-v2", '<TOOLCALL>[{"name": "f", "arguments": {"x": 1}}, {bad]</TOOLCALL>', [("f", {"x": 1})], "{bad]"),
    ],
)
def test_an_element_of_a_list_of_calls_that_is_no_json_is_kept_as_content(
    template: str, text: str, expected: list[tuple[str, Any]], content: str
) -> None:
    result = parse_both(template, text, tools=["f", "g"])
    assert calls(result) == expected
    assert result.message.content == content == _kept_as_content(text, result)
    for cut in range(1, len(text)):  # (two deltas, cut anywhere)
        _, streamed = feed_in_chunks(codec_for(template), text, [cut, len(text)], tools=["f", "g"])
        assert streamed.message.content == content, cut
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]
    assert result.finish_reason == "tool_calls"


# vLLM tests/tool_parsers/test_llama4_pythonic_tool_parser.py (test_good_call_survives_unparsable
# _sibling): a quote left open runs to the end of the list, so its elements after the good call
# cannot be told apart. The good call stands; the text from the broken element on is content,
# as written, where it was lost before. (A quote the string holds unescaped, with an end the
# next argument follows, is read: ``test_a_python_string_holding_its_own_quote_unescaped``.)
@pytest.mark.parametrize(
    ("template", "text", "content", "finish"),
    [
        ("vLLM-Llama-4-pythonic", "[get_weather(city='SF', metric='c'), f(a='x 'y' z)]", "f(a='x 'y' z)]", "tool_calls"),
        ("vLLM-Llama-4-pythonic", "[get_weather(city='SF', metric='c'), f(a='x 'y' z)] Done.", "f(a='x 'y' z)] Done.", "tool_calls"),
        (
            "LiquidAI-LFM2.5-8B-A1B",
            "<|tool_call_start|>[get_weather(city='SF', metric='c'), f(a='x 'y' z)]<|tool_call_end|>",
            "f(a='x 'y' z)]",
            "tool_calls",
        ),
    ],
)
def test_a_python_call_list_broken_after_a_good_call_keeps_the_rest_as_content(
    template: str, text: str, content: str, finish: str
) -> None:
    result = parse_both(template, text, tools=["get_weather", "f"])
    assert calls(result) == [("get_weather", {"city": "SF", "metric": "c"})]
    assert result.message.content == content == _kept_as_content(text, result)
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]
    assert result.finish_reason == finish


# The same break, where Python reads the element after it as a call (a string in double quotes
# holding a quote of that kind inside a quote of the other: ``"{'q"k': 1}"``) to a tool
# ``tools=`` does not have: the element is content, from the break on, where it was left out.
@pytest.mark.parametrize("template", ["vLLM-Llama-4-pythonic", "LiquidAI-LFM2.5-8B-A1B"])
def test_a_python_call_list_broken_by_a_call_to_no_tool_keeps_it_as_content(template: str) -> None:
    broken = """search_docs(filters="{'k': {'a': 1}, 'q"k': {'b': False}}", limit="1.5")]"""
    text = "[get_weather(city='SF'), " + broken
    if template.startswith("LiquidAI"):
        text = "<|tool_call_start|>" + text + "<|tool_call_end|>"
    result = parse_both(template, text, tools=["get_weather"])
    assert calls(result) == [("get_weather", {"city": "SF"})]
    assert result.message.content == broken == _kept_as_content(text, result)
    assert [d.kind for d in result.diagnostics] == ["unknown_tool"]


# SGLang test_glm47_moe_detector.py (an enum-only schema is a string): a schema that fixes a
# parameter's type by its values (enum, const) or by allOf types the value as a type does;
# the template writes a string value raw, so "1" for a string enum is the string "1".
@pytest.mark.parametrize(
    ("schema", "written", "value"),
    [
        ({"enum": ["1", "2"]}, "1", "1"),
        ({"enum": ["true", "false"]}, "true", "true"),
        ({"enum": ["null", "x"]}, "null", "null"),
        ({"const": "42"}, "42", "42"),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, "123", "123"),
        ({"enum": [1, 2]}, "1", 1),
        # transformers tests/utils/test_chat_parsing.py (callable tools): get_json_schema writes
        # an Optional[str] parameter as OpenAPI's nullable string.
        ({"type": "string", "nullable": True}, "null", None),
        ({"type": "string", "nullable": True}, "x", "x"),
        ({"type": "string", "nullable": False}, "null", "null"),
    ],
)
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.7-Flash", "Qwen-Qwen3-Coder"])
def test_a_schema_that_types_a_value_by_its_values_types_it(template: str, schema: dict[str, Any], written: str, value: Any) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"e": schema}}}}]
    if template.startswith("ZhipuAI"):
        text = f"<tool_call>f<arg_key>e</arg_key><arg_value>{written}</arg_value></tool_call>"
    else:
        text = f"<tool_call>\n<function=f>\n<parameter=e>\n{written}\n</parameter>\n</function>\n</tool_call>"
    result = parse_both(template, text, tools=tools)
    assert calls(result) == [("f", {"e": value})]


# SGLang test_glm47_schema_types.py ($ref): a parameter's type given through a local $ref, as
# pydantic and MCP servers write schemas, types it as the schema it points to. A tree that
# points back into itself is written in place once; the ref inside it types nothing.
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.7-Flash", "Qwen-Qwen3-Coder"])
def test_a_parameter_typed_through_a_local_ref_keeps_its_type(template: str) -> None:
    parameters = {
        "type": "object",
        "$defs": {"Zip": {"type": "string"}, "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "definitions": {"Count": {"type": "integer"}},
        "properties": {
            "zip": {"$ref": "#/$defs/Zip", "description": "kept beside the ref"},
            "count": {"$ref": "#/definitions/Count"},
            "node": {"$ref": "#/$defs/Node"},
            "lost": {"$ref": "#/$defs/Missing"},
        },
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    values = {"zip": "12345", "count": "7", "node": '{"next": {"next": null}}', "lost": "null"}
    if template.startswith("ZhipuAI"):
        body = "".join(f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>" for key, value in values.items())
        text = f"<tool_call>f{body}</tool_call>"
    else:
        body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in values.items())
        text = f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"
    result = parse_both(template, text, tools=tools)
    assert calls(result) == [("f", {"zip": "12345", "count": 7, "node": {"next": {"next": None}}, "lost": None})]


# SGLang test_gemma4_string_delimiters.py: quoting that runs out of step inside a nested value
# (a quote after a key in a list, no string of its own), so that the arguments' closing brace is
# read inside a string. The call is malformed, and its arguments stay JSON: the value is the
# text the model wrote. (A nested string whose opening quote is left out is read: see
# ``test_gemma_nested_string_with_its_opening_quote_left_out``.)
@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        ('{query:[ k:<|"|>1]]}', {"query": '[ k:<|"|>1]]'}),
    ],
)
def test_a_gemma_value_whose_quoting_runs_on_keeps_the_arguments_json(body: str, arguments: dict[str, Any]) -> None:
    result = parse_both("Google-gemma-4-31B-it", f"<|tool_call>call:web_search{body}<tool_call|>", tools=["web_search"])
    assert calls(result) == [("web_search", arguments)]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# vLLM tests/tool_parsers/test_minimax_m3_tool_parser.py: MiniMax-M3's template writes its
# section's mark right after the content, so a newline before the mark is the content's.
@pytest.mark.parametrize("content", ["I will create it.\n", "A\n\n", "A"])
def test_minimax_m3_content_before_a_call_keeps_its_newlines(content: str) -> None:
    codec = codec_for("MiniMax-M3")
    question = [{"role": "user", "content": "hi"}]
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    prompt = codec.render(question, add_generation_prompt=True)
    full = codec.render([*question, {"role": "assistant", "content": content, "tool_calls": [call]}])
    assert full.startswith(prompt) and content + "]<]minimax[>[<tool_call>" in full
    result = parse_both("MiniMax-M3", full[len(prompt) :], prompt=prompt)
    assert result.message.content == content
    assert calls(result) == [("get_weather", {"city": "Paris"})]


# llama.cpp test-chat.cpp (Kimi K3, with the prompt's think block open): the model writes its
# answer's opening tag without closing the reasoning; the tag ends the reasoning, and says so.
@pytest.mark.parametrize(
    ("template", "text", "reasoning", "content"),
    [
        (
            "Moonshot-Kimi-K3",
            "<|open|>response<|sep|>Hello, world!\nWhat's up?<|close|>response<|sep|><|close|>message<|sep|>",
            None,
            "Hello, world!\nWhat's up?",
        ),
        ("Moonshot-Kimi-K3", "Let me see.<|open|>response<|sep|>Hi<|close|>response<|sep|><|close|>message<|sep|>", "Let me see.", "Hi"),
        ("IBM-granite-3.3-2b-instruct", "<think>R<response>A</response>", "R", "A"),
    ],
)
def test_an_answer_opened_inside_open_reasoning_ends_it(template: str, text: str, reasoning: str | None, content: str) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "Hey there!"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]
    assert result.finish_reason == "stop"


# vLLM tests/tool_parsers/test_nemotron_json_tool_parser.py and test_nemotron_nano_v2_tool_parser.py
# (test_extract_tool_calls_wraps_single_object): Nemotron Nano v2 writes one call's object
# alone in its tags, where the template writes a list.
def test_nemotron_s_single_call_object_is_a_call() -> None:
    text = '<TOOLCALL>{"name": "lookup", "arguments": {"query": "vllm"}}</TOOLCALL>'
    result = parse_both("NVIDIA-Nemotron-Nano-9B-v2", text, tools=["lookup"])
    assert calls(result) == [("lookup", {"query": "vllm"})]
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] and result.message.content is None
    listed = parse_both("NVIDIA-Nemotron-Nano-9B-v2", "<TOOLCALL>[" + text[10:-11] + "]</TOOLCALL>", tools=["lookup"])
    assert calls(listed) == calls(result) and listed.diagnostics == []


# SGLang test_hy4_format_without_tool_separator: Hy3's call with its name's <tool_sep> left out
# is not read (its name runs on), but the text is whole: content, malformed, and `stop`.
def test_an_xml_call_in_a_section_whose_name_never_ends_is_closed_by_its_tag() -> None:
    text = (
        "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource>"
        "<arg_value:opensource>Paris</arg_value:opensource></tool_call:opensource></tool_calls:opensource>"
    )
    result = parse_both("Tencent-Hy3", text, tools=["get_weather"])
    assert result.message.content == text and not result.message.tool_calls
    assert result.finish_reason == "stop"
    assert "malformed_tool_call" in [d.kind for d in result.diagnostics]
    assert "unclosed_tool_call" not in [d.kind for d in result.diagnostics]


# SGLang test_deepseekv32_strict_dsml.py (test_zero_argument_forms) and
# test_deepseekv4_streaming_robustness.py (test_self_closing_and_long_form_mix): a call with no
# parameters written as an empty element, `<｜DSML｜invoke name="submit"/>`. It is a call, with
# `noncanonical` (the templates write an opening and a closing tag), and the calls around it stand.
@pytest.mark.parametrize(
    ("template", "section"),
    [("DeepSeek-V4", "tool_calls"), ("DeepSeek-V3.2-llamacpp", "function_calls")],
)
@pytest.mark.parametrize("where", ["first", "last", "alone"])
def test_a_dsml_call_written_as_an_empty_element(template: str, section: str, where: str) -> None:
    dsml = "｜DSML｜"
    good = (
        f'<{dsml}invoke name="get_weather">\n<{dsml}parameter name="city" string="true">SF</{dsml}parameter>\n'
        f"</{dsml}invoke>"
    )
    empty = f'<{dsml}invoke name="get_time"/>'
    body = {"first": [empty, good], "last": [good, empty], "alone": [empty]}[where]
    text = f"<{dsml}{section}>\n" + "\n".join(body) + f"\n</{dsml}{section}>"
    result = parse_both(template, text, tools=TOOLS, reasoning=False)
    expected = {"get_time": ("get_time", {}), "get_weather": ("get_weather", {"city": "SF"})}
    assert calls(result) == [expected["get_time" if part is empty else "get_weather"] for part in body]
    assert result.message.content is None and result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]


# A value may hold the empty element's spelling: only a call's name ends at it.
def test_an_xml_value_holding_an_empty_element_is_text() -> None:
    text = (
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city"><img src="x"/></parameter>\n'
        "</invoke>\n</minimax:tool_call>"
    )
    result = parse_both("MiniMax-M2", text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": '<img src="x"/>'})] and result.diagnostics == []


# vLLM tests/tool_parsers/test_gemma4_regex_and_bare_calls.py (test_colon_prefixed_tool_call):
# a colon written before `call:`, seen in real output, is the call's opening, noncanonical.
@pytest.mark.parametrize("template", ["Google-gemma-4-31B-it", "Google-gemma-4-31B-it-interleaved"])
def test_gemma_call_opened_with_a_colon_before_call(template: str) -> None:
    text = '<|tool_call>:call:get_status{command:<|"|>pytest<|"|>}<tool_call|>'
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_status", {"command": "pytest"})] and result.message.content is None
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] and result.finish_reason == "tool_calls"


# SGLang test_deepseekv4_detector.py: "DeepSeek-V4 frequently opens a tool-call section with a
# bare <｜DSML｜invoke>". The call is read; the templates write every call in its section, so it is
# `noncanonical`, as DeepSeek V3.1's calls outside theirs are.
@pytest.mark.parametrize(
    ("template", "section"),
    [("DeepSeek-V4", "｜DSML｜tool_calls"), ("DeepSeek-V3.2-llamacpp", "｜DSML｜function_calls"), ("MiniMax-M2", "minimax:tool_call")],
)
def test_an_xml_call_outside_its_section_is_noncanonical(template: str, section: str) -> None:
    prefix = "｜DSML｜" if "DSML" in section else ""
    call = (
        f'<{prefix}invoke name="get_weather">\n<{prefix}parameter name="city"'
        + (' string="true"' if prefix else "")
        + f">SF</{prefix}parameter>\n</{prefix}invoke>"
    )
    bare = parse_both(template, "Checking.\n" + call, tools=TOOLS, reasoning=False)
    assert calls(bare) == [("get_weather", {"city": "SF"})] and bare.message.content == "Checking."
    assert [d.kind for d in bare.diagnostics] == ["noncanonical"] and bare.finish_reason == "tool_calls"
    sectioned = parse_both(template, f"Checking.\n\n<{section}>\n{call}\n</{section}>", tools=TOOLS, reasoning=False)
    assert calls(sectioned) == calls(bare) and sectioned.diagnostics == []


# vLLM tests/tool_parsers/test_granite_tool_parser.py (test_granite_string_prefix_format, "Granite
# 3.1 <tool_call> string format"): the tag written as plain text before the list is read too.
@pytest.mark.parametrize("template", ["IBM-granite-3.0-2b-instruct", "IBM-granite-3.1-1b-a400m-instruct"])
def test_granite_calls_after_the_tag_written_as_text(template: str) -> None:
    listed = '[{"name": "get_weather", "arguments": {"city": "Boston"}}]'
    result = parse_both(template, "<tool_call> " + listed, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Boston"})] and result.message.content is None
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] and result.finish_reason == "tool_calls"
    canonical = parse_both(template, "<|tool_call|>" + listed, tools=TOOLS)
    assert calls(canonical) == calls(result) and canonical.diagnostics == []


# Ollama model/parsers qwen3coder_test.go (TestQwenToolParser, "names with spaces"): the template
# writes a tool's name as the tools spell it. A name with a space is no function name in prose,
# but one the tools given spell so is theirs, in every syntax the template writes it in.
SPACED_TOOLS = [
    {"type": "function", "function": {"name": "get temp", "description": "The temperature.", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}
]


@pytest.mark.parametrize(
    "template",
    ["Qwen-Qwen3-Coder", "ZhipuAI-GLM-4.6", "DeepSeek-V3.1", "Moonshot-Kimi-K2-Instruct-early", "OpenAI-gpt-oss-120b", "Qwen3-0.6B"],
)
def test_a_tools_name_with_a_space_is_read_as_the_template_writes_it(template: str) -> None:
    codec = codec_for(template)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get temp", "arguments": {"a": "x"}}}
        ]},
    ]  # fmt: skip
    prompt = codec.render(messages[:1], tools=SPACED_TOOLS, add_generation_prompt=True)
    completion = codec.render(messages, tools=SPACED_TOOLS)[len(prompt) :]
    assert "get temp" in completion
    result = parse_both(template, completion, prompt=prompt, tools=SPACED_TOOLS)
    assert calls(result) == [("get temp", {"a": "x"})]
    assert result.finish_reason == "tool_calls" and not result.diagnostics
    # Without the tools to say so, a name with a space is none.
    assert not parse_both(template, completion, prompt=prompt).message.tool_calls or template == "Qwen3-0.6B"


# Found by fuzzing (whitespace at a delimiter's edge): a body that may be a list of calls or
# one call's object is told by its first bracket, not by the whitespace before it. Read a
# character at a time, the whitespace once made the list an object, with a `noncanonical`
# diagnostic the whole text did not get.
@pytest.mark.parametrize(
    ("template", "text", "kinds"),
    [
        ("NVIDIA-Nemotron-Nano-9B-v2", '<TOOLCALL> \n[{"name": "get_weather", "arguments": {"city": 3}}]</TOOLCALL>', []),
        ("NVIDIA-Nemotron-Nano-9B-v2", '<TOOLCALL> \n{"name": "get_weather", "arguments": {"city": 3}}</TOOLCALL>', ["noncanonical"]),
        ("LiquidAI-LFM2-8B-A1B-llamacpp-first", '<|tool_call_start|> \n{"name": "get_weather", "arguments": {"city": 3}}<|tool_call_end|>', []),
        ("LiquidAI-LFM2-8B-A1B-llamacpp-first", '<|tool_call_start|> \n[{"name": "get_weather", "arguments": {"city": 3}}]<|tool_call_end|>', ["noncanonical"]),
        ("MiniMax-M1", '<tool_calls>\n \n{"name": "get_weather", "arguments": {"city": 3}}\n</tool_calls>', []),
    ],
)
def test_whitespace_before_a_calls_body_says_nothing_of_its_shape(template: str, text: str, kinds: list[str]) -> None:
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": 3})]
    assert [d.kind for d in result.diagnostics] == kinds


# vLLM tests/tool_parsers/test_deepseekv4_tool_parser.py (test_function_calls_block_is_not_accepted):
# V4's template opens its calls with ``tool_calls``, V3.2's with ``function_calls``. Each reads
# the other's section (a model fine-tuned across the two writes either), and says it is not its own.
@pytest.mark.parametrize(("template", "own", "other"), [("DeepSeek-V4", "tool_calls", "function_calls"), ("DeepSeek-V3.2-llamacpp", "function_calls", "tool_calls")])
def test_dsml_reads_the_other_versions_section_as_noncanonical(template: str, own: str, other: str) -> None:
    section = (
        '<｜DSML｜{0}>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="query" string="true">vllm'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜{0}>"
    )
    for name, diagnostics in ((own, []), (other, [("noncanonical", 0)])):
        result = parse_both(template, section.format(name), reasoning=False)
        assert calls(result) == [("search", {"query": "vllm"})]
        assert [(d.kind, d.position) for d in result.diagnostics] == diagnostics


# SGLang test_step3p5_detector.py (test_redundant_close_after_synthetic_wrapper_is_consumed):
# Step 3.5 leaves out ``<tool_call>`` and may still write ``</tool_call>`` after ``</function>``,
# with nothing, a newline, or a newline and an indent between them. The indented one was a
# stray tag in the content.
@pytest.mark.parametrize("gap", ["", "\n", "\n  "])
def test_step3_5_closing_tag_after_the_function_closes_the_call(gap: str) -> None:
    text = f"<function=bash><parameter=command>pwd</parameter></function>{gap}</tool_call>"
    result = parse_both("StepFun-Step-3.5-Flash", text, reasoning=False)
    assert calls(result) == [("bash", {"command": "pwd"})]
    assert result.message.content is None
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]  # (no <tool_call>)
    assert result.finish_reason == "tool_calls"


# SGLang test_deepseekv32_strict_dsml.py (param_missing_string_attr_only): a parameter with
# no ``string=`` attribute, as models trained on MiniMax's or Claude's tags write it. The tag
# was half a delimiter and half content, and the call came out empty; it is read now, by the
# tool's schema, and said to be noncanonical. (SGLang drops the whole section to content.)
@pytest.mark.parametrize(("template", "section"), [("DeepSeek-V4", "tool_calls"), ("DeepSeek-V3.2-llamacpp", "function_calls")])
def test_dsml_parameter_without_its_type_is_read_by_the_schema(template: str, section: str) -> None:
    text = (
        f'Sure.\n\n<｜DSML｜{section}>\n<｜DSML｜invoke name="get_weather">'
        '<｜DSML｜parameter name="city">3</｜DSML｜parameter>'
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter></｜DSML｜invoke>\n'
        f"</｜DSML｜{section}>"
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
            },
        }
    ]
    result = parse_both(template, text, reasoning=False, tools=tools)
    assert result.message.content == "Sure."
    assert calls(result) == [("get_weather", {"city": "3", "days": 3})]
    assert [(d.kind, d.position) for d in result.diagnostics] == [("noncanonical", text.index('">3'))]
    assert result.finish_reason == "tool_calls"
    # Without a schema, the value is read as the typed ones are where they say "false".
    assert calls(parse_both(template, text, reasoning=False)) == [("get_weather", {"city": 3, "days": 3})]


# SGLang test_reasoning_parser_apertus_cohere.py (TestCohereCommand4DetectAndParse,
# test_reasoning_false_text_only): after a prompt that opened the thinking block, the model
# skips it and opens its answer with its tag. The tag ends the block, as Kimi K3's and Granite
# 3.3's do (noncanonical), where the answer was read as reasoning.
@pytest.mark.parametrize(
    ("template", "answer_tag"),
    [("Cohere-North-Mini-Code-Cohere2MoE", "<|START_TEXT|>"), ("Cohere-command-a-reasoning-08-2025", "<|START_RESPONSE|>")],
)
def test_cohere_answer_tag_ends_a_thinking_block_the_prompt_opened(template: str, answer_tag: str) -> None:
    result = parse_both(template, answer_tag + "answer", reasoning=True)
    assert (result.message.reasoning_content, result.message.content) == (None, "answer")
    assert [(d.kind, d.position) for d in result.diagnostics] == [("noncanonical", 0)]
    assert result.finish_reason == "stop"


# SGLang test_reasoning_parser.py (TestGptOssDetector: analysis then final, normal only) and
# test_harmony_parser.py: a message header with its role left out, ``<|start|><|channel|>…``,
# where the prompt wrote ``<|start|>assistant``.
@pytest.mark.parametrize("template", GPT_OSS)
def test_gpt_oss_header_without_its_role(template: str) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    text = "<|start|><|channel|>analysis<|message|>thinking hard<|end|><|channel|>final<|message|>the answer<|end|>"
    result = parse_both(template, text, prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == ("thinking hard", "the answer")
    result = parse_both(template, "<|start|><|channel|>final<|message|>just the answer<|return|>", prompt=prompt)
    assert (result.message.reasoning_content, result.message.content) == (None, "just the answer")
    assert not result.diagnostics and result.finish_reason == "stop"


# SGLang test_harmony_parser.py (TestIntegrationScenarios.test_built_in_tool_call): a call to
# one of gpt-oss's built-in tools, on the analysis channel, named by its whole recipient. The
# tools a request lists are functions; the built-in ones are not among them, and their calls
# are read whatever the list holds (they were unknown_tool text).
@pytest.mark.parametrize("template", GPT_OSS)
def test_gpt_oss_built_in_tool_call(template: str) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    text = '<|channel|>analysis to=browser.search<|message|>{"query": "SGLang"}<|call|>'
    for tools in (None, TOOLS):
        result = parse_both(template, text, prompt=prompt, tools=tools)
        assert calls(result) == [("browser.search", {"query": "SGLang"})]
        assert not result.message.content and not result.diagnostics and result.finish_reason == "tool_calls"
    # (A function the list lacks is text, as in any format.)
    function = '<|channel|>commentary to=functions.nope <|constrain|>json<|message|>{"a": 1}<|call|>'
    result = parse_both(template, function, prompt=prompt, tools=TOOLS)
    assert result.message.content == function and [d.kind for d in result.diagnostics] == ["unknown_tool"]


# vLLM tests/tool_parsers/test_qwen3_xml_coder_shared.py (test_double_encoded_object_param_*):
# a parameter the schema types as an object, written as a JSON string of the object's Python
# text. The object is the value; a string that holds none stays the string.
@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("\"{'key': 'value', 'n': 1}\"", {"key": "value", "n": 1}),
        ('"{\\"key\\": [1, 2]}"', {"key": [1, 2]}),
        ('"not an object"', "not an object"),
    ],
)
def test_qwen3_coder_object_written_as_a_string_of_it(written: str, value: Any) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "process", "parameters": {"type": "object", "properties": {"data": {"type": "object"}}}},
        }
    ]
    text = f"<tool_call>\n<function=process>\n<parameter=data>\n{written}\n</parameter>\n</function>\n</tool_call>"
    result = parse_both("Qwen-Qwen3-Coder", text, tools=tools)
    assert calls(result) == [("process", {"data": value})]


# SGLang test_gemma4_detector_string_delimiters.py (test_omitted_opening_delimiter_in_nested_object,
# _in_array): a string whose opening <|"|> is left out inside a nested object or list is read
# as at the top level (noncanonical), where it ran on and took the members after it.
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{filters:{city:Tokyo<|"|>},query:<|"|>x<|"|>}', {"filters": {"city": "Tokyo"}, "query": "x"}),
        ('{filters:{tags:[<|"|>a<|"|>,b<|"|>]},query:<|"|>x<|"|>}', {"filters": {"tags": ["a", "b"]}, "query": "x"}),
    ],
)
def test_gemma_nested_string_with_its_opening_quote_left_out(arguments: str, expected: dict[str, Any]) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "web_search",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "filters": {"type": "object"}}},
            },
        }
    ]
    result = parse_both("Google-gemma-4-31B-it", f"<|tool_call>call:web_search{arguments}<tool_call|>", tools=tools)
    assert calls(result) == [("web_search", expected)]
    assert [(d.kind, d.position) for d in result.diagnostics] == [("noncanonical", 0)]


# vLLM tests/reasoning/test_gemma4_reasoning_parser.py (reasoning, multiple_lines,
# thought_prefix_diverge): Gemma 4's channel token with the channel's name left out opens the
# thought channel, where it was content.
@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        ("<|channel>This is a reasoning section<channel|>This is the rest", "This is a reasoning section", "This is the rest"),
        ("<|channel>This\nThat<channel|>This is the rest\nThat", "This\nThat", "This is the rest\nThat"),
        ("<|channel>thousand reasons<channel|>Done", "thousand reasons", "Done"),
        ("<|channel>thought\nplan<channel|>Done", "plan", "Done"),
    ],
)
def test_gemma_channel_token_without_its_name(text: str, reasoning: str, content: str) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert not result.diagnostics and result.finish_reason == "stop"


# vLLM tests/tool_parsers/test_gemma4_tool_parser.py and SGLang's harmony tests: a special token
# that only begins a delimiter (Gemma's ``<|tool_call>`` of ``<|tool_call>call:``, gpt-oss's
# ``<|channel|>`` and ``<|constrain|>``), written where the rest does not follow, is text as
# before, but no longer silent: it is a stray delimiter, as a whole one would be.
@pytest.mark.parametrize(
    ("template", "text", "stray"),
    [
        ("Google-gemma-4-31B-it", "I will call <|tool_call>web_search now", ["<|tool_call>"]),
        ("OpenAI-gpt-oss-120b", "<|channel|>final<|constrain|>xml<|message|>hi", ["<|channel|>", "<|constrain|>", "<|message|>"]),
        ("Llama-3.1-8B-Instruct", "Hi <|start_header_id|>there", ["<|start_header_id|>"]),
    ],
)
def test_a_special_token_that_only_begins_a_delimiter_is_stray(template: str, text: str, stray: list[str]) -> None:
    result = parse_both(template, text)
    assert result.message.content == text and not result.message.tool_calls
    assert [(d.kind, d.position) for d in result.diagnostics] == [("stray_delimiter", text.index(token)) for token in stray]


# An opening tag inside text that the closing tag after it makes reasoning (no prompt said
# the block was open: ``Intro<think>r</think>A``) is stray, as it is where the prompt opened
# the block. It was read into the reasoning with no diagnostic.
@pytest.mark.parametrize("template", ["StepFun-Step-3.5-Flash", "QwQ-32B", "Qwen3-4B-Thinking-2507", "llamacpp-deepseek-r1"])
def test_an_opening_tag_inside_leading_reasoning_is_stray(template: str) -> None:
    text = "Intro<think>r</think>A"
    result = parse_both(template, text)
    assert (result.message.reasoning_content, result.message.content) == ("Intro<think>r", "A")
    assert [(d.kind, d.position) for d in result.diagnostics] == [("stray_delimiter", 5)]


# vLLM tests/tool_parsers/test_internlm2_tool_parser.py: InternLM2 writes one call's object
# after <|action_start|><|plugin|> (a newline after it or not), its arguments under
# "parameters", and closes it with <|action_end|>; text before it is content.
INTERNLM2_TOOLS = ["get_weather", "refresh", "test_function"]


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        (
            '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>',
            None,
            [("get_weather", {"city": "Tokyo"})],
        ),
        (
            'Let me check the weather for you. <|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>',
            "Let me check the weather for you. ",
            [("get_weather", {"city": "Tokyo"})],
        ),
        ('<|action_start|><|plugin|>{"name": "refresh", "parameters": {}}<|action_end|>', None, [("refresh", {})]),
        (
            '<|action_start|><|plugin|>{\n  "name": "test_function",\n  "parameters": {\n    "int_field": 42,\n'
            '    "bool_field": true,\n    "null_field": null,\n    "array_field": ["a", "b"],\n    "object_field": {"nested": "value"},\n'
            '    "quoted": "He said \\"hello\\"",\n    "path": "C:\\\\Users\\\\file.txt",\n    "unicode": "emoji: 🎉"\n  }\n}<|action_end|>',
            None,
            [("test_function", {"int_field": 42, "bool_field": True, "null_field": None, "array_field": ["a", "b"],
                                "object_field": {"nested": "value"}, "quoted": 'He said "hello"', "path": "C:\\Users\\file.txt",
                                "unicode": "emoji: 🎉"})],
        ),
        # The template's own form: a newline after the opening tags, "arguments", the turn's end.
        (
            '<|action_start|><|plugin|>\n{"name": "get_weather", "arguments": {"city": "Paris"}}<|action_end|><|im_end|>',
            None,
            [("get_weather", {"city": "Paris"})],
        ),
    ],
)
def test_internlm2_calls(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    result = parse_both("vLLM-InternLM2-tool", text, tools=INTERNLM2_TOOLS)
    assert calls(result) == expected
    assert result.message.content == content
    assert result.finish_reason == "tool_calls"
    assert result.diagnostics == []


# The same suite's whitelist and malformed cases: a tool the request does not offer, or a body
# that is no call, is no call, and its text stays in the content with a diagnostic that says
# why (vLLM drops the call; its test expects no call).
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('<|action_start|><|plugin|>{"name": "delete_everything", "parameters": {"city": "Tokyo"}}<|action_end|>', "unknown_tool"),
        ("<|action_start|><|plugin|>not json<|action_end|>", "malformed_tool_call"),
        ('<|action_start|>{"name": "get_weather"}', "stray_delimiter"),
    ],
)
def test_internlm2_what_is_no_call_stays_text(text: str, kind: str) -> None:
    result = parse_both("vLLM-InternLM2-tool", text, tools=INTERNLM2_TOOLS)
    assert result.message.tool_calls is None
    assert result.message.content == text
    assert [d.kind for d in result.diagnostics] == [kind]


# vLLM tests/tool_parsers/test_gigachat35_tool_parser.py: GigaChat 3.5 writes DeepSeek's DSML
# with its own prefix, <｜GCML｜…>, each parameter flagged a string or JSON.
def _gcml(*invokes: str) -> str:
    return "<｜GCML｜tool_calls>" + "".join(invokes) + "</｜GCML｜tool_calls>"


def _gcml_invoke(name: str, *parameters: tuple[str, str, bool]) -> str:
    body = "".join(
        f'<｜GCML｜parameter name="{key}" string="{str(is_string).lower()}">{value}</｜GCML｜parameter>'
        for key, value, is_string in parameters
    )
    return f'<｜GCML｜invoke name="{name}">{body}</｜GCML｜invoke>'


GIGACHAT35 = "SberDevices-GigaChat3.5-llamacpp-branch"


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        (_gcml(_gcml_invoke("get_weather", ("city", "Tokyo", True))), None, [("get_weather", {"city": "Tokyo"})]),
        (
            _gcml(_gcml_invoke("get_weather", ("city", "Tokyo", True)), _gcml_invoke("get_time", ("timezone", "Asia/Tokyo", True))),
            None,
            [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        ),
        (
            _gcml(_gcml_invoke(
                "typed_args", ("string_field", '"hello"', False), ("int_field", "7", False), ("float_field", "3.5", False),
                ("bool_field", "true", False), ("null_field", "null", False), ("array_field", "[1, 2, 3]", False),
                ("object_field", '{"nested": true}', False),
            )),
            None,
            [("typed_args", {"string_field": "hello", "int_field": 7, "float_field": 3.5, "bool_field": True,
                             "null_field": None, "array_field": [1, 2, 3], "object_field": {"nested": True}})],
        ),
        (_gcml(_gcml_invoke("empty_args")), None, [("empty_args", {})]),
        ("I will check." + _gcml(_gcml_invoke("get_weather", ("city", "Tokyo", True))), "I will check.", [("get_weather", {"city": "Tokyo"})]),
        (_gcml(_gcml_invoke("escaped", ("text", 'line 1\\n"quoted"', True))), None, [("escaped", {"text": 'line 1\\n"quoted"'})]),
        (_gcml(_gcml_invoke("store", ("payload", '{"a": 1}', False))), None, [("store", {"payload": {"a": 1}})]),
        # The template's own form: the section after a blank line, a newline inside it, the end.
        (
            'Let me check.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name="get_weather">\n'
            '<｜GCML｜parameter name="city" string="true">Paris</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls></s>',
            "Let me check.",
            [("get_weather", {"city": "Paris"})],
        ),
    ],
)
def test_gigachat35_calls(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    result = parse_both(GIGACHAT35, text)
    assert calls(result) == expected
    assert result.message.content == content
    assert result.finish_reason == "tool_calls"
    assert result.diagnostics == []


# The same suite's malformed outputs: nothing raises and no character is lost. A call cut
# short after its name is that call (`length`); a section that opens no call is text.
@pytest.mark.parametrize(
    ("text", "call", "kinds"),
    [
        ('<｜GCML｜tool_calls><｜GCML｜invoke name="broken">', "broken", ["unclosed_tool_call"]),
        (
            '<｜GCML｜tool_calls><｜GCML｜parameter name="x">1</｜GCML｜parameter>',
            None,
            ["malformed_tool_call", "stray_delimiter", "stray_delimiter"],
        ),
        ("<｜GCML｜tool_calls></｜GCML｜tool_calls>", None, ["malformed_tool_call"]),
    ],
)
def test_gigachat35_malformed_calls_keep_their_text(text: str, call: str | None, kinds: list[str]) -> None:
    result = parse_both(GIGACHAT35, text)
    assert result.reassemble() == text
    assert [d.kind for d in result.diagnostics] == kinds
    if call is None:
        assert result.message.content == text and result.message.tool_calls is None
    else:
        assert calls(result) == [(call, {})] and result.finish_reason == "length"


# ERNIE 4.5 Thinking's template writes the generation prompt after every conversation, asked
# for or not, and wraps an answer's text in <response> tags before its Hermes calls (as its
# template writes an answer, and as vLLM's ernie45 parser reads the calls).
ERNIE45 = "Baidu-ERNIE-4.5-21B-A3B-Thinking"
_WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
_SEARCH = '<tool_call>\n{"name": "search", "arguments": {"query": "rain"}}\n</tool_call>'


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("Plan.\n</think>\n\n<response>\nIt is sunny.\n</response>\n<|im_end|>", "It is sunny.", []),
        (
            "Plan.\n</think>\n\n<response>\nLet me check.\n</response>\n\n\n" + _WEATHER + "\n<|im_end|>",
            "Let me check.",
            [("get_weather", {"city": "Paris"})],
        ),
        ("Plan.\n</think>\n\n" + _WEATHER + "\n<|im_end|>", None, [("get_weather", {"city": "Paris"})]),
        ("Plan.\n</think>\n\n" + _WEATHER + "\n" + _SEARCH + "\n<|im_end|>", None, [("get_weather", {"city": "Paris"}), ("search", {"query": "rain"})]),
    ],
)
def test_ernie45_answers_and_calls(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    codec = codec_for(ERNIE45)
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    # (What it writes unasked is the generation prompt, not the end of the user's turn.)
    assert codec.format.source is not None and codec.format.source.generation_prompt == "<|im_start|>assistant\n<think>\n"
    assert codec.format.source.prompt_written_unasked
    result = parse_both(ERNIE45, text, prompt=prompt)
    assert result.message.reasoning_content == "Plan."
    assert result.message.content == content
    assert calls(result) == expected
    assert result.finish_reason == ("tool_calls" if expected else "stop")
    assert result.diagnostics == []


@pytest.mark.parametrize(
    ("template", "unasked"),
    [
        (ERNIE45, True),
        ("NVIDIA-Nemotron-Mini-4B-Instruct", True),
        ("MadeAgents-Hammer2.1", True),
        ("Qwen3-0.6B", False),
        ("Llama-3.1-8B-Instruct", False),
        ("OpenAI-gpt-oss-120b", False),
    ],
)
def test_the_framing_says_whether_the_template_writes_its_prompt_unasked(template: str, unasked: bool) -> None:
    codec = codec_for(template)
    framing = codec.format.source
    assert framing is not None and framing.prompt_written_unasked is unasked
    assert codec.describe()["framing"]["generation_prompt_written_unasked"] is unasked
    question = [{"role": "user", "content": "hi"}]
    written = codec.render(question) == codec.render(question, add_generation_prompt=True)
    assert written is unasked


# llama.cpp test-chat.cpp (FireFunction): firefunction v2's template writes variables of its own,
# `functions` and `datetime`, into its system prompt, and renders nothing without them. Its
# format is read with each given as an empty string; the caller gives them when rendering.
FIREFUNCTION_V2 = "Fireworks-llama-3-firefunction-v2"
SPECIAL_FUNCTION = {
    "type": "function",
    "function": {
        "name": "special_function",
        "description": "I'm special",
        "parameters": {"type": "object", "properties": {"arg1": {"type": "integer"}}, "required": ["arg1"]},
    },
}


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("Hello, world!\nWhat's up?", "Hello, world!\nWhat's up?", []),
        (' functools[{"name": "special_function", "arguments": {"arg1": 1}}]', None, [("special_function", {"arg1": 1})]),
    ],
)
def test_firefunction_v2_answers_and_calls(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    codec = codec_for(FIREFUNCTION_V2)
    assert codec.template_variables == ["functions", "datetime"]
    with pytest.raises(chatcodec.TemplateRenderError, match="'functions' is undefined"):
        codec.render([{"role": "user", "content": "Hey there!"}])
    variables = {"functions": json.dumps([SPECIAL_FUNCTION["function"]]), "datetime": "Jul 26 2024"}
    question = [{"role": "user", "content": "Hey there!"}]
    prompt = codec.render(question, tools=[SPECIAL_FUNCTION], add_generation_prompt=True, **variables)
    assert prompt.endswith("Hey there!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
    result = parse_both(FIREFUNCTION_V2, text, prompt=prompt, tools=[SPECIAL_FUNCTION])
    assert result.message.content == content
    assert calls(result) == expected
    assert result.finish_reason == ("tool_calls" if expected else "stop")
    assert result.diagnostics == []
    # Rendered back, the answer is the text (llama.cpp's reconstruction); the template writes the
    # generation prompt after every conversation.
    again = codec.render([*question, result.message], tools=[SPECIAL_FUNCTION], **variables)
    assert again == prompt + text + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"


# vLLM tests/tool_parsers/test_granite_20b_fc_tool_parser.py: Granite 20B FunctionCalling writes
# each call's object after its own <function_call> tag, one call a line, and nothing closes the
# last; text before the first is content.
GRANITE_20B = "vLLM-granite-20b-functioncalling"


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ('<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}', None, [("get_weather", {"city": "Tokyo"})]),
        (
            '<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}\n'
            '<function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}',
            None,
            [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        ),
        ('<function_call> {"name": "refresh", "arguments": {}}', None, [("refresh", {})]),
        (
            'Let me check the weather for you.\n<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}',
            "Let me check the weather for you.",
            [("get_weather", {"city": "Tokyo"})],
        ),
        (
            '<function_call> {\n  "name": "test_function",\n  "arguments": {\n    "string_field": "hello",\n'
            '    "int_field": 42,\n    "float_field": 3.14,\n    "bool_field": true,\n    "null_field": null,\n'
            '    "array_field": ["a", "b", "c"],\n    "object_field": {"nested": "value"},\n    "empty_array": [],\n'
            '    "empty_object": {},\n    "quoted": "He said \\"hello\\"",\n    "path": "C:\\\\Users\\\\file.txt",\n'
            '    "unicode": "emoji: 🎉"\n  }\n}',
            None,
            [("test_function", {"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": True,
                                "null_field": None, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"},
                                "empty_array": [], "empty_object": {}, "quoted": 'He said "hello"',
                                "path": "C:\\Users\\file.txt", "unicode": "emoji: 🎉"})],
        ),
        # The template's own form: the turn's end token after the last call's line.
        ('<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}\n<|endoftext|>', None, [("get_weather", {"city": "Paris"})]),
    ],
)
def test_granite_20b_fc_calls(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    prompt = codec_for(GRANITE_20B).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    for given in (prompt, None):
        result = parse_both(GRANITE_20B, text, prompt=given)
        assert calls(result) == expected
        assert result.message.content == content
        assert result.finish_reason == "tool_calls"
        assert result.diagnostics == []


# The same suite's malformed outputs: a call cut short is a call said to be cut short (its
# arguments as far as they go), and a body that is no call object stays in the content with a
# diagnostic; JSON with no tag is content.
@pytest.mark.parametrize(
    ("text", "kinds", "finish", "call"),
    [
        ('<function_call> {"name": "func", "arguments": {', ["unclosed_tool_call"], "length", ("func", "{")),
        ('<function_call> [{"name": "func", "arguments": {}}]', ["malformed_tool_call"], "stop", None),
        ('<function_call> {"name": 123}', ["malformed_tool_call"], "stop", None),
        ('{"name": "func", "arguments": {}}', [], "stop", None),
    ],
)
def test_granite_20b_fc_malformed(text: str, kinds: list[str], finish: str, call: tuple[str, str] | None) -> None:
    result = parse_both(GRANITE_20B, text)
    assert [d.kind for d in result.diagnostics] == kinds
    assert result.finish_reason == finish
    if call is None:
        assert result.message.tool_calls is None and result.message.content == text
    else:
        assert [(c.function.name, c.function.arguments) for c in result.message.tool_calls or []] == [call]


# vLLM tests/tool_parsers/test_hyperclovax_seed_think_14b_tool_parser.py: HyperCLOVA X SEED
# Think 14B writes its calls as a message of their own, whose header names them, after the
# generation prompt's ``<|im_start|>assistant``: `` -> tool/function_call\n[...]<|im_end|>``
# (arguments under "arguments" or "parameters"). The same after its reasoning (``/think\n…``)
# or an answer, each ended by ``<|im_end|>\n<|im_start|>assistant``.
HYPERCLOVAX = "vLLM-HyperCLOVAX-SEED-Think-14B"
HCX_CALLS = " -> tool/function_call\n"
HCX_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("get_weather", "a", "b")
]


@pytest.mark.parametrize(
    ("text", "reasoning", "content", "expected"),
    [
        (HCX_CALLS + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>', None, None,
         [("get_weather", {"city": "Seoul"})]),
        (HCX_CALLS + '[{"name": "get_weather", "parameters": {"a": 1}}]<|im_end|>', None, None, [("get_weather", {"a": 1})]),
        (HCX_CALLS + '[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {"y": 2}}]<|im_end|>', None, None,
         [("a", {"x": 1}), ("b", {"y": 2})]),
        # The streaming case: the text ends with the list (the server took the end tokens).
        (HCX_CALLS + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]', None, None, [("get_weather", {"city": "Seoul"})]),
        # The template's own form: the message's end and the stop token.
        (HCX_CALLS + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|><|stop|>', None, None,
         [("get_weather", {"city": "Seoul"})]),
        ("/think\nI need the weather.<|im_end|>\n<|im_start|>assistant" + HCX_CALLS
         + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>', "I need the weather.", None,
         [("get_weather", {"city": "Seoul"})]),
        ("\nLet me check.<|im_end|>\n<|im_start|>assistant" + HCX_CALLS
         + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]<|im_end|>', None, "Let me check.",
         [("get_weather", {"city": "Seoul"})]),
    ],
)
def test_hyperclovax_calls(text: str, reasoning: str | None, content: str | None, expected: list[tuple[str, Any]]) -> None:
    prompt = codec_for(HYPERCLOVAX).render([{"role": "user", "content": "hi"}], tools=HCX_TOOLS, add_generation_prompt=True)
    result = parse_both(HYPERCLOVAX, text, prompt=prompt, tools=HCX_TOOLS)
    assert calls(result) == expected
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert result.finish_reason == "tool_calls"
    assert result.diagnostics == []


# The same suite's outputs that are no calls: the abbreviated form the model sometimes writes
# (a bare object under its function's name, not the template's header) and plain text are the
# answer's text. So are the reasoning and the answer the model writes without calls.
@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        ('-> tool/get_current_weather\n{"city": "Seoul"}', None, '-> tool/get_current_weather\n{"city": "Seoul"}'),
        ("I cannot find the weather right now.", None, "I cannot find the weather right now."),
        ("\nIt is sunny.<|im_end|>", None, "It is sunny."),
        ("/think\nSunny, I think.<|im_end|>\n<|im_start|>assistant\nIt is sunny.<|im_end|>", "Sunny, I think.", "It is sunny."),
    ],
)
def test_hyperclovax_text(text: str, reasoning: str | None, content: str) -> None:
    prompt = codec_for(HYPERCLOVAX).render([{"role": "user", "content": "hi"}], tools=HCX_TOOLS, add_generation_prompt=True)
    result = parse_both(HYPERCLOVAX, text, prompt=prompt, tools=HCX_TOOLS)
    assert result.message.tool_calls is None
    assert (result.message.reasoning_content, result.message.content) == (reasoning, content)
    assert result.finish_reason == "stop"
    assert result.diagnostics == []


# vLLM tests/tool_parsers/test_mistral_tool_parser.py: a call the model writes no id for gets
# one of nine letters and digits, Mistral's shape; Mistral Small 3.2's template renders no
# other, so a parsed answer renders back with its tool's result.
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Mistral-Small-3.2-24B-Instruct-2506", '[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}'),
        ("Mistral-7B-Instruct-v0.3-jsonschema", '[TOOL_CALLS] [{"name": "add_this_and_that", "arguments": {"a": 3.5, "b": 4}}]'),
    ],
)
def test_mistral_made_up_ids_are_mistrals_and_render(template: str, text: str) -> None:
    tools = [{"type": "function", "function": {"name": "add_this_and_that", "parameters": {"type": "object", "properties": {}}}}]
    result = parse_both(template, text, tools=tools)
    (call,) = result.message.tool_calls or []
    assert len(call.id) == 9 and call.id.isalnum() and call.id.isascii()
    rendered = codec_for(template).render(
        [{"role": "user", "content": "add"}, result.message.to_openai(), {"role": "tool", "tool_call_id": call.id, "content": "7.5"}],
        tools=tools,
    )
    assert rendered.count(call.id) >= 1 and "7.5" in rendered


# vLLM tests/tool_parsers/test_deepseekv4_tool_parser.py: prose that quotes an invoke's opening
# tag before the real section. The quoted tag is text (a call's name never runs into another
# call's opening), and the real call in the section is read.
@pytest.mark.parametrize(("template", "section"), [("DeepSeek-V4", "tool_calls"), ("DeepSeek-V3.2-llamacpp", "function_calls")])
def test_dsml_quoted_invoke_before_the_real_call(template: str, section: str) -> None:
    quoted = 'Documentation quotes <｜DSML｜invoke name=" literally. '
    text = (
        f'{quoted}<｜DSML｜{section}><｜DSML｜invoke name="terminal_exec">'
        f'<｜DSML｜parameter name="command" string="true">printf ready</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜{section}>'
    )
    result = parse_both(template, text, tools=["terminal_exec"])
    assert calls(result) == [("terminal_exec", {"command": "printf ready"})]
    assert result.message.content == quoted
    assert [d.kind for d in result.diagnostics] == ["stray_delimiter"]


# vLLM tests/tool_parsers/test_minimax_m2_tool_parser.py (issue #32827): MiniMax-M2 models may
# echo the schema into a tag, ``<parameter name="command" type="string">``. The name and the key
# are read without the attributes (the key was ``command" type="string``), said to be
# noncanonical.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<minimax:tool_call><invoke name="fn"><parameter name="command" type="string">ls -la</parameter></invoke></minimax:tool_call>',
         [("fn", {"command": "ls -la"})]),
        ('<minimax:tool_call><invoke name="execute_command" description="Run a command"><parameter name="command" type="string">ls -la'
         "</parameter></invoke></minimax:tool_call>", [("execute_command", {"command": "ls -la"})]),
        ('<minimax:tool_call><invoke name="test_func" extra="ignored"><parameter name="arg1" type="string">value1</parameter>'
         '<parameter name="arg2" description="(e.g. example)">value2</parameter></invoke></minimax:tool_call>',
         [("test_func", {"arg1": "value1", "arg2": "value2"})]),
    ],
)
def test_minimax_attributes_the_template_does_not_write(text: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both("MiniMax-M2", text)
    assert calls(result) == expected
    assert result.message.content is None and result.finish_reason == "tool_calls"
    assert {d.kind for d in result.diagnostics} == {"noncanonical"}


# vLLM tests/tool_parsers/test_glm47_moe_tool_parser.py: a value that spells a key's opening
# tag, then goes on. The tag is text of the value: a closing tag follows, and the name after
# it never ends (see tests/test_xml_value_tags.py).
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.7-Flash", "ZhipuAI-GLM-4.6"])
def test_glm_value_that_spells_a_key_tag_keeps_every_character(template: str) -> None:
    tools = [
        {"type": "function", "function": {"name": "record_value", "parameters": {"type": "object", "properties": {
            "value": {"type": "string"}, "path": {"type": "string"}}}}}
    ]
    text = (
        "<tool_call>record_value<arg_key>value</arg_key><arg_value>see <arg_key> tag</arg_value>"
        "<arg_key>path</arg_key><arg_value>/tmp/x</arg_value></tool_call>after"
    )
    result = parse_both(template, text, tools=tools)
    assert calls(result) == [("record_value", {"value": "see <arg_key> tag", "path": "/tmp/x"})]
    assert result.message.content == "after"
    assert result.diagnostics == []


# SGLang test_step3p5_detector.py (a text cut inside a parameter's opening tag): the name the
# text ends in was cut short with the call. It is no parameter and no text of the answer: the
# call keeps it in its span, and the content gets nothing. Before, the content was "command".
@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n<parameter=timeo"),
        ("StepFun-Step-3.5-Flash", "</think>\n<tool_call>\n<function=bash>\n<parameter=command>\npwd\n</parameter>\n<parameter=timeo"),
        ("ZhipuAI-GLM-4.7-Flash", "<tool_call>bash<arg_key>command</arg_key><arg_value>pwd</arg_value><arg_key>timeo"),
        ("MiniMax-M2", '<minimax:tool_call>\n<invoke name="bash">\n<parameter name="command">pwd</parameter>\n<parameter name="timeo'),
    ],
)
def test_a_parameter_name_the_text_ends_in_stays_in_the_call(template: str, text: str) -> None:
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
    result = parse_both(template, text, tools=tools)
    assert calls(result) == [("bash", {"command": "pwd"})]
    assert not result.message.content and result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]
    assert result.spans[-1].kind == "tool_call" and result.spans[-1].end == len(text)
    # The call's end written after the name: the name, with the tag that opened it, is text
    # that is no part of the call.
    closed = parse_both("Qwen-Qwen3-Coder", "<tool_call>\n<function=bash>\n<parameter=command</function>\n</tool_call>", tools=tools)
    assert closed.message.content == "<parameter=command" and [d.kind for d in closed.diagnostics] == ["unexpected_text"]


# vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py (noise_between_markers): text between the
# calls of a section has no place there. It stays in the content, where it stands, and an
# unexpected_text diagnostic says so (before, it was content with no diagnostic). Whitespace
# there is the section's own.
@pytest.mark.parametrize(
    ("template", "call"),
    [
        ("Moonshot-Kimi-K2-Instruct-early", '<|tool_call_begin|>functions.get_time:{i}<|tool_call_argument_begin|>{{"x": {i}}}<|tool_call_end|>'),
        ("DeepSeek-V3.1", '<｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{{"x": {i}}}<｜tool▁call▁end｜>'),
    ],
)
def test_text_between_the_calls_of_a_section_is_unexpected(template: str, call: str) -> None:
    begin, end = (
        ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")
        if template.startswith("Moonshot")
        else ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
    )
    text = f"Let me check.{begin}{call.format(i=0)} noise {call.format(i=1)}{end}"
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_time", {"x": 0}), ("get_time", {"x": 1})]
    assert result.message.content == "Let me check. noise "
    assert [(d.kind, d.position) for d in result.diagnostics] == [("unexpected_text", text.index(" noise"))]
    spaced = parse_both(template, f"{begin}{call.format(i=0)}\n{call.format(i=1)}{end}", tools=TOOLS)
    assert len(calls(spaced)) == 2 and not spaced.diagnostics


# vLLM tests/tool_parsers/test_intern_s1_tool_parser.py (supports_spaced_special_tokens), SGLang
# test_internlm_detector.py: a slow tokenizer decodes InternLM2's two opening tokens with a
# space between them unless the server turns that off (SGLang's default leaves it on). Read as
# the call it is, noncanonical; before, it was text.
def test_internlm2_opening_tokens_with_a_space_between_are_read() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    text = '<|action_start|> <|plugin|>\n{"name": "get_weather", "parameters": {"city": "Tokyo"}}\n<|action_end|>'
    result = parse_both("vLLM-InternLM2-tool", text, tools=tools)
    assert calls(result) == [("get_weather", {"city": "Tokyo"})] and result.message.content is None
    assert [(d.kind, d.position) for d in result.diagnostics] == [("noncanonical", 0)]
    assert result.finish_reason == "tool_calls"


# SGLang test_glm47_moe_detector.py (test_array_argument_with_escaped_json): a list written as
# the escaped text of a JSON string, its quotes left out, where the schema asks for a list. A
# string parameter keeps the text as written.
@pytest.mark.parametrize("template", ["ZhipuAI-GLM-4.7-Flash", "Qwen-Qwen3-Coder"])
def test_a_list_written_as_escaped_json_text_is_the_list(template: str) -> None:
    properties = {"todos": {"type": "array"}, "note": {"type": "string"}}
    tools = [{"type": "function", "function": {"name": "todo_write", "parameters": {"type": "object", "properties": properties}}}]
    value = '[{\\"id\\": \\"1\\", \\"text\\": \\"a\\\\nb\\"}]'
    values = {"todos": value, "note": value}
    if template.startswith("ZhipuAI"):
        body = "".join(f"<arg_key>{key}</arg_key><arg_value>{text}</arg_value>" for key, text in values.items())
        text = f"<tool_call>todo_write{body}</tool_call>"
    else:
        body = "".join(f"<parameter={key}>\n{text}\n</parameter>\n" for key, text in values.items())
        text = f"<tool_call>\n<function=todo_write>\n{body}</function>\n</tool_call>"
    result = parse_both(template, text, tools=tools)
    assert calls(result) == [("todo_write", {"todos": [{"id": "1", "text": "a\nb"}], "note": value})]
    assert not result.diagnostics


# Found among the peers' Gemma 4 truncation cases (a call cut short in a bare value): what was
# written of the last value is typed by the schema, as any other syntax's cut call's is; before,
# "1" for an integer.
@pytest.mark.parametrize(("written", "value"), [("beta:1", 1), ("s:ab", "ab"), ("beta:[1,2", "[1,2")])
def test_a_gemma_call_cut_short_types_its_last_value(written: str, value: Any) -> None:
    properties = {"alpha": {"type": "integer"}, "beta": {"type": "integer"}, "s": {"type": "string"}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}]
    result = parse_both("Google-gemma-4-31B-it", "<|tool_call>call:f{alpha:15," + written, tools=tools)
    assert calls(result) == [("f", {"alpha": 15, written.split(":")[0]: value})]
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


# vLLM tests/tool_parsers/test_lfm2_tool_parser.py (nested_python_c): a model's Python string
# holds backslashes Python does not know as escapes ('\,'). Python reads them as written and
# warns, which from 3.12 prints to stderr: a parser of model output reads them in silence (with
# warnings as errors, as some servers run, the call was lost).
def test_an_unknown_escape_in_a_python_string_is_read_without_a_warning() -> None:
    text = "<|tool_call_start|>[bash(command='print(\"a\\,b\")', path='C:\\dir')]<|tool_call_end|>"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = parse_both("LiquidAI-LFM2.5-8B-A1B", text)
    assert calls(result) == [("bash", {"command": 'print("a\\,b")', "path": "C:\\dir"})]
    assert not result.diagnostics


# vLLM tests/tool_parsers/test_lfm2_tool_parser.py (nested_quote, nested_python_c): an agent's
# shell command quotes with the string's own quote, unescaped. Each string ends at the first of
# its quotes that the next argument or the call's end follows, so no reading swallows an
# argument; before, the call was lost to the content.
@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("bash(command='sed -n '360,450p' /testbed/common.py')", [("bash", {"command": "sed -n '360,450p' /testbed/common.py"})]),
        (
            "bash(command='python3 -c \"print(latex(x, mul_symbol='\\,'))\"')",
            [("bash", {"command": "python3 -c \"print(latex(x, mul_symbol='\\,'))\""})],
        ),
        ("f(a='it's', b='he's'), g(c=\"say \"hi\"\")", [("f", {"a": "it's", "b": "he's"}), ("g", {"c": 'say "hi"'})]),
        ("get_weather(city='SF', metric='c'), f(a='x 'y', b='z')", [("get_weather", {"city": "SF", "metric": "c"}), ("f", {"a": "x 'y", "b": "z"})]),
    ],
)
def test_a_python_string_holding_its_own_quote_unescaped(written: str, expected: list[tuple[str, Any]]) -> None:
    result = parse_both("LiquidAI-LFM2.5-8B-A1B", f"<|tool_call_start|>[{written}]<|tool_call_end|>")
    assert calls(result) == expected and result.message.content is None
    assert not result.diagnostics and result.finish_reason == "tool_calls"


# SGLang's Qwen2.5 detector (test_function_call_parser.py reads a list body): Qwen2.5 and
# Hermes models at times write all their calls as one JSON list in one <tool_call> block. Each
# element is a call, with a `noncanonical` diagnostic; before, the whole block was a malformed
# call that named no tool.
@pytest.mark.parametrize("template", ["Qwen2.5-7B-Instruct", "Hermes-3-Llama-3.1-8B-tool_use", "QwQ-32B"])
def test_a_json_list_of_calls_in_one_hermes_block(template: str) -> None:
    text = (
        'Checking both.\n<tool_call>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {"zone": "CET"}}]\n</tool_call>'
    )
    result = parse_both(template, text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]
    assert result.message.content == "Checking both."
    assert [d.kind for d in result.diagnostics] == ["noncanonical"] and result.finish_reason == "tool_calls"
    assert [s.kind for s in result.spans].count("tool_call") == 1  # one block holds both


def test_a_hermes_list_cut_short_keeps_its_whole_calls() -> None:
    text = '<tool_call>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_ti'
    result = parse_both("Qwen2.5-7B-Instruct", text, tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == '{"name": "get_ti'  # the element cut short: kept, as content
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["noncanonical", "unclosed_tool_call", "malformed_tool_call"]


# Found beside SGLang's test_unknown_tool_name.py: the first call of a section the model wrote
# names a tool the request does not offer. That call is content (`unknown_tool`, and no other
# diagnostic: the section's tags are text with it), and the call after it is still the section's:
# it is no "call outside the section" (`noncanonical`, as before, in the syntaxes whose calls
# belong in a section).
@pytest.mark.parametrize(
    ("template", "unknown", "known", "close"),
    [
        (
            "DeepSeek-V3.1",
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>rm_rf<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>',
            '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>',
            "<｜tool▁calls▁end｜>",
        ),
        (
            "MiniMax-M2",
            '<minimax:tool_call>\n<invoke name="rm_rf">\n<parameter name="city">Paris</parameter>\n</invoke>\n',
            '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n',
            "</minimax:tool_call>",
        ),
        (
            "Moonshot-Kimi-K2-Instruct",
            '<|tool_calls_section_begin|><|tool_call_begin|>functions.rm_rf:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>',
            '<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>',
            "<|tool_calls_section_end|>",
        ),
    ],
)
def test_a_known_call_after_an_unknown_one_in_its_section(template: str, unknown: str, known: str, close: str) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    result = parse_both(template, unknown + known + close, tools=tools)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == unknown + close
    assert [d.kind for d in result.diagnostics] == ["unknown_tool"] and result.finish_reason == "tool_calls"


# Found beside SGLang's test_zero_argument_tool_call.py and test_parallel_tool_calls.py: in the
# syntaxes that write calls as a JSON list, an element written flat (its arguments beside its
# name) lost them (`{}`, no diagnostic), where the same object alone is read as documented; and an
# element with neither arguments nor an id (a tool that takes none) was named only when the list
# closed, after the elements behind it, so the calls came out of order.
LIST_SYNTAXES = [
    ("cogito-v1-preview-llama-3B", "{}", ""),
    ("Mistral-7B-Instruct-v0.3-jsonschema", "[TOOL_CALLS] {}", ""),
    ("IBM-granite-3.0-2b-instruct", "<|tool_call|>{}", ""),
    ("AI21-Jamba-Large-1.6", "<tool_calls>{}</tool_calls>", ""),
    ("Qwen2.5-7B-Instruct", "<tool_call>\n{}\n</tool_call>", "noncanonical"),
]


@pytest.mark.parametrize(("template", "frame", "listed"), LIST_SYNTAXES)
def test_a_flat_call_in_a_list_keeps_its_arguments(template: str, frame: str, listed: str) -> None:
    result = parse_both(template, frame.format('[{"name": "get_weather", "city": "Paris"}, {"name": "f", "arguments": {}}]'), tools=TOOLS)
    assert calls(result) == [("get_weather", {"city": "Paris"}), ("f", {})]
    assert [d.kind for d in result.diagnostics] == [k for k in (listed, "noncanonical") if k]


@pytest.mark.parametrize(
    ("template", "written"),
    [
        *((template, frame.format('[{"name": "get_time"}, {"name": "get_weather", "arguments": {"city": "Paris"}}]')) for template, frame, _ in LIST_SYNTAXES),
        ("Mistral-Nemo-Instruct-2407", '[TOOL_CALLS][{"name": "get_time"}, {"name": "get_weather", "arguments": {"city": "Paris"}}]</s>'),
        (
            "Cohere-command-a-reasoning-08-2025",
            '<|START_ACTION|>[{"tool_name": "get_time"}, {"tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>',
        ),
    ],
)
def test_calls_of_a_list_keep_its_order(template: str, written: str) -> None:
    result = parse_both(template, written, tools=TOOLS)
    assert calls(result) == [("get_time", {}), ("get_weather", {"city": "Paris"})]
    events, _ = feed_in_chunks(codec_for(template), written, [3], tools=TOOLS)
    starts = [(e.index, e.name) for e in events if isinstance(e, ToolCallStart)]
    assert starts == [(0, "get_time"), (1, "get_weather")]


# vLLM tests/tool_parsers/test_ernie45_moe_tool_parser.py (tool_call_with_content_before): a
# reasoning close the format has no place for, followed by whitespace and a call. The call's
# opening spelling (``\n<tool_call>``) begins inside the longest spelling found there
# (``</think>\n``): it wins, and the ``</think>`` before it is still stray, as it is before
# text or right before the call (the diagnostic was lost).
@pytest.mark.parametrize(
    ("template", "text", "at"),
    [
        (
            "Baidu-ERNIE-4.5-21B-A3B-Thinking",
            'R\n</think>\n\nI need two tools.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n',
            30,
        ),
        ("NVIDIA-Nemotron-Nano-9B-v2", 'foo</think>\n<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>', 3),
    ],
)
def test_a_stray_reasoning_close_before_whitespace_and_a_call(template: str, text: str, at: int) -> None:
    codec = codec_for(template)
    prompt = codec.render([{"role": "user", "content": "/no_think hi"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both(template, text, tools=TOOLS, prompt=prompt)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert [(d.kind, d.position) for d in result.diagnostics] == [("stray_delimiter", at)]
    assert "</think>" in (result.message.content or "")


# vLLM tests/tool_parsers/test_qwen3_xml_coder_shared.py
# (two_tools_second_with_out_of_schema_nested_literal): a call, then a call whose value quotes a
# call's end. Whether the first call's closing tag ends its value is judged by what follows it,
# which reads the later call up to its end: that is its first end that the next call, the
# turn's end or the text's end follows, not one that text of its value follows (the first call
# swallowed the second, or both were lost with the first's tool unknown).
NESTED = 'template = """\n<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>\n"""'
WRITE_FILE = {"name": "write_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}
FOO = {"name": "foo", "parameters": {"type": "object", "properties": {"bar": {"type": "string"}}}}


@pytest.mark.parametrize(
    ("template", "text", "offered", "expected", "content"),
    [
        (
            "Qwen-Qwen3-Coder",
            "<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>\n\n"
            f"<tool_call>\n<function=write_file>\n<parameter=path>\nfixture.py\n</parameter>\n<parameter=content>\n{NESTED}\n</parameter>\n</function>\n</tool_call>",
            [WRITE_FILE],
            [("write_file", {"path": "fixture.py", "content": NESTED})],
            "<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>",
        ),
        (
            "Qwen-Qwen3-Coder",
            "<tool_call>\n<function=foo>\n<parameter=bar>baz</parameter>\n</function>\n</tool_call>\n"
            "<tool_call>\n<function=foo>\n<parameter=bar>see </function> here</parameter>\n</function>\n</tool_call>",
            [FOO],
            [("foo", {"bar": "baz"}), ("foo", {"bar": "see </function> here"})],
            None,
        ),
        (
            "ZhipuAI-GLM-4.6",
            "<tool_call>foo\n<arg_key>bar</arg_key>\n<arg_value>baz</arg_value>\n</tool_call>"
            "<tool_call>foo\n<arg_key>bar</arg_key>\n<arg_value>see </tool_call> here</arg_value>\n</tool_call>",
            [FOO],
            [("foo", {"bar": "baz"}), ("foo", {"bar": "see </tool_call> here"})],
            None,
        ),
        (
            "MiniMax-M2",
            '<minimax:tool_call>\n<invoke name="foo">\n<parameter name="bar">baz</parameter>\n</invoke>\n'
            '<invoke name="foo">\n<parameter name="bar">see </invoke> here</parameter>\n</invoke>\n</minimax:tool_call>',
            [FOO],
            [("foo", {"bar": "baz"}), ("foo", {"bar": "see </invoke> here"})],
            None,
        ),
    ],
)
def test_a_later_call_quoting_a_calls_end_keeps_both_calls(
    template: str, text: str, offered: list[dict[str, Any]], expected: list[tuple[str, Any]], content: str | None
) -> None:
    tools = [{"type": "function", "function": tool} for tool in offered]
    result = parse_both(template, text, tools=tools, reasoning=False)
    assert calls(result) == expected
    assert result.message.content == content and result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ([] if content is None else ["unknown_tool"])


# llama.cpp tests/test-chat.cpp (LFM2, cut short): a list of Python calls the text ends in
# before its closing bracket. The calls written whole stand, the last one too (it was lost, and
# a list of one call gave none, the whole text content with `malformed_tool_call`), and a call
# the text ends in is a call cut short (it was content, with `malformed_tool_call`).
@pytest.mark.parametrize("template", ["LiquidAI-LFM2.5-Instruct", "vLLM-Llama-4-pythonic"])
@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("[get_time(zone=1)", [("get_time", {"zone": 1})]),
        ("[get_time(zone=1), f(a=1, b='x')", [("get_time", {"zone": 1}), ("f", {"a": 1, "b": "x"})]),
        # (A call the text ends in is a call cut short, as in any other syntax: its arguments
        # written whole before the cut, the last one's value so far where it reads as one.)
        ("[get_time(zone=", [("get_time", {})]),
        ("[get_time(zone=1), f(a=1", [("get_time", {"zone": 1}), ("f", {"a": 1})]),
        ("[get_time(zone=1), f(a=1, b='x", [("get_time", {"zone": 1}), ("f", {"a": 1})]),
    ],
)
def test_a_list_of_python_calls_cut_short_keeps_its_whole_calls(template: str, written: str, expected: list[tuple[str, Any]]) -> None:
    opening = "<|tool_call_start|>" if "LFM2" in template else ""
    result = parse_both(template, opening + written, tools=TOOLS)
    assert calls(result) == expected and result.message.content is None
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


# Ollama's gemma4_test.go (ToolResponseContinuationStartsInThinking): Gemma 4 answers a call in
# the model's own turn, and its 2026-07 templates open the thought channel after a tool's
# result (``<tool_response|><|channel>thought\n``) with no header between. The prompt's state
# is read from the end of the tool's turn too, not only from the last assistant header: the
# completion starts inside the reasoning (it was content, `</channel|>` stray).
@pytest.mark.parametrize("template", ["Google-gemma-4-31B-it-2026-07", "Google-gemma-4-E2B-it-2026-07"])
def test_gemma_reasoning_opened_after_a_tools_result(template: str) -> None:
    codec = codec_for(template)
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}]
    conversation = [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "ls", "arguments": {}}}]},
        {"role": "tool", "content": "go.mod\ngo.sum\n"},
    ]
    prompt = codec.render(conversation, tools=tools, add_generation_prompt=True, enable_thinking=True)
    assert prompt.endswith("<tool_response|><|channel>thought\n")
    assert codec.prompt_state(prompt).state == "reasoning"
    result = parse_both(template, "The user asked for files.<channel|>go.mod and go.sum", tools=tools, prompt=prompt)
    assert result.message.reasoning_content == "The user asked for files."
    assert result.message.content == "go.mod and go.sum" and not result.diagnostics


# llama.cpp test-chat.cpp (Functionary v3.2, `>>>recipient\n…`): the prompt writes the first
# `>>>`; `all` opens the text to the user, a function's name a call whose arguments run to the
# next `>>>`. The peg tests write the first `>>>` again, as a model that repeats the prompt's
# mark does; a newline before a later mark is the mark's. (llama.cpp reads the `python`
# recipient's raw code as a call of `python` with `{"code": …}`: chatcodec reads a recipient
# that is no tool of the request as text, with `unknown_tool`.)
@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("all\nHello, world!\nnono\nWhat's up?>>>special_function\n{\"arg1\": 1}\n", "Hello, world!\nnono\nWhat's up?", [("special_function", {"arg1": 1})]),
        ("all\nHello, world!\nnono\nWhat's up?\n>>>special_function\n{\"arg1\": 1}\n", "Hello, world!\nnono\nWhat's up?", [("special_function", {"arg1": 1})]),
        (">>>all\nHello, world!\nWhat's up?", "Hello, world!\nWhat's up?", []),
        (">>>special_function\n{\"arg1\": 1}", None, [("special_function", {"arg1": 1})]),
        ("special_function\n{\"arg1\": 1}\n>>>special_function\n{\"arg1\": 2}", None, [("special_function", {"arg1": 1}), ("special_function", {"arg1": 2})]),
        # (Text to the user after a call, in a part of its own, as llama.cpp's parser reads it.)
        ("all\nHi>>>special_function\n{\"arg1\": 1}>>>all\nDone.", "HiDone.", [("special_function", {"arg1": 1})]),
    ],
)
def test_functionary_v3_2_recipients(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    template = "MeetKai-functionary-medium-v3.2"
    tools = [{"type": "function", "function": {"name": "special_function", "parameters": {"type": "object", "properties": {"arg1": {"type": "integer"}}}}}]
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], tools=tools, add_generation_prompt=True)
    assert prompt.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n>>>")
    result = parse_both(template, text, prompt=prompt, tools=tools)
    assert (result.message.content, calls(result)) == (content, expected)
    assert result.diagnostics == [] and result.finish_reason == ("tool_calls" if expected else "stop")
    python = parse_both(template, "python\n# This is a program:\nprint('hey')", prompt=prompt, tools=tools)
    assert python.message.content == "python\n# This is a program:\nprint('hey')" and calls(python) == []
    assert "unknown_tool" in [d.kind for d in python.diagnostics]


# A call's opening and a name, then the model's end token, in the syntaxes whose calls run to
# the next call or the end (Functionary v3.2's recipient after the prompt's `>>>`, Mistral's
# `[TOOL_CALLS]NAME` with no `[ARGS]`): no call, so the text is content with
# `malformed_tool_call`, and the end token is the end, finish `stop`. Before, the end token
# was in the content and the finish `length`.
@pytest.mark.parametrize(
    ("template", "text", "content"),
    [
        ("MeetKai-functionary-medium-v3.2", "Hello there.<|eot_id|>", "Hello there."),
        ("Mistral-Small-3.2-24B-Instruct-2506", "[TOOL_CALLS]get_weather</s>", "[TOOL_CALLS]get_weather"),
    ],
)
def test_a_name_the_end_token_follows_is_no_call_and_the_end_is_read(template: str, text: str, content: str) -> None:
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    result = parse_both(template, text, prompt=prompt, tools=TOOLS)
    assert (result.message.content, calls(result), result.finish_reason) == (content, [], "stop")
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert result.spans[-1].kind == "delimiter" and text.endswith(result.span_text(result.spans[-1]))


# Functionary v2.2 (no peer reads it; the form its template writes): the prompt writes the first
# `<|recipient|>`; each later part is a message of its own, `<|from|>assistant\n<|recipient|>…`.
@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("all\n<|content|>Hello there.<|stop|>", "Hello there.", []),
        (
            "all\n<|content|>Let me look.\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{\"city\": \"Paris\"}"
            "\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{\"city\": \"Rome\"}<|stop|>",
            "Let me look.",
            [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        ),
        ("get_weather\n<|content|>{\"city\": \"Paris\"}\n<|from|>assistant\n<|recipient|>all\n<|content|>Done.<|stop|>", "Done.", [("get_weather", {"city": "Paris"})]),
    ],
)
def test_functionary_v2_recipients(text: str, content: str | None, expected: list[tuple[str, Any]]) -> None:
    template = "MeetKai-functionary-medium-v2.2"
    prompt = codec_for(template).render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert prompt.endswith("<|from|>assistant\n<|recipient|>")
    result = parse_both(template, text, prompt=prompt, tools=TOOLS)
    assert (result.message.content, calls(result)) == (content, expected)
    assert result.diagnostics == [] and result.finish_reason == ("tool_calls" if expected else "stop")


# vLLM tests/tool_parsers/test_mistral_tool_parser.py (v11_without_args_skipped): a name with no
# arguments after it is no call; the diagnostic says what is missing, not that no name was found.
def test_a_mistral_name_with_no_arguments_is_content_and_says_so() -> None:
    text = "[TOOL_CALLS]toolname_no_args"
    result = parse_both("Mistral-Small-3.2-24B-Instruct-2506", text)
    assert result.message.content == text and not result.message.tool_calls
    assert [(d.kind, d.message) for d in result.diagnostics] == [
        ("malformed_tool_call", "the tool call's name is followed by no arguments; the block is kept as content")
    ]
    bare = parse_both("Mistral-Small-3.2-24B-Instruct-2506", "[TOOL_CALLS]")
    assert [d.message for d in bare.diagnostics] == ["no tool name was found; the block is kept as content"]


# vLLM's example templates for Mistral 7B v0.3 (examples/tool_chat_template_mistral_official and
# _parallel): a plain answer begins with a space, a call's turn with "[TOOL_CALLS] [" and none.
# The space was taken for the header of every answer, and the calls read from after the first
# space in "[TOOL_CALLS] [": no syntax read them back, and a bare JSON list was guessed.
@pytest.mark.parametrize("template", ["vLLM-Mistral-official", "vLLM-Mistral-parallel"])
def test_vllm_mistral_templates_read_their_calls(template: str) -> None:
    assert codec_for(template).describe()["calls"]["syntax"] == "mistral_list"
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123xyz"}]</s>'
    result = parse_both(template, text)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.tool_calls[0].id == "abc123xyz"  # type: ignore[index]
    assert (result.message.content, result.finish_reason, result.diagnostics) == (None, "tool_calls", [])
    plain = parse_both(template, " It is sunny.</s>")
    assert (plain.message.content, plain.finish_reason) == ("It is sunny.", "stop")


# vLLM's example templates for `--tool-call-parser pythonic` (Llama 3.2, ToolACE-8B) render past
# calls with their values unquoted, which no syntax reads back; their tools prompt asks for
# "[func_name1(params_name1=params_value1, ...)]", which is what the model writes.
@pytest.mark.parametrize("template", ["vLLM-Llama-3.2-pythonic", "vLLM-ToolACE"])
def test_pythonic_calls_a_tools_prompt_asks_for(template: str) -> None:
    codec = codec_for(template)
    assert codec.describe()["calls"]["syntax"] == "pythonic_list"
    prompt = codec.render([{"role": "user", "content": "Weather in Paris?"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both(template, '[get_weather(city="Paris"), get_time(zone=\'CET\')]<|eot_id|>', prompt=prompt)
    assert calls(result) == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]
    assert (result.message.content, result.finish_reason, result.diagnostics) == (None, "tool_calls", [])
    plain = parse_both(template, "It is sunny.<|eot_id|>", prompt=prompt)
    assert (plain.message.content, plain.finish_reason, plain.message.tool_calls) == ("It is sunny.", "stop", None)


# vLLM tests/tool_parsers/test_gemma4_regex_and_bare_calls.py: Gemma 4 writes a call without
# its <|tool_call> tag at times, as the whole answer or right after its thought channel. Where
# no text precedes it, "call:NAME{" opens a call (noncanonical) that ends with the text, its
# closing tag or the turn's end; after prose, "call:" is text.
GEMMA_QUOTE = '<|"|>'


@pytest.mark.parametrize("template", ["Google-gemma-4-31B-it", "Google-gemma-4-E2B-it-2026-07"])
@pytest.mark.parametrize(
    ("text", "reasoning", "expected"),
    [
        (f"<channel|>call:bash{{command:{GEMMA_QUOTE}ls{GEMMA_QUOTE}}}", None, [("bash", {"command": "ls"})]),
        (
            f"<|channel>thought\nI need to read the entry source file.\n<channel|>call:bash{{command:{GEMMA_QUOTE}cat /work/src/entry.c{GEMMA_QUOTE}}}",
            "I need to read the entry source file.",
            [("bash", {"command": "cat /work/src/entry.c"})],
        ),
        (f"call:web-search{{query:{GEMMA_QUOTE}gemma 4 release{GEMMA_QUOTE}}}", None, [("web-search", {"query": "gemma 4 release"})]),
        (f"call:fs.read_file{{path:{GEMMA_QUOTE}/work/Makefile{GEMMA_QUOTE}}}", None, [("fs.read_file", {"path": "/work/Makefile"})]),
        ("call:a{x:1}call:b{y:2}<turn|>", None, [("a", {"x": 1}), ("b", {"y": 2})]),
        ("call:a{x:1}<tool_call|>", None, [("a", {"x": 1})]),
    ],
)
def test_gemma_calls_written_without_their_opening_tag(
    template: str, text: str, reasoning: str | None, expected: list[tuple[str, Any]]
) -> None:
    result = parse_both(template, text)
    assert calls(result) == expected
    assert (result.message.reasoning_content or None, result.message.content) == (reasoning, None)
    assert result.finish_reason == "tool_calls"
    assert [d.kind for d in result.diagnostics] == ["noncanonical"]


@pytest.mark.parametrize(
    ("text", "finish", "kinds"),
    [
        (f"some prose\ncall:bash{{command:{GEMMA_QUOTE}make{GEMMA_QUOTE}}}", "stop", ["stray_delimiter"] * 3),
        ("call: me when you land", "stop", ["malformed_tool_call"]),
        ("calling is free", "stop", []),
        ("call:get_weat", "length", ["unclosed_tool_call", "malformed_tool_call"]),
    ],
)
def test_gemma_bare_call_words_that_are_no_call_stay_text(text: str, finish: str, kinds: list[str]) -> None:
    result = parse_both("Google-gemma-4-31B-it", text)
    assert (result.message.content, result.message.tool_calls) == (text, None)
    assert result.finish_reason == finish
    assert [d.kind for d in result.diagnostics] == kinds


# SGLang test_pythonic_detector.py (dict and list arguments): a Python literal keeps the type the
# model wrote it in, whatever the schema says; a number written as a string becomes the number a
# numeric parameter asks for. (A dict for a string parameter was written as JSON text before.)
def test_python_literals_keep_their_type() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}},
            },
        }
    ]
    text = "[search(query={'key': 'value', 'nested': {'a': 1}}, limit='5'), search(query=['a', 'b'], limit=2)]"
    result = parse_both("vLLM-Llama-4-pythonic", text, tools=tools)
    assert calls(result) == [
        ("search", {"query": {"key": "value", "nested": {"a": 1}}, "limit": 5}),
        ("search", {"query": ["a", "b"], "limit": 2}),
    ]
    assert not result.diagnostics


# Ollama model/parsers/minimaxm2_test.go ("parameter with newlines (should trim)"), SGLang's
# MiniMax-M2 detector: a value written on a line of its own is the text between the newlines,
# which are its tags'. A second newline, or one inside the value, is the value's.
@pytest.mark.parametrize(
    ("value", "expected"),
    [("\nTokyo\n", "Tokyo"), ("Tokyo", "Tokyo"), ("Tokyo\n", "Tokyo"), ("\n\nTo\nkyo\n\n", "\nTo\nkyo\n")],
)
def test_minimax_m2_value_on_a_line_of_its_own(value: str, expected: str) -> None:
    text = f'<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">{value}</parameter>\n</invoke>\n</minimax:tool_call>'
    result = parse_both("MiniMax-M2", text)
    assert calls(result) == [("get_weather", {"location": expected})]
    assert not result.diagnostics and result.finish_reason == "tool_calls"


# A Python call that names a keyword twice (`f(t=1, t=2)`) is no call Python compiles, and
# reading it would lose one value: the block is text, malformed, as any block that is no call.
def test_a_python_call_with_a_keyword_written_twice_is_no_call() -> None:
    text = "<|tool_call_start|>[f(t=5123, t=6)]<|tool_call_end|>"
    result = parse_both("LiquidAI-LFM2.5-8B-A1B", text)
    assert result.message.tool_calls is None and result.message.content == text
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]


# A list of calls whose last object the closing tag cuts inside a member other than the
# arguments, or whose object breaks in one: the member's text is content, not lost with the call.
@pytest.mark.parametrize(
    ("template", "text", "content"),
    [
        ("AI21-Jamba-Large-1.6", '<tool_calls>[{"name":"f","note"</tool_calls>', '"note"'),
        ("MiniMax-M1", '<tool_calls>\n{"name":"f","note"</tool_calls>', '"note"'),
        ("Mistral-7B-Instruct-v0.3-jsonschema", '[TOOL_CALLS][{"name":"f","":[],"note",', '"note",'),
    ],
)
def test_a_list_cut_inside_a_member_keeps_its_text(template: str, text: str, content: str) -> None:
    result = parse_both(template, text)
    assert calls(result) == [("f", {})]
    assert result.message.content == content
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call", "unexpected_text"]


# A parameter's name and then the call's end, no value (GLM `<arg_key>k</arg_key></tool_call>`):
# the call is malformed, and the parameter's tags and name are content, not lost with it.
def test_a_parameter_name_with_no_value_is_kept_as_content() -> None:
    text = "Hi<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>note</arg_key>\n</tool_call>"
    result = parse_both("ZhipuAI-GLM-4.6", text)
    assert calls(result) == [("f", {"a": 1})]
    assert result.message.content == "Hi<arg_key>note</arg_key>\n"
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call", "unexpected_text"]
    # Found by fuzzing: tags of the wrong kind after the name (``city</arg_value><arg_value>``)
    # are part of it, up to the last tag; what stands after that tag is the name left with no
    # value, and is content too, where it was lost.
    swapped = "Hi<tool_call>get_weather<arg_key>city</arg_value><arg_value>Tokyo</arg_key></tool_call>"
    result = parse_both("ZhipuAI-GLM-4.7-Flash", swapped)
    assert calls(result) == [("get_weather", {})]
    assert result.message.content == "Hicity</arg_value><arg_value>Tokyo</arg_key>"
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call", "unexpected_text"]
