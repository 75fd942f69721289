"""Model families whose templates appeared in 2026 (in llama.cpp's `models/templates`): Tencent
Hy3, MiniCPM 5, MiniMax-M1, DeepSeek V4. Each output is read whole and one character at a time
(the two must agree); the expected messages were written by hand from the templates."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from parsing_support import parse_both as parse_both_ways
from template_corpus import HY3_BARE_SUFFIX, special_tokens

import chatcodec
from chatcodec.parse.stream import ParseResult

TEMPLATES = Path(__file__).resolve().parent / "templates"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "options": {"type": "object"}},
            },
        },
    }
]


@cache
def codec_for(template: str) -> chatcodec.Codec:
    path = TEMPLATES / f"{template}.jinja"
    return chatcodec.load(path, special_tokens=special_tokens(path))  # its end-of-sequence token too


def parse_both(template: str, text: str, **options: Any) -> ParseResult:
    return parse_both_ways(codec_for(template), text, tools=TOOLS, **options)


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.message.tool_calls or []]


def prompt(template: str, **kwargs: Any) -> str:
    return codec_for(template).render([{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True, **kwargs)


# -- Tencent Hy3 ------------------------------------------------------------------------------------

HY = ":opensource"


def hy_call(name: str, **arguments: str) -> str:
    parameters = "".join(
        f"<arg_key{HY}>{key}</arg_key{HY}>\n<arg_value{HY}>{value}</arg_value{HY}>\n" for key, value in arguments.items()
    )
    return f"<tool_call{HY}>{name}<tool_sep{HY}>\n{parameters}</tool_call{HY}>\n"


def test_hy3_reads_its_reasoning_and_its_section_of_calls() -> None:
    # reasoning_effort="high" leaves <think:opensource> open; its default closes it.
    assert prompt("Tencent-Hy3", reasoning_effort="high").endswith(f"<｜hy_Assistant{HY}｜><think{HY}>")
    assert prompt("Tencent-Hy3").endswith(f"<｜hy_Assistant{HY}｜><think{HY}></think{HY}>")
    text = (
        f"Two cities.</think{HY}>Checking.<tool_calls{HY}>\n"
        + hy_call("get_weather", city="Paris", days="3")
        + hy_call("get_weather", city="12", options='{"unit": "C"}')
        + f"</tool_calls{HY}><｜hy_eos{HY}｜>"
    )
    result = parse_both("Tencent-Hy3", text, prompt=prompt("Tencent-Hy3", reasoning_effort="high"))
    assert (result.message.reasoning_content, result.message.content) == ("Two cities.", "Checking.")
    # Typed by the schema: "12" stays the string the city is, "3" and the object are decoded.
    assert calls(result) == [
        ("get_weather", {"city": "Paris", "days": 3}),
        ("get_weather", {"city": "12", "options": {"unit": "C"}}),
    ]
    assert result.finish_reason == "tool_calls" and not result.diagnostics


def test_hy3_call_cut_short() -> None:
    text = f"<tool_calls{HY}>\n<tool_call{HY}>get_weather<tool_sep{HY}>\n<arg_key{HY}>city</arg_key{HY}>\n<arg_value{HY}>Par"
    result = parse_both("Tencent-Hy3", text, prompt=prompt("Tencent-Hy3"))
    assert calls(result) == [("get_weather", {"city": "Par"})]
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


def test_a_transcript_types_xml_values_by_the_tools_it_reads() -> None:
    # Hy3 writes its tools as JSON, which the transcript reads: a string parameter written
    # "123" stays a string, as a completion parsed with the tools reads it.
    codec = codec_for("Tencent-Hy3")
    parameters = {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": parameters}}]
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"code": "123", "n": 4}}}
    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    text = codec.render(conversation, tools=tools)
    transcript = codec.parse_transcript(text)
    assert transcript.tools == tools
    assert [json.loads(c.function.arguments) for c in transcript.messages[-1].tool_calls or []] == [{"code": "123", "n": 4}]


# -- MiniCPM 5 --------------------------------------------------------------------------------------


def test_minicpm5_reads_cdata_values_and_python_literals() -> None:
    # The template writes a value holding "<", "&" or a newline in CDATA, and any other
    # non-string value as Python writes it ({'unit': 'C'}), which the schema types.
    text = (
        "Sure.\n"
        '<function name="get_weather"><param name="city"><![CDATA[a <b> & "c"\nd]]></param>'
        '<param name="days">3</param><param name="options">{\'unit\': \'C\', \'exact\': True}</param></function>\n'
        '<function name="get_weather"><param name="city">x]]</param></function>'
    )
    result = parse_both("OpenBMB-MiniCPM5-1B", text, prompt=prompt("OpenBMB-MiniCPM5-1B"))
    assert result.message.content == "Sure."
    assert calls(result) == [
        ("get_weather", {"city": 'a <b> & "c"\nd', "days": 3, "options": {"unit": "C", "exact": True}}),
        ("get_weather", {"city": "x]]"}),
    ]
    assert result.finish_reason == "tool_calls" and not result.diagnostics


def test_minicpm5_renders_and_reads_back_a_value_with_markup() -> None:
    codec = codec_for("OpenBMB-MiniCPM5-1B")
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "<Paris> & co"}}}
    conversation = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    report = codec.roundtrip(conversation, tools=TOOLS)
    assert "<![CDATA[<Paris> & co]]>" in report.text
    assert report.text_survived
    [message] = [m for m in report.transcript.messages if m.tool_calls]
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "<Paris> & co"}  # type: ignore[index]


# -- MiniMax-M1 -------------------------------------------------------------------------------------


def m1_call(**arguments: Any) -> str:
    return json.dumps({"name": "get_weather", "arguments": arguments})


def test_minimax_m1_reads_one_object_a_line() -> None:
    text = f"Let me check.\n<tool_calls>\n{m1_call(city='Paris')}\n{m1_call(city='</tool_calls>', days=2)}\n</tool_calls>"
    result = parse_both("MiniMax-M1", text, prompt=prompt("MiniMax-M1"))
    assert result.message.content == "Let me check."
    # A closing tag inside a JSON string is text.
    assert calls(result) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "</tool_calls>", "days": 2})]
    assert result.finish_reason == "tool_calls" and not result.diagnostics


@pytest.mark.parametrize(
    ("body", "expected", "kinds"),
    [
        # Written as Jamba writes its calls, a JSON list: read, said so.
        (f"[{m1_call(city='Paris')}, {m1_call(city='Rome')}]", [{"city": "Paris"}, {"city": "Rome"}], ["noncanonical"]),
        # Objects with no newline between them, or a comma.
        (m1_call(city="Paris") + m1_call(city="Rome"), [{"city": "Paris"}, {"city": "Rome"}], []),
        (m1_call(city="Paris") + ",\n" + m1_call(city="Rome"), [{"city": "Paris"}, {"city": "Rome"}], []),
    ],
)
def test_minimax_m1_other_ways_of_writing_the_block(body: str, expected: list[dict[str, Any]], kinds: list[str]) -> None:
    result = parse_both("MiniMax-M1", f"<tool_calls>\n{body}\n</tool_calls>", prompt=prompt("MiniMax-M1"))
    assert calls(result) == [("get_weather", arguments) for arguments in expected]
    assert [d.kind for d in result.diagnostics] == kinds


def test_minimax_m1_text_after_the_objects_and_a_block_cut_short() -> None:
    result = parse_both("MiniMax-M1", f"<tool_calls>\n{m1_call(city='Paris')}\nthen\n</tool_calls>", prompt=prompt("MiniMax-M1"))
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.message.content == "\nthen" and [d.kind for d in result.diagnostics] == ["unexpected_text"]
    result = parse_both("MiniMax-M1", f"<tool_calls>\n{m1_call(city='Paris')}\n", prompt=prompt("MiniMax-M1"))
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


# vLLM tests/tool_parsers/test_minimax_tool_parser.py (invalid_json): a line that is no call's
# object among MiniMax-M1's lines. The model writes one object a line, so the lines after it are
# read still: each a call where it is one whole object, else content like the broken line. Before,
# the broken line ended the reading and the calls after it were content.
def test_minimax_m1_reads_on_after_a_broken_line() -> None:
    lines = [m1_call(city="Paris"), "{invalid json here}", m1_call(city="Rome"), '{"name": "get_weather", "arguments": {', m1_call(days=2)]
    text = "<tool_calls>\n" + "\n".join(lines) + "\n</tool_calls>"
    result = parse_both("MiniMax-M1", text, prompt=prompt("MiniMax-M1"))
    assert calls(result) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"}), ("get_weather", {"days": 2})]
    assert result.message.content == "{invalid json here}" + '{"name": "get_weather", "arguments": {'
    assert [(d.kind, d.position) for d in result.diagnostics] == [
        ("malformed_tool_call", text.index("{invalid")),
        ("malformed_tool_call", text.index('{"name": "get_weather", "arguments": {\n')),
    ]
    assert result.finish_reason == "tool_calls"


# -- DeepSeek V4 ------------------------------------------------------------------------------------


def test_deepseek_v4_section_of_calls() -> None:
    # V4 names its section tool_calls (V3.2: function_calls).
    text = (
        "\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">2</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls><｜end▁of▁sentence｜>"
    )
    result = parse_both("DeepSeek-V4", text, prompt=prompt("DeepSeek-V4"))
    assert calls(result) == [("get_weather", {"city": "Paris", "days": 2})]
    assert result.message.content is None and not result.diagnostics


@pytest.mark.parametrize(
    ("value", "written"),
    [
        # JSON goes into the arguments as the model wrote it, escapes and all.
        ('{"name": "\\ud800 Paris\\u00e9"}', '{"name": "\\ud800 Paris\\u00e9"}'),
        # A Python literal is decoded and written back as JSON.
        ("{'name': '\\ud800 Paris\\u00e9'}", '{"name": "\\ud800 Parisé"}'),
    ],
)
def test_a_decoded_lone_surrogate_is_written_back_as_its_escape(value: str, written: str) -> None:
    # A value written inside XML (``string="false"``) is decoded, and written into the
    # arguments. ``"\\ud800"`` decodes to a lone surrogate, which no UTF-8 can carry: written
    # back as itself, the message could not be sent. It is written back as the escape.
    text = (
        "\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
        f'<｜DSML｜parameter name="where" string="false">{value}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls><｜end▁of▁sentence｜>"
    )
    result = parse_both("DeepSeek-V4", text, prompt=prompt("DeepSeek-V4"))
    arguments = result.message.tool_calls[0].function.arguments  # type: ignore[index]
    assert arguments == '{"where": ' + written + "}"
    arguments.encode("utf-8")  # (raised UnicodeEncodeError)
    assert calls(result) == [("get_weather", {"where": {"name": "\ud800 Parisé"}})]


# -- Kimi K3 ----------------------------------------------------------------------------------------

K3_CALLS = (
    "<|open|>tools<|sep|>"
    '<|open|>call tool="get_weather" index="1"<|sep|>'
    '<|open|>argument key="city" type="string"<|sep|>12<|close|>argument<|sep|>'
    '<|open|>argument key="days" type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|>'
    '<|open|>call tool="get_weather" index="2"<|sep|>'
    '<|open|>argument key="options" type="object"<|sep|>{"unit": "C"}<|close|>argument<|sep|><|close|>call<|sep|>'
    "<|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>"
)


def test_kimi_k3_reasoning_answer_and_calls() -> None:
    # Its tags are <|open|>TAG<|sep|> … <|close|>TAG<|sep|>: the prompt opens the thinking
    # block, the answer has a response block of its own, and the calls follow it.
    assert prompt("Moonshot-Kimi-K3").endswith('<|open|>message role="assistant"<|sep|><|open|>think<|sep|>')
    text = "Two calls.<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|>" + K3_CALLS
    result = parse_both("Moonshot-Kimi-K3", text, prompt=prompt("Moonshot-Kimi-K3"))
    assert (result.message.reasoning_content, result.message.content) == ("Two calls.", "Checking.")
    # Each argument's own type says string or JSON.
    assert calls(result) == [("get_weather", {"city": "12", "days": 2}), ("get_weather", {"options": {"unit": "C"}})]
    assert result.finish_reason == "tool_calls" and not result.diagnostics


def test_kimi_k3_without_thinking() -> None:
    start = prompt("Moonshot-Kimi-K3", thinking=False)
    assert start.endswith('<|open|>message role="assistant"<|sep|><|open|>response<|sep|>')
    result = parse_both("Moonshot-Kimi-K3", "Hello.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>", prompt=start)
    assert (result.message.reasoning_content, result.message.content, result.finish_reason) == (None, "Hello.", "stop")
    result = parse_both("Moonshot-Kimi-K3", "<|close|>response<|sep|>" + K3_CALLS, prompt=start)
    assert result.message.content is None and len(calls(result)) == 2 and not result.diagnostics
    cut = K3_CALLS.index("12<|") + 2
    result = parse_both("Moonshot-Kimi-K3", "Ok<|close|>response<|sep|>" + K3_CALLS[:cut], prompt=start)
    assert calls(result) == [("get_weather", {"city": "12"})]
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


def test_kimi_k3_arguments_written_whole_in_a_json_block() -> None:
    # The template writes arguments given as JSON text in a block of their own (TensorRT-LLM's
    # test_detect_and_parse_with_parameters_key; the model's own encoder, and the grammars
    # llama.cpp's kin build for it, allow it): the block's text is the arguments. It was
    # content, and the call had none.
    start = prompt("Moonshot-Kimi-K3", thinking=False)
    block = '<|open|>json type="object"<|sep|>{"city": "Paris", "days": 2}<|close|>json<|sep|>'
    section = '<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>{}<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>'
    result = parse_both("Moonshot-Kimi-K3", section.format(block), prompt=start)
    assert calls(result) == [("get_weather", {"city": "Paris", "days": 2})]
    assert result.message.content is None and not result.diagnostics
    assert result.message.tool_calls[0].function.arguments == '{"city": "Paris", "days": 2}'  # type: ignore[index]
    # The template writes text that is no JSON object there too: it is the call's arguments, malformed.
    result = parse_both("Moonshot-Kimi-K3", section.format(block.replace('{"city": "Paris", "days": 2}', "{not json")), prompt=start)
    assert result.message.tool_calls[0].function.arguments == "{not json"  # type: ignore[index]
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"] and result.message.content is None


# -- MiniMax-M3 -------------------------------------------------------------------------------------

MM = "]<]minimax[>["


def test_minimax_m3_reads_arguments_written_as_tags_named_by_their_keys() -> None:
    invoke = (
        f'{MM}<invoke name="get_weather">{MM}<city>12{MM}</city>{MM}<days>2{MM}</days>'
        f"{MM}<options>{MM}<unit>C{MM}</unit>{MM}<hours>{MM}<item>6{MM}</item>{MM}<item>18{MM}</item>{MM}</hours>"
        f"{MM}<exact>true{MM}</exact>{MM}</options>{MM}</invoke>\n"
    )
    text = f"<mm:think>Plan.</mm:think>Checking.{MM}<tool_call>\n{invoke}{MM}</tool_call>[e~["
    result = parse_both("MiniMax-M3", text, prompt=prompt("MiniMax-M3"))
    assert (result.message.reasoning_content, result.message.content) == ("Plan.", "Checking.")
    # "12" is a string by the schema; the object's members, untyped, are JSON where they parse.
    assert calls(result) == [
        ("get_weather", {"city": "12", "days": 2, "options": {"unit": "C", "hours": [6, 18], "exact": True}})
    ]
    assert result.finish_reason == "tool_calls" and not result.diagnostics


def test_minimax_m3_arguments_that_do_not_nest_are_kept_as_written() -> None:
    body = f"{MM}<city>Paris{MM}</town>"
    text = f'</mm:think>{MM}<tool_call>\n{MM}<invoke name="get_weather">{body}{MM}</invoke>\n{MM}</tool_call>'
    result = parse_both("MiniMax-M3", text, prompt=prompt("MiniMax-M3"))
    [call] = result.message.tool_calls or []
    assert call.function.arguments == body and call.function.parsed_arguments is None
    assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    cut = f'</mm:think>{MM}<tool_call>\n{MM}<invoke name="get_weather">{MM}<city>Par'
    result = parse_both("MiniMax-M3", cut, prompt=prompt("MiniMax-M3"))
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


# vLLM tests/tool_parsers/test_minimax_m3_tool_parser.py
# (test_streaming_error_recovery_keeps_committed_tool_call_structured): a call the text ends in
# has JSON arguments, what was read before the cut, as every other syntax's cut call has.
# Before, its arguments were the tags as written, which no client decodes.
@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        (f"{MM}<city>Par", {"city": "Par"}),
        (f"{MM}<city>Paris{MM}</city>\n", {"city": "Paris"}),
        (f"{MM}<city>Paris{MM}</ci", {"city": "Paris"}),
        (f"{MM}<city>Paris{MM}</city>{MM}<days>2]<]mini", {"city": "Paris", "days": 2}),
        (f"{MM}<options>{MM}<hours>{MM}<item>6{MM}</item>{MM}<item>1", {"options": {"hours": [6, 1]}}),
        (f"{MM}<options>{MM}<tag>a{MM}</tag>{MM}<tag>b{MM}</tag>{MM}<un", {"options": {"tag": ["a", "b"]}}),
        (f"{MM}<ci", {}),
    ],
)
def test_minimax_m3_a_call_cut_short_has_json_arguments(body: str, arguments: dict[str, Any]) -> None:
    text = f'</mm:think>Checking.{MM}<tool_call>\n{MM}<invoke name="get_weather">{body}'
    result = parse_both("MiniMax-M3", text, prompt=prompt("MiniMax-M3"))
    assert calls(result) == [("get_weather", arguments)] and result.message.content == "Checking."
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]


def test_kimi_k3_names_and_keys_are_unescaped_attributes() -> None:
    # The template escapes '"' and '&' in attribute values (a tool's name, an argument's key).
    tools = [{"type": "function", "function": {"name": "a&b", "parameters": {"type": "object", "properties": {}}}}]
    text = (
        '<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="a&amp;b" index="1"<|sep|>'
        '<|open|>argument key="say &quot;hi&quot;" type="string"<|sep|>x &amp; y<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|>"
    )
    codec = codec_for("Moonshot-Kimi-K3")
    start = codec.render([{"role": "user", "content": "hi"}], tools=tools, add_generation_prompt=True, thinking=False)
    result = parse_both_ways(codec, text, prompt=start, tools=tools)
    # (A value is written raw: its "&amp;" is the model's text.)
    assert calls(result) == [("a&b", {'say "hi"': "x &amp; y"})] and not result.diagnostics


@pytest.mark.parametrize("template", ["DeepSeek-V3.2-llamacpp", "DeepSeek-V4", "DeepSeek-V4-Flash-0731"])
def test_dsml_content_before_calls_round_trips(template: str) -> None:
    # The templates write a blank line between the content and the section: both newlines are
    # the section's, or the content reads back with one of them (llama.cpp's test-chat.cpp).
    codec = codec_for(template)
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Let me look.", "tool_calls": [call]}]
    assert "Let me look.\n\n<｜DSML｜" in codec.render(conversation, tools=TOOLS)
    report = codec.roundtrip(conversation, tools=TOOLS)
    assert report.text_survived and report.transcript.messages[-1].content == "Let me look."


def test_kimi_k3_answer_opening_without_a_prompt() -> None:
    # llama.cpp's test-chat.cpp parses K3 output with no prompt: an answer that starts with its
    # own opening tag (thinking off) is the answer, the tag no part of it.
    text = "<|open|>response<|sep|>Hello, world!\nWhat's up?<|close|>response<|sep|><|close|>message<|sep|>"
    result = parse_both("Moonshot-Kimi-K3", text)
    assert (result.message.reasoning_content, result.message.content) == (None, "Hello, world!\nWhat's up?")
    text = "<|open|>think<|sep|>Hm.<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|>"
    result = parse_both("Moonshot-Kimi-K3", text)
    assert (result.message.reasoning_content, result.message.content) == ("Hm.", "Hi.")


def test_minicpm5_a_cdata_value_holds_tags() -> None:
    # llama.cpp's test-chat.cpp: a CDATA value ends only at "]]></param>", so the closing tags
    # it holds are its text; the template writes such a value in CDATA and reads it back.
    value = '<a href="/x">hi</a> </param></function>'
    text = f'<function name="get_weather"><param name="city"><![CDATA[{value}]]></param></function>'
    result = parse_both("OpenBMB-MiniCPM5-1B", text, prompt=prompt("OpenBMB-MiniCPM5-1B"))
    assert calls(result) == [("get_weather", {"city": value})] and result.message.content is None
    assert not result.diagnostics
    codec = codec_for("OpenBMB-MiniCPM5-1B")
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": value}}}
    report = codec.roundtrip([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}], tools=TOOLS)
    assert report.text_survived


def test_minimax_m3_a_key_written_twice_is_a_list() -> None:
    # vLLM's MiniMax-M3 tests: sibling tags of one name are the elements of a list.
    body = f"{MM}<city>Paris{MM}</city>{MM}<options>{MM}<tag>a{MM}</tag>{MM}<tag>b{MM}</tag>{MM}</options>"
    text = f'</mm:think>{MM}<tool_call>\n{MM}<invoke name="get_weather">{body}{MM}</invoke>\n{MM}</tool_call>'
    result = parse_both("MiniMax-M3", text, prompt=prompt("MiniMax-M3"))
    assert calls(result) == [("get_weather", {"city": "Paris", "options": {"tag": ["a", "b"]}})]
    assert not result.diagnostics


def test_kimi_k3_transcript_reads_numbered_tool_results() -> None:
    # A result's header names its tool and numbers it as the call was (` index="1"<|sep|>`),
    # spelled like a call's name end: the two share the spelling.
    codec = codec_for("Moonshot-Kimi-K3")
    calls_made = [
        {"id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}
        for i, city in enumerate(["Paris", "Rome"], 1)
    ]
    conversation = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": calls_made},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "tool", "tool_call_id": "c2", "content": "21 C"},
        {"role": "assistant", "content": "Warm."},
    ]
    text = codec.render(conversation, tools=TOOLS)
    assert 'role="tool" tool="get_weather" index="2"<|sep|>21 C' in text
    messages = codec.parse_transcript(text).messages
    assert [(m.role, m.content, m.name) for m in messages if m.role == "tool"] == [
        ("tool", "18 C", "get_weather"),
        ("tool", "21 C", "get_weather"),
    ]
    [with_calls] = [m for m in messages if m.tool_calls]
    assert [json.loads(c.function.arguments) for c in with_calls.tool_calls or []] == [{"city": "Paris"}, {"city": "Rome"}]
    # Its tools are a message of their own before the thinking-effort message, written as JSON
    # with every level's keys sorted: read back, and the conversation renders the same text.
    report = codec.roundtrip(conversation, tools=TOOLS)
    assert report.transcript.tools == TOOLS and report.text_survived


def test_hy3_tags_spelled_without_a_suffix(tmp_path: Path) -> None:
    # The Hy3 template with its suffix variable empty, as the preview's tokenizer spells the
    # tags (vLLM's Hy3 tests write them so): its own syntax, not GLM's.
    source = (TEMPLATES / "Tencent-Hy3.jinja").read_text(encoding="utf-8")
    suffixed, bare = HY3_BARE_SUFFIX
    assert suffixed in source
    path = tmp_path / "Tencent-Hy3-bare.jinja"
    path.write_text(source.replace(suffixed, bare), encoding="utf-8")
    codec = chatcodec.load(path)
    assert codec.format.calls is not None and codec.format.calls.name == "hunyuan_bare"
    text = (
        "Sure.<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n</tool_calls>"
    )
    start = codec.render([{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both_ways(codec, text, prompt=start, tools=TOOLS)
    assert result.message.content == "Sure." and calls(result) == [("get_weather", {"city": "Beijing", "days": 2})]
    assert not result.diagnostics


def test_minimax_m1_reasoning_named_by_the_caller() -> None:
    # vLLM's MiniMax-M1 reasoning tests: the model writes <think>…</think>, which its template
    # never shows; named at load, the block is reasoning (and a call inside it is read, said so).
    path = TEMPLATES / "MiniMax-M1.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path), reasoning_tags=("<think>", "</think>"))
    start = codec.render([{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True)
    result = parse_both_ways(codec, "<think>\nThis is a reasoning section\n</think>\nThis is the rest", prompt=start, tools=TOOLS)
    assert (result.message.reasoning_content, result.message.content) == ("This is a reasoning section", "This is the rest")
    with pytest.raises(ValueError, match="reasoning_tags"):
        chatcodec.load(path, reasoning_tags=("<think>", " "))


# vLLM's tests/tool_parsers/test_minimax_tool_parser.py (thinking tags): MiniMax-M1 thinks in
# <think>…</think>, which its template never writes; the template's default system prompt names
# the model, and so the tags are known without being named at load. A call the model only
# thought of stays in the reasoning; the one after the block is the call.
@pytest.mark.parametrize("with_prompt", [False, True])
def test_minimax_m1_knows_its_think_tags(with_prompt: bool) -> None:
    codec = codec_for("MiniMax-M1")
    assert codec.format.reasoning is not None and codec.format.reasoning.open_tag == "<think>"
    start = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True) if with_prompt else None
    thought = '<tool_calls>{"name": "ignored", "arguments": {}}</tool_calls>'
    text = f'<think>{thought}</think><tool_calls>{{"name": "real_tool", "arguments": {{"param": "value"}}}}</tool_calls>'
    result = parse_both_ways(codec, text, prompt=start)
    assert result.message.reasoning_content == thought
    assert result.message.content is None
    assert calls(result) == [("real_tool", {"param": "value"})]
    plain = parse_both_ways(codec, "No thinking here.", prompt=start)
    assert (plain.message.reasoning_content, plain.message.content, plain.finish_reason) == (None, "No thinking here.", "stop")
