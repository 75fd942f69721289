"""Reading rendered conversations back: render -> parse_transcript -> render is exact, the
recovered messages equal the input except where the report says, and spans/masks are right."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from parsing_support import FAMILIES

import chatcodec
from chatcodec.messages import parse_messages
from chatcodec.check.roundtrip import delimiters_in

CODECS = {name: chatcodec.load(name) for name in FAMILIES}
ALPHABET = st.sampled_from(
    list("abcxyz XYZ019.,;:!?-_'\"\\/{}[]()<>|=&%$#@*+~`") + ["\n", "\t", " ", "é", "日", "😀", "｜", "▁"]
)
text = st.text(alphabet=ALPHABET, max_size=30)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(alphabet=ALPHABET, max_size=8)),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(alphabet=ALPHABET, min_size=1, max_size=5), children, max_size=3),
    max_leaves=6,
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}},
]


@st.composite
def conversations(draw: Any, family: str) -> dict[str, Any]:
    """Conversations of the shapes each template renders: optional system, user/assistant
    turns, tool calls answered by tool results, reasoning, awkward whitespace and unicode."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(text)})
        for _ in range(draw(st.integers(0, 2))):
            assistant: dict[str, Any] = {"role": "assistant", "content": draw(text)}
            if draw(st.booleans()):
                assistant["reasoning_content"] = draw(text)
            calls = draw(st.lists(st.tuples(st.sampled_from(["get_weather", "search"]), json_values), max_size=2))
            if calls:
                assistant["tool_calls"] = [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": {"q": value}},
                    }
                    for i, (name, value) in enumerate(calls)
                ]
            messages.append(assistant)
            for i in range(len(calls)):
                messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": draw(text)})
            if not calls:
                break
    tools = TOOLS if draw(st.booleans()) else None
    kwargs: dict[str, Any] = draw(st.sampled_from([{}, {"enable_thinking": False}, {"thinking": True}]))
    return {"messages": messages, "tools": tools, "kwargs": kwargs, "gp": draw(st.booleans())}


def _has_delimiters(family: str, conversation: dict[str, Any]) -> bool:
    fam = CODECS[family].family
    for message in parse_messages(conversation["messages"]):
        values = [message.text, message.reasoning_content or ""]
        values += [c.function.arguments for c in message.tool_calls or []]
        if any(delimiters_in(fam, value) for value in values):
            return True
    return False


@pytest.mark.parametrize("family", FAMILIES)
def test_render_parse_render_is_exact_and_losses_explain_every_difference(family: str) -> None:
    codec = CODECS[family]

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(conversations(family))
    def check(conversation: dict[str, Any]) -> None:
        assume(not _has_delimiters(family, conversation))
        messages, tools, kwargs = conversation["messages"], conversation["tools"], conversation["kwargs"]
        try:
            text = codec.render(messages, tools=tools, add_generation_prompt=conversation["gp"], **kwargs)
        except chatcodec.TemplateRenderError:
            assume(False)  # the template itself rejects this conversation
        transcript = codec.parse_transcript(text)
        again = codec.render(transcript.messages, **{**kwargs, **transcript.render_arguments()})
        report = codec.roundtrip(messages, tools=tools, add_generation_prompt=conversation["gp"], **kwargs)
        assert report.injection_risks == []
        if again != text:
            # Templates that trim a field but test it untrimmed make whitespace-only fields leave
            # a trace no message can give back: Llama writes "\n" before a tool call when the
            # untrimmed content is non-empty; Qwen writes an empty think block for reasoning
            # that is only newlines. The report must say so.
            assert not report.text_survived
            assert any(loss.kind == "whitespace_trimmed" for loss in report.losses)
            return
        assert report.text_survived
        # Every field that differs is one the report names for that message.
        named = {(loss.message, (loss.field or "").split("[")[0].split(".")[0]) for loss in report.losses}
        original = parse_messages(messages)
        if len(original) == len(transcript.messages):
            for index, (a, b) in enumerate(zip(original, transcript.messages)):
                assert a.role == b.role
                if a.text != b.text:
                    assert (index, "content") in named, (index, a.text, b.text)
                if (a.reasoning_content or "") != (b.reasoning_content or ""):
                    assert (index, "reasoning_content") in named or (index, "content") in named
                if a.tool_call_id != b.tool_call_id:
                    assert (index, "tool_call_id") in named
                for x, y in zip(a.tool_calls or [], b.tool_calls or []):
                    assert x.function.name == y.function.name
                    assert json.loads(x.function.arguments) == json.loads(y.function.arguments)
                    if x.function.arguments != y.function.arguments:
                        assert (index, "tool_calls") in named
                if len(a.tool_calls or []) != len(b.tool_calls or []):
                    assert (index, "tool_calls") in named
        else:
            assert any(loss.kind == "message_not_recovered" for loss in report.losses)

    check()


