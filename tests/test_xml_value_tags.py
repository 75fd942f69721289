"""XML parameter values that spell the format's own tags (a file being written that holds a tool
call, code about the tags): a tag in a value ends it only where what follows reads as the rest
of the call. Cases from vLLM's tests (tests/tool_parsers/test_qwen3coder_tool_parser.py,
test_glm47_moe_tool_parser.py), each read whole and one character at a time."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parsing_support import feed_in_chunks, normalized
from parsing_support import parse_both as parse_both_ways
from template_corpus import CORPUS, special_tokens

import chatcodec
from chatcodec.parse.stream import ParseResult

QWEN = "Qwen-Qwen3-Coder"
GLM = "ZhipuAI-GLM-4.7-Flash"


def tool(name: str, *keys: str) -> dict[str, Any]:
    properties = {key: {"type": "string"} for key in keys}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


WRITE_FILE = [tool("write_file", "path", "content"), tool("log", "msg")]
RECORD = [tool("record_value", "value", "path"), tool("get_weather", "city", "date")]


@cache
def codec_for(template: str) -> chatcodec.Codec:
    path = CORPUS / f"{template}.jinja"
    return chatcodec.load(path, special_tokens=special_tokens(path))


def parse_both(template: str, text: str, tools: list[dict[str, Any]] | None, **options: Any) -> ParseResult:
    return parse_both_ways(codec_for(template), text, tools=tools, **options)


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.message.tool_calls or []]


def qwen_call(name: str, **values: str) -> str:
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in values.items())
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"


NESTED = qwen_call("write_file", path="literal/value.txt", content="hello")
QUOTED_CALL = f'doc = """\n{NESTED}\n"""'
PARAMETER_LINES = 'TOOL_CALL_TEMPLATE = """\n</parameter>\n<parameter=new_string>\n#!/usr/bin/env python3\n</parameter>\n"""'
STRUCTURAL_LINES = 'char_deltas = [\n    "<tool_call>\\n",\n    "<parameter=query>\\n",\n    "\\n</parameter>\\n",\n    "</function>\\n",\n]'
KEY_GIVEN = 'doc = """\n<parameter=path>\nliteral/value\n</parameter>\n"""'


@pytest.mark.parametrize(
    "content",
    [QUOTED_CALL, PARAMETER_LINES, STRUCTURAL_LINES, KEY_GIVEN, "doc = '<tool_call>example</tool_call>'"],
    ids=["whole-call", "parameter-lines", "structural-strings", "given-key", "call-tags"],
)
def test_a_value_that_spells_the_tags_keeps_them(content: str) -> None:
    text = qwen_call("write_file", path="fixture.py", content=content) + "\nDone, file written!"
    result = parse_both(QWEN, text, WRITE_FILE)
    assert calls(result) == [("write_file", {"path": "fixture.py", "content": content})]
    assert result.message.content == "\nDone, file written!"
    assert result.diagnostics == []


def test_a_call_after_one_whose_value_quotes_a_call_is_read() -> None:
    text = qwen_call("write_file", path="a.py", content=QUOTED_CALL) + "\n" + qwen_call("log", msg="done")
    result = parse_both(QWEN, text, WRITE_FILE)
    assert calls(result) == [("write_file", {"path": "a.py", "content": QUOTED_CALL}), ("log", {"msg": "done"})]


def test_without_tools_a_value_quoting_a_whole_call_is_still_read_whole() -> None:
    # (No schema says which keys the tool has: the stray closing tag after the quoted call's end
    # shows the value goes on.)
    text = qwen_call("write_file", path="a.py", content=QUOTED_CALL)
    result = parse_both(QWEN, text, None)
    assert calls(result) == [("write_file", {"path": "a.py", "content": QUOTED_CALL})]


@pytest.mark.parametrize(
    "value",
    [
        "left </arg_value> then </tool_call> as data more",
        "</arg_value>starts",
        "middle </arg_value> continues",
        "ends</arg_value>",
        "one </arg_value> two </arg_value> three",
        "left </arg_value> text <arg_key> <arg_value> </arg_key> <think> </think> <tool_call> </tool_call> right",
    ],
)
def test_glm_values_that_spell_the_tags(value: str) -> None:
    text = f"</think><tool_call>record_value<arg_key>value</arg_key><arg_value>{value}</arg_value></tool_call>after"
    result = parse_both(GLM, text, RECORD, prompt=codec_for(GLM).render([{"role": "user", "content": "hi"}], add_generation_prompt=True, tools=RECORD))
    assert calls(result) == [("record_value", {"value": value})]
    assert result.message.content == "after"


