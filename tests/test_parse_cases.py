"""Hand-written parsing cases per family, in the spirit of the public parser suites of vLLM,
SGLang and llama.cpp. Every case is checked one-shot and in several chunkings."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from parsing_support import feed_in_chunks, normalized, summarize

import chatcodec
from chatcodec import ParseError
from chatcodec.events import Diagnostic, Finish, ToolCallStart

QWEN_CALL = '\n<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'
DS_CALL = "<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>"
DS_CALLS = "<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>"
DS_END = "<｜end▁of▁sentence｜>"


def qcall(name: str, args: str) -> str:
    return QWEN_CALL.format(name=name, args=args)


def dcalls(*calls: tuple[str, str]) -> str:
    return DS_CALLS.format(calls="".join(DS_CALL.format(name=n, args=a) for n, a in calls))


# (family, completion, parse options, expected message, expected finish, expected diagnostic kinds)
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], str, list[str]]] = [
    # ---- qwen3 ----
    ("qwen3", "Hello there.", {}, {"content": "Hello there."}, "stop", []),
    ("qwen3", "Hello.<|im_end|>", {}, {"content": "Hello."}, "stop", []),
    ("qwen3", "<think>\nPonder.\n</think>\n\n", {}, {"content": "", "reasoning_content": "Ponder."}, "stop", []),
    (
        "qwen3",
        "<think>\nStep 1.\nStep 2.\n</think>\n\nThe answer is 4.<|im_end|>",
        {},
        {"content": "The answer is 4.", "reasoning_content": "Step 1.\nStep 2."},
        "stop",
        [],
    ),
    ("qwen3", "<think>\nStill thinking", {}, {"content": "", "reasoning_content": "Still thinking"}, "length", []),
    (
        "qwen3",
        "<tool_call>\n" + '{"name": "get_weather", "arguments": {"city": "Paris"}}' + "\n</tool_call><|im_end|>",
        {},
        {"content": None, "tool_calls": [("get_weather", '{"city": "Paris"}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "Let me check." + qcall("a", '{"x": 1}') + qcall("b", '{"y": [1, 2]}') + "<|im_end|>",
        {},
        {"content": "Let me check.", "tool_calls": [("a", '{"x": 1}'), ("b", '{"y": [1, 2]}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "Before" + qcall("a", "{}") + "\nbetween" + qcall("b", "{}") + "\nafter",
        {},
        {"content": "Before\nbetween\nafter", "tool_calls": [("a", "{}"), ("b", "{}")]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        qcall("echo", r'{"text": "say \"hi\" and \\ back\\slash", "n": "\u00e9"}'),
        {},
        {"content": None, "tool_calls": [("echo", r'{"text": "say \"hi\" and \\ back\\slash", "n": "\u00e9"}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        qcall("code", '{"src": "if (a) { b({c: [1]}); } </tool_call> <tool_call>"}'),
        {},
        {"content": None, "tool_calls": [("code", '{"src": "if (a) { b({c: [1]}); } </tool_call> <tool_call>"}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "<tool_call>\n" + '{"arguments": {"q": "日本語 😀"}, "name": "search"}' + "\n</tool_call>",
        {},
        {"content": None, "tool_calls": [("search", '{"q": "日本語 😀"}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "<tool_call>\n" + '{"name": "now"}' + "\n</tool_call>",
        {},
        {"content": None, "tool_calls": [("now", "{}")]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "<tool_call>\n" + '{"name": "f", "arguments": "{\\"a\\": 1}"}' + "\n</tool_call>",
        {},
        {"content": None, "tool_calls": [("f", '{"a": 1}')]},
        "tool_calls",
        [],
    ),
    (
        "qwen3",
        "<tool_call>\n" + '{"name": "f", "arguments": {"a": 1',
        {},
        {"content": None, "tool_calls": [("f", '{"a": 1')]},
        "length",
        ["unclosed_tool_call"],
    ),
    (
        "qwen3",
        "Hi <tool_call>\n{not json}\n</tool_call>",
        {},
        {"content": "Hi <tool_call>\n{not json}\n</tool_call>"},
        "stop",
        ["malformed_tool_call"],
    ),
    (
        "qwen3",
        "<tool_call>\n" + '{"name": "f", "arguments": {"a": }}' + "\n</tool_call>",
        {},
        {"content": None, "tool_calls": [("f", '{"a": }')]},
        "tool_calls",
        ["malformed_tool_call"],
    ),
    (
        "qwen3",
        "<think>\nI will call it.\n" + "<tool_call>\n" + '{"name": "f", "arguments": {}}' + "\n</tool_call>",
        {},
        {"content": None, "reasoning_content": "I will call it.", "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["tool_call_in_reasoning"],
    ),
    (
        "qwen3",
        "Use </think> or </tool_call> literally.",
        {},
        {"content": "Use </think> or </tool_call> literally."},
        "stop",
        ["stray_delimiter", "stray_delimiter"],
    ),
    (
        "qwen3",
        qcall("rm_rf", "{}"),
        {"tools": ["get_weather"]},
        {"content": qcall("rm_rf", "{}")},
        "stop",
        ["unknown_tool"],
    ),
    (
        "qwen3",
        "Bye.<|im_end|>garbage",
        {},
        {"content": "Bye."},
        "stop",
        ["unexpected_text"],
    ),
    (
        "qwen3",
        # Text after the call's object: the call is whole, the text is content.
        "<tool_call>\n" + '{"name": "f", "arguments": {}}"' + "\n</tool_call><|im_end|>",
        {},
        {"content": '"', "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["unexpected_text"],
    ),
    # prompt-aware: the prompt closed the think block (enable_thinking=False)
    (
        "qwen3",
        "Plain answer<|im_end|>",
        {"prompt": "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
        {"content": "Plain answer"},
        "stop",
        [],
    ),
    # prompt-aware: the prompt opened the think block (thinking models' forced prefix)
    (
        "qwen3",
        "hmm\n</think>\n\nok",
        {"prompt": "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"},
        {"content": "ok", "reasoning_content": "hmm"},
        "stop",
        [],
    ),
    # A call's object that stops being JSON between its members: the call stands, malformed,
    # and the text from the member the JSON broke in is content, not lost with the call.
    (
        "qwen3",
        '<tool_call>\n{"name": "f", "arguments": {"a": 1} "b": 2}\n</tool_call>',
        {},
        {"content": '"b": 2}', "tool_calls": [("f", '{"a": 1}')]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    (
        "qwen3",
        '<tool_call>\n{"name": "f", "arguments" {"a": 1}}\n</tool_call>',
        {},
        {"content": '"arguments" {"a": 1}}', "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    (
        "qwen3",
        'Sure.<tool_call>\n{"name": "f", "arguments": {"a": 1}, oops}\n</tool_call>',
        {},
        {"content": "Sure.oops}", "tool_calls": [("f", '{"a": 1}')]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    # A value that is no JSON (`"x":}`, a bare word) breaks the object there: before, such a
    # call read as clean.
    (
        "qwen3",
        '<tool_call>\n{"name": "f", "arguments": {}, "x":}\n</tool_call>',
        {},
        {"content": '"x":}', "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    (
        "qwen3",
        '<tool_call>\n{"name": "f", "arguments": nul, "x": 1}\n</tool_call>',
        {},
        {"content": ', "x": 1}', "tool_calls": [("f", "nul")]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    # A call's closing tag inside a member other than the arguments: the member's text is
    # content (arguments cut short stay the call's; a member the text ends in was cut short
    # with the call, and stays in its span).
    (
        "qwen3",
        '<tool_call>{"name": "f", "note"</tool_call>',
        {},
        {"content": '"note"', "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["malformed_tool_call", "unexpected_text"],
    ),
    (
        "qwen3",
        '<tool_call>{"name": "f", "arguments": {"a": 1}, "no',
        {},
        {"content": None, "tool_calls": [("f", '{"a": 1}')]},
        "length",
        ["unclosed_tool_call"],
    ),
    (
        "qwen3",
        '<tool_call>{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}</tool_call>',
        {},
        {"content": None, "tool_calls": [("f", '{"a": 1}')]},
        "tool_calls",
        ["malformed_tool_call"],
    ),
    (
        "qwen3",
        '<tool_call>{"name": "f", "name": "g", "arguments": {}}</tool_call>',
        {},
        {"content": None, "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["malformed_tool_call"],
    ),
    (
        "qwen3",
        '<tool_call>{"name": "f", "arguments":',
        {},
        {"content": None, "tool_calls": [("f", "{}")]},
        "length",
        ["unclosed_tool_call"],
    ),
    # ---- deepseek ----
    ("deepseek", "Just text." + DS_END, {}, {"content": "Just text."}, "stop", []),
    (
        "deepseek",
        "Reason here.</think>Answer." + DS_END,
        {"reasoning": True},
        {"content": "Answer.", "reasoning_content": "Reason here."},
        "stop",
        [],
    ),
    # no prompt: leading text is reasoning if </think> follows it, else content
    (
        "deepseek",
        "Let me think.</think>The answer is 4." + DS_END,
        {},
        {"content": "The answer is 4.", "reasoning_content": "Let me think."},
        "stop",
        [],
    ),
    (
        "deepseek",
        "Thinking about it" + dcalls(("f", "{}")),
        {},
        {"content": "Thinking about it", "tool_calls": [("f", "{}")]},
        "tool_calls",
        [],
    ),
    # reasoning=False: the caller knows the output opens with content
    (
        "deepseek",
        "Use </think> literally.",
        {"reasoning": False},
        {"content": "Use </think> literally."},
        "stop",
        ["stray_delimiter"],
    ),
    # Cut off after the section's opening tag: nothing is lost, and the output was cut short.
    (
        "deepseek",
        "Cut off <｜tool▁calls▁begin｜>",
        {},
        {"content": "Cut off <｜tool▁calls▁begin｜>"},
        "length",
        ["unclosed_tool_call"],
    ),
    (
        "deepseek",
        "Reason.</think>Answer.",
        {"prompt": "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think>"},
        {"content": "Answer.", "reasoning_content": "Reason."},
        "stop",
        [],
    ),
    (
        "deepseek",
        "Answer.",
        {"prompt": "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think></think>"},
        {"content": "Answer."},
        "stop",
        [],
    ),
    (
        "deepseek",
        "Checking." + dcalls(("get_weather", '{"city": "Paris"}')) + DS_END,
        {},
        {"content": "Checking.", "tool_calls": [("get_weather", '{"city": "Paris"}')]},
        "tool_calls",
        [],
    ),
    (
        "deepseek",
        dcalls(("a", '{"x": "<｜tool▁call▁end｜>"}'), ("b", "{}")),
        {},
        {"content": None, "tool_calls": [("a", '{"x": "<｜tool▁call▁end｜>"}'), ("b", "{}")]},
        "tool_calls",
        [],
    ),
    (
        "deepseek",
        "thinking <｜tool▁calls▁begin｜>" + DS_CALL.format(name="f", args="{}") + "<｜tool▁calls▁end｜>",
        {"reasoning": True},
        {"content": None, "reasoning_content": "thinking ", "tool_calls": [("f", "{}")]},
        "tool_calls",
        ["tool_call_in_reasoning"],
    ),
    (
        "deepseek",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": [1, 2",
        {},
        {"content": None, "tool_calls": [("f", '{"a": [1, 2')]},
        "length",
        ["unclosed_tool_call"],
    ),
    (
        "deepseek",
        dcalls(("f", "{oops}")),
        {},
        {"content": None, "tool_calls": [("f", "{oops}")]},
        "tool_calls",
        ["malformed_tool_call"],
    ),
    (
        "deepseek",
        dcalls(("f", "")),
        {},
        {"content": None, "tool_calls": [("f", "{}")]},
        "tool_calls",
        [],
    ),
    # ---- llama3_hermes ----
    ("llama3_hermes", "Hello!<|eot_id|>", {}, {"content": "Hello!"}, "stop", []),
    (
        "llama3_hermes",
        "On it." + qcall("lookup", '{"id": 7}') + "<|eot_id|>",
        {},
        {"content": "On it.", "tool_calls": [("lookup", '{"id": 7}')]},
        "tool_calls",
        [],
    ),
    (
        "llama3_hermes",
        qcall("a", "{}").lstrip("\n") + qcall("b", '{"k": "v"}'),
        {},
        {"content": None, "tool_calls": [("a", "{}"), ("b", '{"k": "v"}')]},
        "tool_calls",
        [],
    ),
    (
        "llama3_hermes",
        "<think>not a tag here</think>",
        {},
        {"content": "<think>not a tag here</think>"},
        "stop",
        [],
    ),
]


def _expected_openai(expected: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": expected.get("content")}
    if "reasoning_content" in expected:
        out["reasoning_content"] = expected["reasoning_content"]
    if "tool_calls" in expected:
        out["tool_calls"] = [
            {"id": "ID", "type": "function", "function": {"name": name, "arguments": arguments}}
            for name, arguments in expected["tool_calls"]
        ]
    return out


@pytest.mark.parametrize("family,text,options,expected,finish,diagnostics", CASES)
def test_case(
    family: str, text: str, options: dict[str, Any], expected: dict[str, Any], finish: str, diagnostics: list[str]
) -> None:
    codec = chatcodec.load(family)
    result = codec.parse_detailed(text, **options)
    assert normalized(result.message) == _expected_openai(expected)
    assert result.finish_reason == finish
    assert [d.kind for d in result.diagnostics] == diagnostics
    assert result.reassemble() == text
    for sizes in ([1], [2], [3, 1, 5], [7], [16]):
        events, chunked = feed_in_chunks(codec, text, sizes, **options)
        assert normalized(chunked.message) == normalized(result.message), sizes
        assert chunked.finish_reason == finish
        assert [(d.kind, d.position) for d in chunked.diagnostics] == [
            (d.kind, d.position) for d in result.diagnostics
        ]
        summary = summarize(events)
        assert summary["content"] == (result.message.content or "")
        assert summary["reasoning"] == (result.message.reasoning_content or "")
        for index, call in enumerate(result.message.tool_calls or []):
            assert summary["calls"][index]["arguments"] == call.function.arguments
            assert summary["calls"][index]["end"] == call.function.arguments
        assert isinstance(events[-1], Finish) and events[-1].reason == finish


@pytest.mark.parametrize("family,text,options,expected,finish,diagnostics", [c for c in CASES if c[5]])
def test_strict_mode_raises_with_position(
    family: str, text: str, options: dict[str, Any], expected: dict[str, Any], finish: str, diagnostics: list[str]
) -> None:
    codec = chatcodec.load(family)
    lenient = codec.parse_detailed(text, **options)
    with pytest.raises(ParseError) as caught:
        codec.parse(text, strict=True, **options)
    assert caught.value.kind == lenient.diagnostics[0].kind
    assert caught.value.position == lenient.diagnostics[0].position
    assert f"at character {lenient.diagnostics[0].position}" in str(caught.value)


def test_parsed_arguments_are_available_beside_the_raw_text() -> None:
    codec = chatcodec.load("qwen3")
    args = '{"b": 1,   "a": [true, null]}'
    message = codec.parse(qcall("f", args))
    call = message.tool_calls[0]
    assert call.function.arguments == args  # the model's own spacing and key order
    assert call.function.parsed_arguments == {"b": 1, "a": [True, None]}


def test_tool_call_ids_are_unique_and_stable_within_a_stream() -> None:
    codec = chatcodec.load("qwen3")
    parser = codec.stream()
    events = parser.feed(qcall("a", "{}") + qcall("b", "{}"))
    events += parser.close()
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ids = [s.id for s in starts]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    assert [c.id for c in parser.message.tool_calls] == ids


def test_diagnostic_positions_point_at_the_problem() -> None:
    codec = chatcodec.load("qwen3")
    text = "Intro text. " + "<tool_call>\n{broken\n</tool_call>"
    result = codec.parse_detailed(text)
    (diagnostic,) = result.diagnostics
    assert isinstance(diagnostic, Diagnostic)
    assert text[diagnostic.position :].startswith("<tool_call>")


def test_tools_given_as_definitions_filter_unknown_names() -> None:
    codec = chatcodec.load("qwen3")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    ok = codec.parse(qcall("get_weather", '{"city": "Oslo"}'), tools=tools)
    assert ok.tool_calls and json.loads(ok.tool_calls[0].function.arguments) == {"city": "Oslo"}
    rejected = codec.parse_detailed(qcall("other", "{}"), tools=tools)
    assert rejected.message.tool_calls is None
    assert [d.kind for d in rejected.diagnostics] == ["unknown_tool"]


def test_unsupported_template_says_so() -> None:
    codec = chatcodec.load("qwen3")
    plain = chatcodec.Codec(
        type(codec.template)(source="{% for m in messages %}{{ m.content }}{% endfor %}", name="plain")
    )
    assert plain.render([{"role": "user", "content": "x"}]) == "x"
    with pytest.raises(chatcodec.UnsupportedTemplateError, match="plain"):
        plain.parse("x")


def test_parser_state_follows_the_text() -> None:
    codec = chatcodec.load("qwen3")
    parser = codec.stream()
    seen = []
    for delta in ["<think>\nhm", "\n</think>\n\nHi", "\n<tool_call>\n{\"name\": ", '"f"}\n</tool_call>', "<|im_end|>"]:
        parser.feed(delta)
        seen.append(parser.state)
    # "<|im_end|>" may still grow into "<|im_end|>\n", so it is held until close()
    assert seen == ["reasoning", "content", "tool_call", "content", "content"]
    parser.close()
    assert parser.state == "ended"
    deepseek = chatcodec.load("deepseek").stream()
    deepseek.feed("maybe reasoning")
    assert deepseek.state == "undecided"
    deepseek.feed("</think>")
    assert deepseek.state == "content" and deepseek.message.reasoning_content == "maybe reasoning"


def test_tool_definitions_of_every_accepted_shape_give_the_same_names_and_schemas() -> None:
    from types import MappingProxyType

    from chatcodec.messages import Tool, parse_tools, tool_names_and_schemas

    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}
    bare = {"name": "get_time", "description": "Now.", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}
    no_parameters = {"type": "function", "function": {"name": "ping"}}
    as_model = Tool.model_validate({"type": "function", "function": {"name": "as_model", "parameters": {
        "properties": {"n": {"type": "number"}}}}})
    read_only = MappingProxyType({"type": "function", "function": {"name": "read_only", "parameters": {"properties": []}}})
    tools = ["by_name", weather, bare, no_parameters, as_model, read_only]
    names, schemas = tool_names_and_schemas(tools)
    assert names == ["by_name", "get_weather", "get_time", "ping", "as_model", "read_only"]
    # The same as the validated definitions say, written out by hand:
    assert schemas == {
        "get_weather": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "get_time": {"tz": {"type": "string"}},
        "ping": {},
        "as_model": {"n": {"type": "number"}},
        "read_only": {},  # properties that are not an object give no schemas
    }
    assert [tool.function.name for tool in parse_tools(tools[1:]) or []] == names[1:]
    # Names alone, in any iterable:
    assert tool_names_and_schemas(("a", "b")) == (["a", "b"], {})


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (["ok", {"type": "function", "function": {"name": ""}}], "tool 1: field 'function.name'"),
        ([{"type": "function", "function": {"name": "ok"}}, 7], "tool 1: expected an object, got int"),
        ({"type": "function", "function": {"name": "f"}}, "wrap the tool definition in a list"),
        ("get_weather", "tools must be a list, not str"),
    ],
)
def test_bad_tools_given_to_a_parser_are_named(tools: Any, message: str) -> None:
    codec = chatcodec.load("qwen3")
    with pytest.raises(chatcodec.InvalidMessageError, match=re.escape(message)):
        codec.parse(qcall("ok", "{}"), tools=tools)
    with pytest.raises(chatcodec.InvalidMessageError, match=re.escape(message)):
        codec.stream(tools=tools)


def test_plain_tool_definitions_are_read_without_building_models(monkeypatch: pytest.MonkeyPatch) -> None:
    from chatcodec.messages import Tool

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a model was built for a plain definition")

    monkeypatch.setattr(Tool, "model_validate", refuse)
    tools = [{"type": "function", "function": {"name": name, "description": "d", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}} for name in ("get_weather", "get_time")]
    codec = chatcodec.load("qwen3")
    assert codec.parse(qcall("get_time", "{}"), tools=tools).tool_calls
    assert codec.parse(qcall("other", "{}"), tools=tools).tool_calls is None
    parser = codec.stream(tools=tools)
    parser.feed(qcall("get_weather", '{"city": "Oslo"}'))
    parser.close()
    assert parser.message.tool_calls and parser.message.tool_calls[0].function.name == "get_weather"