def _report(family: str, messages: list[dict[str, Any]], **kwargs: Any) -> chatcodec.check.roundtrip.RoundTripReport:
    return CODECS[family].roundtrip(messages, **kwargs)


def _kinds(report: Any) -> list[tuple[int | None, str]]:
    return [(loss.message, loss.kind) for loss in report.losses]


def test_lossless_conversation_reports_nothing() -> None:
    report = _report("qwen3", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])
    assert report.lossless and report.losses == []


def test_reasoning_before_the_last_user_turn_is_reported() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "thought"},
        {"role": "user", "content": "c"},
    ]
    report = _report("qwen3", messages)
    assert report.text_survived
    (loss,) = report.losses
    assert (loss.message, loss.kind, loss.field) == (1, "reasoning_not_rendered", "reasoning_content")
    assert "only after the last user turn" in loss.description


def test_llama_trims_content_whitespace() -> None:
    report = _report("llama3_hermes", [{"role": "user", "content": "  padded\n"}])
    assert _kinds(report) == [(0, "whitespace_trimmed")]
    assert "message 0: leading/trailing whitespace of content trimmed" in report.summary()


def test_tool_call_ids_and_references_are_reported() -> None:
    messages = [
        {"role": "user", "content": "w?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "sunny"},
    ]
    report = _report("qwen3", messages)
    assert _kinds(report) == [(1, "tool_call_id_not_rendered"), (2, "tool_call_id_reference_not_rendered")]


def test_string_arguments_respaced_by_a_template_that_needs_a_dict() -> None:
    messages = [
        {"role": "user", "content": "w?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a":1,"b":[2]}'}}],
        },
    ]
    report = _report("deepseek", messages)
    assert (1, "arguments_reserialized") in _kinds(report)
    assert report.text_survived


def test_tools_not_rendered_by_deepseek() -> None:
    report = _report("deepseek", [{"role": "user", "content": "x"}], tools=TOOLS)
    assert _kinds(report) == [(None, "tools_not_rendered")]


def test_deepseek_merges_system_messages() -> None:
    messages = [
        {"role": "system", "content": "one"},
        {"role": "system", "content": "two"},
        {"role": "user", "content": "x"},
    ]
    report = _report("deepseek", messages)
    assert report.text_survived
    assert (1, "message_not_recovered") in _kinds(report) or (0, "message_not_recovered") in _kinds(report)


@pytest.mark.parametrize(
    "family,content,delimiter",
    [
        ("qwen3", "I type <|im_end|> in chat", "<|im_end|>"),
        ("qwen3", "look: <tool_call>", "<tool_call>"),
        ("deepseek", "a<｜tool▁sep｜>b", "<｜tool▁sep｜>"),
        ("llama3_hermes", "x<|eot_id|>y", "<|eot_id|>"),
    ],
)
def test_delimiters_in_content_are_reported_as_injection(family: str, content: str, delimiter: str) -> None:
    report = _report(family, [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}])
    risks = report.injection_risks
    assert risks and risks[0].message == 0 and delimiter in risks[0].description


def test_transcript_recovers_tools_generation_prompt_and_keywords() -> None:
    codec = CODECS["qwen3"]
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    text = codec.render(messages, tools=TOOLS, add_generation_prompt=True, enable_thinking=False)
    transcript = codec.parse_transcript(text)
    assert [m.role for m in transcript.messages] == ["system", "user"]
    assert transcript.messages[0].content == "S"
    assert transcript.tools == TOOLS
    assert transcript.add_generation_prompt is True
    assert transcript.template_kwargs == {"enable_thinking": False}

    deepseek = CODECS["deepseek"]
    text = deepseek.render([{"role": "user", "content": "U"}], add_generation_prompt=True, thinking=True)
    transcript = deepseek.parse_transcript(text)
    assert transcript.add_generation_prompt and transcript.template_kwargs == {"thinking": True}