def test_glm_call_tags_in_a_value_with_no_name_after_the_opening() -> None:
    value = "close </tool_call> then open <tool_call>"
    text = f"<tool_call>get_weather<arg_key>city</arg_key><arg_value>{value}</arg_value></tool_call>"
    assert calls(parse_both(GLM, text, RECORD)) == [("get_weather", {"city": value})]


# What a tag in a value still ends: the malformed outputs the peers' tests read as calls.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The value's closing tag left out: the next parameter's tag ends it (vLLM,
        # test_extract_tool_calls_missing_closing_parameter_tag).
        (
            "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n<parameter=content>\nx\n</parameter>\n</function>\n</tool_call>",
            [("write_file", {"path": "a.py", "content": "x"})],
        ),
        # A key the tool does not have, whose own value ends well: the next parameter.
        (
            qwen_call("log", msg="hi", level="debug"),
            [("log", {"msg": "hi", "level": "debug"})],
        ),
        # A call whose last closing tag is left out, then the next call: two calls.
        (
            "<tool_call>\n<function=log>\n<parameter=msg>\nx\n</function>\n</tool_call>\n" + qwen_call("log", msg="y"),
            [("log", {"msg": "x"}), ("log", {"msg": "y"})],
        ),
    ],
    ids=["closing-left-out", "undeclared-key", "two-calls"],
)
def test_tags_that_end_a_value_still_do(text: str, expected: list[tuple[str, Any]]) -> None:
    assert calls(parse_both(QWEN, text, WRITE_FILE)) == expected


def test_a_closing_tag_with_text_after_it_and_none_later_ends_the_value() -> None:
    # Nothing later could end the value: the text after the tag is no part of the call.
    text = "<tool_call>\n<function=log>\n<parameter=msg>\nx\n</parameter>\nJUNK\n</function>\n</tool_call>"
    result = parse_both(QWEN, text, WRITE_FILE)
    assert calls(result) == [("log", {"msg": "x"})]
    assert [d.kind for d in result.diagnostics] == ["unexpected_text"]


def test_a_tag_held_from_the_prefill_is_the_prompts() -> None:
    # The prompt ends inside a value, after a tag only the completion tells the meaning of.
    prefill = "</think><tool_call>record_value<arg_key>value</arg_key><arg_value>x</arg_value></tool"
    codec = codec_for(GLM)
    for tools in (RECORD, [tool("other")]):
        result = codec.parse_detailed("_call>after", prefill=prefill, tools=tools)
        assert result.reassemble() == "_call>after"
        if tools is RECORD:
            assert calls(result) == [("record_value", {"value": "x"})]
            assert result.message.content == "after"
        else:  # (an unknown tool's call is text: only the completion's part of it)
            assert result.message.content == "_call>after"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_chunking_reads_quoted_tags_as_the_whole_text_does(data: st.DataObject) -> None:
    pieces = ["</parameter>\n", "<parameter=path>\n", "<parameter=level>\n", "</function>\n", "</tool_call>\n", "<tool_call>\n<function=log>\n", "text ", "\n"]
    value = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=8), label="value"))
    text = qwen_call("write_file", path="a.py", content=value) + data.draw(st.sampled_from(["", "\nafter", "\n" + qwen_call("log", msg="m")]))
    tools = data.draw(st.sampled_from([WRITE_FILE, None]))
    codec = codec_for(QWEN)
    whole = codec.parse_detailed(text, tools=tools)
    assert whole.reassemble() == text
    sizes = data.draw(st.lists(st.integers(1, 24), min_size=1, max_size=6), label="chunks")
    _, streamed = feed_in_chunks(codec, text, sizes, tools=tools)
    assert normalized(streamed.message) == normalized(whole.message)
    assert streamed.diagnostics == whole.diagnostics


# A call's name never runs into another call's opening: prose that quotes the opening tag
# before the real call keeps it as text (DSML's case: tests/test_peer_cases_syntaxes.py).
@pytest.mark.parametrize(
    ("template", "text", "content"),
    [
        (GLM, "Use <tool_call> tags. <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>", "Use <tool_call> tags. "),
        (QWEN, "Write <tool_call> like this:\n" + qwen_call("get_weather", city="Paris"), "Write <tool_call> like this:"),
    ],
)
def test_a_quoted_opening_tag_before_a_call_is_text(template: str, text: str, content: str) -> None:
    result = parse_both(template, text, RECORD)
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == content
