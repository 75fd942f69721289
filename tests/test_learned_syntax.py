"""A call syntax learned from the template: a call's JSON object (or a list of them) in tags no
known syntax spells is read the way the template writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from learned_shapes import SHAPES, TEMPLATE, learned_codec

import chatcodec

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "get_time", "description": "The time", "parameters": {"type": "object", "properties": {}}}},
]
EXPECTED = [("get_weather", {"city": "Paris"}), ("get_time", {})]


def _calls(message: chatcodec.Message) -> list[tuple[str, Any]]:
    return [(call.function.name, json.loads(call.function.arguments)) for call in message.tool_calls or []]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_learned_syntax_reads_what_the_model_writes(shape: str) -> None:
    codec = learned_codec(shape)
    assert codec.describe()["calls"]["syntax"] == SHAPES[shape][1]
    answer = "Let me check." + ("\n" if shape == "object between tags" else "") + SHAPES[shape][2]
    result = codec.parse_detailed(answer + "<|im_end|>", tools=TOOLS)
    assert result.diagnostics == [] and result.finish_reason == "tool_calls"
    assert result.message.content == "Let me check." and _calls(result.message) == EXPECTED
    # Streamed a character at a time: the same message.
    stream = codec.stream(tools=TOOLS)
    for char in answer:
        stream.feed(char)
    stream.close()
    assert stream.message.content == "Let me check." and _calls(stream.message) == EXPECTED


@pytest.mark.parametrize("shape", SHAPES)
def test_a_learned_syntax_round_trips_the_template_s_conversation(shape: str) -> None:
    codec = learned_codec(shape)
    calls = [
        {"id": "a", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for name, arguments in EXPECTED
    ]
    messages = [{"role": "user", "content": "Weather and time?"}, {"role": "assistant", "content": "", "tool_calls": calls}]
    text = codec.render(messages, tools=TOOLS)
    assert SHAPES[shape][2] in text  # (the template writes what the test says it writes)
    transcript = codec.parse_transcript(text)
    assert transcript.diagnostics == [] and _calls(transcript.messages[1]) == EXPECTED
    assert codec.roundtrip(messages, tools=TOOLS).text_survived


def test_a_call_cut_short_in_learned_tags_is_cut_short() -> None:
    result = learned_codec("object between tags").parse_detailed('<longcat_tool_call>\n{"name": "get_weather", "argu', tools=TOOLS)
    assert result.finish_reason == "length" and [d.kind for d in result.diagnostics] == ["unclosed_tool_call"]
    assert result.reassemble() == '<longcat_tool_call>\n{"name": "get_weather", "argu'


def test_json_that_names_no_call_is_not_a_syntax() -> None:
    # A template that writes only the arguments after the name is not the JSON-call shape.
    template = TEMPLATE.replace("CALLS", "{% for c in message.tool_calls %}<call>{{ c.function.name }} {{ c.function.arguments | tojson }}</call>{% endfor %}")
    described = chatcodec.load(template, special_tokens={"eos_token": "<|im_end|>"}).describe()
    assert described["calls"] is None and "does not read yet" in described["calls_not_parsed"]


# Real templates whose syntax chatcodec knows: with the known syntaxes set aside, the one
# learned from the template reads its conversations as the known one does.
RELEARNED = {
    "ZhipuAI-GLM-4.7-Flash": "xml_parameters",  # tags with no whitespace between them
    "Laguna-v2": "xml_parameters",  # the turn ends with a closing tag of its own, </assistant>
    "Qwen-Qwen3-Coder": "xml_parameters",
    "OpenBMB-MiniCPM5-1B": "xml_parameters",
    "AI21-Jamba-Large-1.6": "json_list_in_tags",
    "Mistral-7B-Instruct-v0.3-jsonschema": "json_list_after_tag",
    "Mistral-Devstral-Small-2507-unsloth": "name_then_json",
    "MiniMax-M2": "xml_parameters_section",
    "SberDevices-GigaChat3.1-10B-A1.8B": "json_after_tag",
    "vLLM-InternLM2-tool": "json_in_tags",
    "MeetKai-functionary-medium-v3.1": "name_then_json",
}


@pytest.mark.parametrize("template", RELEARNED)
def test_a_known_syntax_is_learned_again(template: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from template_corpus import CORPUS, special_tokens

    from chatcodec import codec as codec_module
    from chatcodec.formats import derived

    path = CORPUS / f"{template}.jinja"
    known = chatcodec.load(path, special_tokens=special_tokens(path))
    known.describe()  # (its format, derived with every syntax known)
    codec_module._codec_of.cache_clear()
    monkeypatch.setattr(derived, "CANDIDATES", ())
    try:
        learned = chatcodec.load(path, special_tokens=special_tokens(path))
        assert learned.describe()["calls"]["syntax"] == RELEARNED[template]
    finally:
        codec_module._codec_of.cache_clear()
    calls = [
        {"id": f"call{i}abcd", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for i, (name, arguments) in enumerate(EXPECTED)
    ]
    messages = [{"role": "user", "content": "Weather and time?"}, {"role": "assistant", "content": "", "tool_calls": calls}]
    text = known.render(messages, tools=TOOLS)
    assert "get_time" in text
    transcripts = [codec.parse_transcript(text) for codec in (known, learned)]
    assert [_calls(m) for m in transcripts[1].messages] == [_calls(m) for m in transcripts[0].messages]
    read = _calls(transcripts[1].messages[-1])
    assert read and read == EXPECTED[: len(read)]  # (GigaChat 3.1 renders a turn's first call only)