@pytest.mark.parametrize("family", FAMILIES)
def test_spans_and_assistant_mask(family: str) -> None:
    codec = CODECS[family]
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "content": "cold"},
        {"role": "assistant", "content": "It is cold."},
    ]
    rendered = codec.render_with_spans(messages, tools=TOOLS)
    assert [s.role for s in rendered.messages] == ["user", "assistant", "tool", "assistant"]
    text = rendered.text
    for span in rendered.messages:
        assert 0 <= span.start <= span.body_start <= span.end <= len(text)
    user, first, tool, last = rendered.messages
    assert "Weather?" in text[user.body_start : user.end]
    assert "cold" in text[tool.body_start : tool.end]
    assistant_text = "".join(text[a:b] for a, b in rendered.assistant_ranges())
    assert "Checking." in assistant_text and '"city": "Oslo"' in assistant_text and "It is cold." in assistant_text
    assert "Weather?" not in assistant_text and "cold" not in assistant_text.replace("It is cold.", "")
    parts = {p.kind for p in first.parts}
    assert {"content", "tool_call"} <= parts
    content_part = next(p for p in first.parts if p.kind == "content")
    assert text[content_part.start : content_part.end] == "Checking."
    mask = rendered.assistant_char_mask()
    assert sum(mask) == sum(b - a for a, b in rendered.assistant_ranges())


def test_token_mask_with_a_tokenizer_that_gives_offsets() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    codec = CODECS["qwen3"]
    rendered = codec.render_with_spans(
        [{"role": "user", "content": "hello there"}, {"role": "assistant", "content": "general kenobi"}]
    )
    vocab = {"[UNK]": 0}
    tokenizer = tokenizers.Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    mask = rendered.token_mask(tokenizer)
    words = rendered.text.split()
    assert len(mask) == len(words)
    marked = [w for w, m in zip(words, mask) if m]
    assert "general" in marked and "kenobi<|im_end|>" in marked
    assert "hello" not in marked and "there<|im_end|>" not in marked


def test_render_with_generation_tags_agrees_with_grammar_spans() -> None:
    # A qwen3-format template that marks the assistant's text with {% generation %}.
    source = (
        "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' }}"
        "{% if m.role == 'assistant' %}{% generation %}{{ m.content + '<|im_end|>\\n' }}{% endgeneration %}"
        "{% else %}{{ m.content + '<|im_end|>\\n' }}{% endif %}{% endfor %}"
    )
    codec = chatcodec.Codec(type(CODECS["qwen3"].template)(source=source, name="tagged"), family="qwen3")
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a1"}]
    _, generation = codec.render_with_generation_spans(messages)
    rendered = codec.render_with_spans(messages)
    assert rendered.assistant_ranges() == generation


def test_round_trips_stay_linear_in_the_number_of_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted, not timed: messages that come back in order are matched without difflib, whose
    # alignment of long role sequences (few distinct symbols) is quadratic.
    import difflib

    calls: list[int] = []

    class Counting(difflib.SequenceMatcher):  # type: ignore[type-arg]
        def __init__(self, *args: Any, a: Any = "", b: Any = "", **kwargs: Any) -> None:
            calls.append(len(a) * len(b))
            super().__init__(*args, a=a, b=b, **kwargs)

    monkeypatch.setattr(difflib, "SequenceMatcher", Counting)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(4000)]
    report = CODECS["qwen3"].roundtrip(messages)
    assert report.text_survived and calls == []
    # A merged message in the middle: only the disagreeing stretch is aligned.
    from chatcodec.check.roundtrip import _aligned

    roles = ["user", "assistant"] * 2000
    opcodes = _aligned(roles, roles[:1000] + ["tool"] + roles[1000:])
    assert opcodes == [("equal", 0, 1000, 0, 1000), ("insert", 1000, 1000, 1000, 1001), ("equal", 1000, 4000, 1001, 4001)]
    assert max(calls) <= 1


MULTI_TURN = [
    {"role": "user", "content": "a"},
    {"role": "assistant", "content": "b"},
    {"role": "user", "content": "c"},
    {"role": "assistant", "content": "d"},
]


def test_prefix_check_finds_a_generation_prompt_the_conversation_does_not_keep() -> None:
    # Qwen3 with thinking off prompts with an empty think block, but writes earlier answers
    # without one: the prompt message 1 was answered to is not a prefix of the conversation.
    report = _report("qwen3", MULTI_TURN, check_prefixes=True, enable_thinking=False)
    assert _kinds(report) == [(1, "prefix_changed")]
    assert "'<think>\\n\\n</think>\\n\\n' vs 'b<|im_end|>" in report.losses[0].description


@pytest.mark.parametrize("family", ["qwen3", "llama3_hermes"])
def test_prefix_check_is_quiet_when_every_prompt_is_a_prefix(family: str) -> None:
    assert _report(family, MULTI_TURN, check_prefixes=True).losses == []


def test_prefix_check_is_off_by_default() -> None:
    assert _report("qwen3", MULTI_TURN, enable_thinking=False).losses == []


def test_a_tool_definition_python_cannot_decode_is_a_diagnostic() -> None:
    # A JSON number of 5,000 digits is past what Python converts (sys.get_int_max_str_digits):
    # the definition is reported, and the rest of the transcript is still read.
    codec = chatcodec.load("qwen3")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 12345}}}}}]
    text = codec.render([{"role": "user", "content": "hi"}], tools=tools).replace("12345", "9" * 5000)
    transcript = codec.parse_transcript(text)
    assert [d.kind for d in transcript.diagnostics] == ["malformed_tool_definition"]
    assert "cannot be decoded" in transcript.diagnostics[0].message
    assert [m.content for m in transcript.messages] == ["hi"]


# Templates that write tool definitions in a form of their own, only when there are tools
# (TypeScript, XML, Gemma 4's notation, Python signatures): the block is found by rendering one
# tool and two, and read as the template's text, so that it is no system message.
OWN_FORM = [
    "Qwen-Qwen3-Coder",
    "NVIDIA-Nemotron-3-Nano-30B-A3B",
    "OpenAI-gpt-oss-120b",
    "Google-gemma-4-31B-it",
    "SberDevices-GigaChat3-10B-A1.8B",
    "OpenBMB-MiniCPM3-4B",
    # Its developer turn says "Tool Capabilities: disabled" without tools; the block stands there.
    "SwissAI-Apertus-8B-Instruct",
]
AWKWARD_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            # Text that is no JSON and looks like the block's own delimiters.
            "description": 'Say "hi <tool_call> {[ \\ `x` </tools> } // namespace functions',
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "a \"quoted' city"}},
                "required": ["city"],
            },
        },
    },
    {"type": "function", "function": {"name": "noargs", "description": "None.", "parameters": {"type": "object", "properties": {}}}},
]


@pytest.mark.parametrize("template", OWN_FORM)
@pytest.mark.parametrize("system", [True, False], ids=["system", "no-system"])
def test_tool_definitions_in_a_form_of_the_templates_own(template: str, system: bool) -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / f"{template}.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    messages = [{"role": "system", "content": "Be brief."}] if system else []
    messages += [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]
    text = codec.render(messages, tools=AWKWARD_TOOLS)
    transcript = codec.parse_transcript(text)
    assert [(m.role, m.content) for m in transcript.messages] == [(m["role"], m["content"]) for m in messages]
    assert [d.kind for d in transcript.diagnostics] == ["tools_not_readable"]
    # (Said where the definitions begin: the first tool's is there.)
    position = transcript.diagnostics[0].position
    assert position > 0 and "get_weather" in text[position : position + 200]
    assert transcript.reassemble() == text
    report = codec.roundtrip(messages, tools=AWKWARD_TOOLS)
    assert report.text_survived and [loss.kind for loss in report.losses] == ["tools_not_read"]


# Mistral 7B v0.3 and Nemo write [AVAILABLE_TOOLS] before the last user turn, after every turn
# before it: the block is a turn of its own wherever it stands, and the definitions are read.
@pytest.mark.parametrize(
    "template", ["Mistral-7B-Instruct-v0.3-jsonschema", "Mistral-Nemo-Instruct-2407", "CISCai-Mistral-7B-Instruct-v0.3-SOTA-GGUF"]
)
def test_tools_before_the_last_user_turn_are_read(template: str) -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / f"{template}.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]
    text = codec.render(messages, tools=TOOLS)
    assert text.index("[AVAILABLE_TOOLS]") > text.index("yo")
    transcript = codec.parse_transcript(text)
    assert [(m.role, m.content) for m in transcript.messages] == [(m["role"], m["content"]) for m in messages]
    assert transcript.diagnostics == [] and transcript.reassemble() == text
    names = [tool["function"]["name"] if "function" in tool else tool["name"] for tool in transcript.tools or []]
    assert names == ["get_weather", "search"]


def _two_calls_answered(ids: tuple[str, str], news: str) -> list[dict[str, Any]]:
    """A user's question, two calls with these ids, their results (the second ``news``), and
    the answer."""
    calls = [
        {"id": ids[0], "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"id": ids[1], "type": "function", "function": {"name": "search", "arguments": "{}"}},
    ]
    return [
        {"role": "user", "content": "Weather, and news?"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "tool_call_id": ids[0], "content": "18 C"},
        {"role": "tool", "tool_call_id": ids[1], "content": news},
        {"role": "assistant", "content": "18 C, no news."},
    ]


# Llama 3.3 Nemotron Super writes ", " between tool definitions and between the results of one
# tool turn: inside the definitions' block it separates definitions, and a system turn before
# them stays one turn.
@pytest.mark.parametrize("system", [False, True])
def test_a_separator_shared_by_definitions_and_results(system: bool) -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / "NVIDIA-Llama-3.3-Nemotron-Super-49B-v1.5.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    messages = ([{"role": "system", "content": "Be brief."}] if system else []) + _two_calls_answered(("a", "b"), "none")
    text = codec.render(messages, tools=TOOLS)
    assert '{"type": "string"}}}}, {"name": "search"' in text and "<TOOL_RESPONSE>[18 C, none]" in text
    transcript = codec.parse_transcript(text)
    assert transcript.diagnostics == [] and transcript.reassemble() == text
    assert [tool["function"]["name"] for tool in transcript.tools or []] == ["get_weather", "search"]
    assert [(m.role, m.content) for m in transcript.messages] == [
        *([("system", "Be brief.")] if system else []),
        ("user", "Weather, and news?"),
        ("assistant", ""),
        ("tool", "18 C"),
        ("tool", "none"),
        ("assistant", "18 C, no news."),
    ]
    assert codec.roundtrip(messages, tools=TOOLS).text_survived


# Mistral Nemo writes a tool result as ``[TOOL_RESULTS]{"content": TEXT, "call_id": "ID"}``:
# the id after the content is the message's ``tool_call_id``, not a part of the footer.
def test_a_call_id_after_a_tool_result_is_read() -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / "Mistral-Nemo-Instruct-2407.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    messages = _two_calls_answered(("Ab3dE6gH9", "zz8yy7xx6"), '{"news": []}')
    text = codec.render(messages, tools=TOOLS)
    assert '[TOOL_RESULTS]{"content": 18 C, "call_id": "Ab3dE6gH9"}[/TOOL_RESULTS]' in text
    transcript = codec.parse_transcript(text)
    assert transcript.diagnostics == [] and transcript.reassemble() == text
    assert [(m.role, m.content, m.tool_call_id) for m in transcript.messages if m.role == "tool"] == [
        ("tool", "18 C", "Ab3dE6gH9"),
        ("tool", '{"news": []}', "zz8yy7xx6"),
    ]
    assert transcript.messages[-1].content == "18 C, no news."
    report = codec.roundtrip(messages, tools=TOOLS)
    assert report.text_survived and report.lossless


# A tool result in harmony's own form (``<|start|>functions.NAME<|message|>…``, no
# `` to=assistant<|channel|>commentary`` after the name, as openai/harmony writes it) never
# ends the name the gpt-oss template's header holds: the transcript says so.
def test_a_tool_turn_whose_name_never_ends_is_diagnosed() -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / "OpenAI-gpt-oss-120b.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    user = "<|start|>user<|message|>Weather?<|end|>"
    harmony = user + '<|start|>functions.get_weather<|message|>{"t": 20}<|end|><|start|>user<|message|>Thanks<|end|>'
    transcript = codec.parse_transcript(harmony)
    assert transcript.reassemble() == harmony
    assert [(d.kind, d.position) for d in transcript.diagnostics] == [("unclosed_delimiter", len(user) + len("<|start|>functions."))]
    assert "to=assistant" in transcript.diagnostics[0].message
    rendered = codec.render(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "content": '{"t": 20}'},
        ]
    )
    read = codec.parse_transcript(rendered)
    assert read.diagnostics == [] and [(m.role, m.name) for m in read.messages][-1] == ("tool", "get_weather")


# A template variable that changes text the transcript reads as the template's (gpt-oss's
# ``reasoning_effort`` in its system prompt): the round trip's report says which text it read as
# no message, though rendering again with the same variables gives the same text.
def test_a_round_trip_reports_text_the_transcript_does_not_read() -> None:
    from template_corpus import CORPUS, special_tokens

    path = CORPUS / "OpenAI-gpt-oss-120b.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    question = [{"role": "user", "content": "What is 2 + 2?"}]
    assert codec.roundtrip(question, add_generation_prompt=True).lossless
    report = codec.roundtrip(question, add_generation_prompt=True, reasoning_effort="high")
    assert report.text_survived and not report.lossless
    (loss,) = report.losses
    assert loss.kind == "text_not_read" and "characters 0-" in loss.description
