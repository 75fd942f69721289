"""OpenAI adapters: chunks, whole responses and SSE, checked against the official ``openai`` types
and against messages written out by hand for each bundled format."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import chatcodec
from chatcodec.events import (
    ContentDelta,
    Diagnostic,
    Finish,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from chatcodec.messages import FunctionCall, Message, ToolCall
from chatcodec.adapters.openai import (
    SSE_DONE,
    ChunkAdapter,
    completion_response,
    message_to_openai,
    stream_chunks,
    to_sse,
)


@dataclass(frozen=True)
class Case:
    """A completion written by hand in one family's format, and the message it must give."""

    id: str
    template: str
    completion: str
    content: str | None
    reasoning: str | None = None
    calls: tuple[tuple[str, str], ...] = ()  # (name, arguments JSON text)
    finish: str = "stop"
    prompt: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


QWEN_PROMPT_NO_THINKING = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
DEEPSEEK_PROMPT_THINKING = "<｜begin▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜><think>"
DS_CALLS, DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_SEP, DS_CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
DS_EOS = "<｜end▁of▁sentence｜>"

CASES = [
    Case(
        "qwen3-reasoning-content-call",
        "qwen3",
        "<think>\nThe user wants the weather.\n</think>\n\nLet me look that up.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call><|im_end|>',
        content="Let me look that up.",
        reasoning="The user wants the weather.",
        calls=(("get_weather", '{"city": "Paris", "unit": "celsius"}'),),
        finish="tool_calls",
    ),
    Case(
        "qwen3-two-calls-no-content",
        "qwen3",
        "<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Zürich", "note": "say <tool_call> \\"hi\\""}}'
        "\n</tool_call>\n<tool_call>\n"
        '{"name": "get_time", "arguments": {}}'
        "\n</tool_call><|im_end|>",
        content=None,
        calls=(
            ("get_weather", '{"city": "Zürich", "note": "say <tool_call> \\"hi\\""}'),
            ("get_time", "{}"),
        ),
        finish="tool_calls",
    ),
    Case(
        "qwen3-prompt-closed-thinking",
        "qwen3",
        "Hello! How can I help?<|im_end|>",
        content="Hello! How can I help?",
        prompt=QWEN_PROMPT_NO_THINKING,
    ),
    Case(
        "qwen3-truncated-reasoning",
        "qwen3",
        "<think>\nStill thinking about",
        content="",
        reasoning="Still thinking about",
        finish="length",
    ),
    Case(
        "qwen3-truncated-call",
        "qwen3",
        '<tool_call>\n{"name": "f", "arguments": {"a": 1',
        content=None,
        calls=(("f", '{"a": 1'),),
        finish="length",
    ),
    Case(
        "deepseek-reasoning-flag",
        "deepseek",
        f"Let me check.</think>Checking.{DS_CALLS}{DS_CALL}get_weather{DS_SEP}"
        f'{{"city": "Paris"}}{DS_CALL_END}{DS_CALL}get_time{DS_SEP}{{}}{DS_CALL_END}{DS_CALLS_END}{DS_EOS}',
        content="Checking.",
        reasoning="Let me check.",
        calls=(("get_weather", '{"city": "Paris"}'), ("get_time", "{}")),
        finish="tool_calls",
        options={"reasoning": True},
    ),
    Case(
        "deepseek-prompt-opens-think",
        "deepseek",
        f"Two plus two.\nIt is 4.</think>The answer is **4**.{DS_EOS}",
        content="The answer is **4**.",
        reasoning="Two plus two.\nIt is 4.",
        prompt=DEEPSEEK_PROMPT_THINKING,
    ),
    Case(
        "deepseek-call-only",
        "deepseek",
        f'{DS_CALLS}{DS_CALL}search{DS_SEP}{{"q": "日本語", "n": [1, 2]}}{DS_CALL_END}{DS_CALLS_END}{DS_EOS}',
        content=None,
        calls=(("search", '{"q": "日本語", "n": [1, 2]}'),),
        finish="tool_calls",
    ),
    Case("deepseek-plain", "deepseek", f"Hi there!{DS_EOS}", content="Hi there!"),
    Case(
        "llama3-content-call",
        "llama3_hermes",
        'Sure, checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|eot_id|>',
        content="Sure, checking.",
        calls=(("get_weather", '{"city": "Oslo"}'),),
        finish="tool_calls",
    ),
    Case(
        "llama3-two-calls-nested",
        "llama3_hermes",
        '<tool_call>\n{"name": "a", "arguments": {"n": {"m": [true, null, "}"]}}}\n</tool_call>\n'
        '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call><|eot_id|>',
        content=None,
        calls=(("a", '{"n": {"m": [true, null, "}"]}}'), ("b", "{}")),
        finish="tool_calls",
    ),
    Case("llama3-plain", "llama3_hermes", "Line one.\nLine two.<|eot_id|>", content="Line one.\nLine two."),
]

CASE_IDS = [case.id for case in CASES]
DELTA_SIZES = [1, 2, 5, 1_000_000]  # one character, small and odd sizes, the whole text at once


def codec_for(case: Case) -> chatcodec.Codec:
    return chatcodec.load(case.template)


def parser_for(case: Case) -> Any:
    return codec_for(case).stream(case.prompt, **case.options)


def split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def run_chunks(case: Case, deltas: list[str], **adapter_options: Any) -> tuple[list[dict[str, Any]], Any, ChunkAdapter]:
    parser = parser_for(case)
    adapter = ChunkAdapter(adapter_options.pop("model", "test-model"), **adapter_options)
    chunks = list(stream_chunks(parser, deltas, adapter))
    return chunks, parser, adapter


def expected_message(case: Case, reasoning_field: str = "reasoning_content") -> dict[str, Any]:
    """The OpenAI message dict for a case, built from the hand-written fields (ids left out)."""
    message: dict[str, Any] = {"role": "assistant", "content": case.content}
    if case.reasoning is not None:
        message[reasoning_field] = case.reasoning
    if case.calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": name, "arguments": arguments}} for name, arguments in case.calls
        ]
    return message


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if "tool_calls" in out:
        out["tool_calls"] = [{k: v for k, v in call.items() if k != "id"} for call in out["tool_calls"]]
    return out


def accumulate(chunks: list[dict[str, Any]], reasoning_field: str = "reasoning_content") -> tuple[dict[str, Any], str]:
    """Rebuild the message the way an OpenAI client does: concatenate the text fields, collect
    each tool call by ``index`` (header first, then argument fragments)."""
    role = None
    content: list[str] = []
    reasoning: list[str] | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in chunks:
        (choice,) = chunk["choices"]
        delta = choice["delta"]
        role = delta.get("role", role)
        if delta.get("content") is not None:
            content.append(delta["content"])
        if delta.get(reasoning_field) is not None:
            reasoning = (reasoning or []) + [delta[reasoning_field]]
        for fragment in delta.get("tool_calls") or []:
            call = calls.setdefault(fragment["index"], {"id": None, "name": "", "arguments": ""})
            if fragment.get("id"):
                call["id"] = fragment["id"]
            function = fragment.get("function") or {}
            call["name"] += function.get("name") or ""
            call["arguments"] += function.get("arguments") or ""
        if choice["finish_reason"] is not None:
            finish = choice["finish_reason"]
    text = "".join(content)
    message: dict[str, Any] = {"role": role, "content": text if text or not calls else None}
    if reasoning is not None:
        message[reasoning_field] = "".join(reasoning)
    if calls:
        assert sorted(calls) == list(range(len(calls))), "tool call indexes must count from 0"
        message["tool_calls"] = [
            {
                "id": calls[i]["id"],
                "type": "function",
                "function": {"name": calls[i]["name"], "arguments": calls[i]["arguments"]},
            }
            for i in range(len(calls))
        ]
    assert finish is not None, "no chunk carried a finish_reason"
    return message, finish


def check_chunk_shapes(chunks: list[dict[str, Any]], reasoning_field: str = "reasoning_content") -> None:
    """The sequence rules OpenAI streams follow, beyond what each chunk's type allows."""
    assert len(chunks) >= 2
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)
        assert chunk["object"] == "chat.completion.chunk"
        assert chunk["id"] == chunks[0]["id"] and chunk["id"].startswith("chatcmpl-")
        assert chunk["created"] == chunks[0]["created"] and chunk["model"] == chunks[0]["model"]
        assert len(chunk["choices"]) == 1 and chunk["choices"][0]["index"] == 0
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    last = chunks[-1]["choices"][0]
    assert last["delta"] == {} and last["finish_reason"] in ("stop", "tool_calls", "length")
    assert all(chunk["choices"][0]["finish_reason"] is None for chunk in chunks[:-1])
    headers: set[int] = set()
    allowed = {"content", reasoning_field, "tool_calls"}
    for chunk in chunks[1:-1]:
        delta = chunk["choices"][0]["delta"]
        assert len(delta) == 1 and set(delta) <= allowed, delta
        (value,) = delta.values()
        assert value, "no empty deltas between the first and the last chunk"
        for call in delta.get("tool_calls", []):
            if "id" in call:
                # The one header chunk of a call: everything but the arguments.
                assert call["index"] not in headers
                assert call["id"].startswith("call_") and call["type"] == "function"
                assert call["function"]["name"] and call["function"]["arguments"] == ""
                headers.add(call["index"])
            else:
                assert set(call) == {"index", "function"} and set(call["function"]) == {"arguments"}
                assert call["index"] in headers, "arguments before the call's header"
                assert call["function"]["arguments"]


# -- the cases themselves ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_parse_gives_the_hand_written_message(case: Case) -> None:
    result = codec_for(case).parse_detailed(case.completion, case.prompt, **case.options)
    assert without_ids(message_to_openai(result.message)) == expected_message(case)
    assert result.finish_reason == case.finish


# -- chunks --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", DELTA_SIZES, ids=lambda size: f"delta{size}" if size < 1000 else "whole")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_chunks_accumulate_to_the_parsed_message(case: Case, size: int) -> None:
    chunks, parser, _ = run_chunks(case, split(case.completion, size))
    check_chunk_shapes(chunks)
    message, finish = accumulate(chunks)
    assert without_ids(message) == expected_message(case)
    assert message == message_to_openai(parser.message)  # ids included: the same calls
    assert finish == case.finish == parser.finish_reason


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_openai_stream_state_accumulates_the_same_message(case: Case) -> None:
    """The ``openai`` package's own accumulator agrees with ours."""
    from openai.lib.streaming.chat import ChatCompletionStreamState

    chunks, parser, _ = run_chunks(case, split(case.completion, 3))
    state: Any = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    # The snapshot, not get_final_completion(): the latter refuses finish_reason "length".
    choice = state.current_completion_snapshot.choices[0]
    assert choice.finish_reason == case.finish
    assert (choice.message.content or None) == (case.content or None)
    assert getattr(choice.message, "reasoning_content", None) == case.reasoning
    calls = [(call.function.name, call.function.arguments) for call in choice.message.tool_calls or []]
    assert calls == list(case.calls)
    assert [call.id for call in choice.message.tool_calls or []] == [
        call.id for call in parser.message.tool_calls or []
    ]


@pytest.mark.parametrize("case", [c for c in CASES if c.reasoning], ids=lambda c: c.id)
def test_reasoning_field_option(case: Case) -> None:
    chunks, _, _ = run_chunks(case, split(case.completion, 4), reasoning_field="reasoning")
    check_chunk_shapes(chunks, reasoning_field="reasoning")
    assert not any("reasoning_content" in chunk["choices"][0]["delta"] for chunk in chunks)
    message, _ = accumulate(chunks, reasoning_field="reasoning")
    assert without_ids(message) == expected_message(case, reasoning_field="reasoning")


def test_chunks_for_a_known_completion_exactly() -> None:
    """The whole chunk sequence for one completion fed in four pieces, written out in full."""
    case = CASES[0]
    text = case.completion
    cut1 = text.index("Let me")
    cut2 = text.index('{"city"')
    cut3 = text.index('"unit"')
    deltas = [text[:cut1], text[cut1:cut2], text[cut2:cut3], text[cut3:]]
    chunks, parser, _ = run_chunks(case, deltas, id="chatcmpl-fixed", created=1700000000, model="qwen3-8b")
    call_id = parser.message.tool_calls[0].id
    head = {"id": "chatcmpl-fixed", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen3-8b"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    def args(text: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}

    header = {
        "tool_calls": [
            {"index": 0, "id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": ""}}
        ]
    }
    got = [chunk["choices"][0]["delta"] for chunk in chunks]
    # How much of the arguments each feed releases is the parser's business; the concatenation
    # and the order of kinds are not.
    assert got[:4] == [
        {"role": "assistant", "content": ""},
        {"reasoning_content": "The user wants the weather."},
        {"content": "Let me look that up."},
        header,
    ]
    assert got[-1] == {} and chunks[-1] == chunk({}, "tool_calls")
    assert "".join(d["tool_calls"][0]["function"]["arguments"] for d in got[4:-1]) == case.calls[0][1]
    assert all(d == args(d["tool_calls"][0]["function"]["arguments"]) for d in got[4:-1])
    assert chunks[0] == chunk({"role": "assistant", "content": ""})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), data=st.data())
def test_any_split_accumulates_to_the_same_message(case: Case, data: st.DataObject) -> None:
    text = case.completion
    cuts = sorted(data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=12)))
    deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    chunks, parser, _ = run_chunks(case, deltas)
    check_chunk_shapes(chunks)
    message, finish = accumulate(chunks)
    assert without_ids(message) == expected_message(case)
    assert finish == case.finish


def test_stray_delimiter_at_a_feed_boundary_inside_a_tool_call() -> None:
    codec = chatcodec.load("qwen3")
    deltas = ["<tool_call><tool_call>\n", '{"name": "x"}\n', "</tool_call><|im_end|>"]
    whole = codec.parse_detailed("".join(deltas))
    assert whole.finish_reason == "stop"  # the block is malformed, kept as content, and closed
    chunks, parser, adapter = run_chunks(Case("split", "qwen3", "", None), deltas)
    message, finish = accumulate(chunks)
    assert message == {"role": "assistant", "content": '<tool_call><tool_call>\n{"name": "x"}\n</tool_call>'}
    assert finish == "stop"
    assert [d.kind for d in adapter.diagnostics] == [d.kind for d in whole.diagnostics]


def test_deltas_are_the_chunks_without_their_envelope() -> None:
    codec = chatcodec.load("qwen3")
    text = '<think>hm</think>\n\nSure.<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'
    parser = codec.stream()
    events = [event for delta in split(text, 3) for event in parser.feed(delta)] + list(parser.close())
    chunk_adapter = ChunkAdapter("m", id="chatcmpl-x", created=1)
    chunks = chunk_adapter.chunks(events)
    deltas = ChunkAdapter("m").deltas(events)
    assert deltas == [chunk["choices"][0]["delta"] for chunk in chunks[1:]]
    assert deltas[-1] == {}
    assert deltas[0] == {"reasoning_content": "hm"}


# -- diagnostics, ids, misuse --------------------------------------------------------------------


def test_diagnostics_are_collected_not_sent() -> None:
    codec = chatcodec.load("qwen3")
    text = '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call><|im_end|>'
    parser = codec.stream(tools=["get_weather"])
    adapter = ChunkAdapter("m")
    chunks = list(stream_chunks(parser, split(text, 2), adapter))
    check_chunk_shapes(chunks)
    assert [d.kind for d in adapter.diagnostics] == ["unknown_tool"]
    assert adapter.diagnostics == parser.diagnostics
    message, finish = accumulate(chunks)
    assert message == {"role": "assistant", "content": text[: -len("<|im_end|>")]}
    assert finish == "stop"


def test_ids_and_created_are_injectable_and_fresh_otherwise() -> None:
    fixed = ChunkAdapter("m", id="chatcmpl-abc", created=123)
    assert fixed.start()[0]["id"] == "chatcmpl-abc" and fixed.created == 123
    first, second = ChunkAdapter("m"), ChunkAdapter("m")
    assert first.id != second.id and first.id.startswith("chatcmpl-")
    assert isinstance(first.created, int) and first.created > 1_600_000_000


def test_system_fingerprint_is_passed_through() -> None:
    chunk = ChunkAdapter("m", system_fingerprint="fp_1").start()[0]
    assert ChatCompletionChunk.model_validate(chunk).system_fingerprint == "fp_1"


def test_start_is_sent_once_and_merging_within_a_call() -> None:
    adapter = ChunkAdapter("m")
    assert len(adapter.start()) == 1 and adapter.start() == []
    chunks = adapter.chunks(
        [
            ContentDelta("a"),
            ContentDelta("b"),
            ToolCallStart(0, "call_x", "f"),
            ToolCallArgumentsDelta(0, "{"),
            ToolCallArgumentsDelta(0, "}"),
            ToolCallStart(1, "call_y", "g"),
            ToolCallArgumentsDelta(1, "[]"),
            Diagnostic("unexpected_text", 3, "x"),
            ToolCallEnd(1, "[]", []),
            Finish("tool_calls"),
        ]
    )
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas == [
        {"content": "ab"},
        {"tool_calls": [{"index": 0, "id": "call_x", "type": "function", "function": {"name": "f", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
        {"tool_calls": [{"index": 1, "id": "call_y", "type": "function", "function": {"name": "g", "arguments": ""}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": "[]"}}]},
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and adapter.done
    assert [d.kind for d in adapter.diagnostics] == ["unexpected_text"]


def test_argument_fragments_of_different_calls_do_not_merge() -> None:
    adapter = ChunkAdapter("m")
    adapter.start()
    fragments = [ToolCallArgumentsDelta(0, "[1"), ToolCallArgumentsDelta(1, "[2"), ToolCallArgumentsDelta(1, "]")]
    chunks = adapter.chunks(fragments)
    assert [chunk["choices"][0]["delta"]["tool_calls"] for chunk in chunks] == [
        [{"index": 0, "function": {"arguments": "[1"}}],
        [{"index": 1, "function": {"arguments": "[2]"}}],
    ]


def test_tool_call_end_completes_arguments_the_deltas_did_not_carry() -> None:
    adapter = ChunkAdapter("m")
    adapter.start()
    chunks = adapter.chunks([ToolCallStart(0, "call_x", "f"), ToolCallEnd(0, "{}", {}), Finish("tool_calls")])
    message, _ = accumulate(chunks)
    assert message["tool_calls"][0]["function"]["arguments"] == "{}"


def test_events_after_finish_are_refused() -> None:
    adapter = ChunkAdapter("m")
    adapter.chunks([Finish("stop")])
    with pytest.raises(ValueError):
        adapter.chunks([ContentDelta("late")])
    assert adapter.chunks([]) == []


def test_unknown_reasoning_field_is_refused() -> None:
    with pytest.raises(ValueError, match="reasoning_field"):
        ChunkAdapter("m", reasoning_field="content")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reasoning_field"):
        message_to_openai(Message(role="assistant", content="x"), reasoning_field="thoughts")  # type: ignore[arg-type]


# -- whole responses -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_completion_response_validates_and_carries_the_message(case: Case) -> None:
    result = codec_for(case).parse_detailed(case.completion, case.prompt, **case.options)
    response = completion_response(result, model="test-model", created=5, id="chatcmpl-x")
    validated = ChatCompletion.model_validate(response)
    assert validated.choices[0].finish_reason == case.finish
    assert response["object"] == "chat.completion" and response["created"] == 5
    assert without_ids(response["choices"][0]["message"]) == expected_message(case)
    assert [call.id for call in validated.choices[0].message.tool_calls or []] == [
        call.id for call in result.message.tool_calls or []
    ]


def test_completion_response_from_a_bare_message() -> None:
    call = ToolCall(id="call_1", function=FunctionCall(name="f", arguments='{"a": 1}'))
    with_call = Message(role="assistant", content=None, reasoning_content="why", tool_calls=[call])
    usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    response = completion_response(with_call, model="m", reasoning_field="reasoning", usage=usage)
    ChatCompletion.model_validate(response)
    assert response["choices"][0]["finish_reason"] == "tool_calls"
    assert response["choices"][0]["message"] == {
        "role": "assistant",
        "content": None,
        "reasoning": "why",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
    }
    assert response["usage"]["total_tokens"] == 7
    plain = completion_response(Message(role="assistant", content="hi"), model="m")
    assert plain["choices"][0]["finish_reason"] == "stop"
    truncated = completion_response(Message(role="assistant", content="hi"), model="m", finish_reason="length")
    assert truncated["choices"][0]["finish_reason"] == "length"


def test_message_to_openai_keeps_reasoning_after_content() -> None:
    message = Message(role="assistant", content="a", reasoning_content="b")
    assert list(message_to_openai(message)) == ["role", "content", "reasoning_content"]
    assert list(message_to_openai(message, reasoning_field="reasoning")) == ["role", "content", "reasoning"]


def test_a_name_holding_a_lone_surrogate_reads_back() -> None:
    # The text a model gives may hold a lone surrogate (a tokenizer that decodes bytes loosely):
    # a call's name with one converts to OpenAI's shape and back like any other name.
    text = '<tool_call>\n{"name": "get\ud800_weather", "arguments": {}}\n</tool_call>'
    message = chatcodec.load("qwen3").parse(text)
    assert message.tool_calls and message.tool_calls[0].function.name == "get\ud800_weather"
    assert Message.model_validate(message.to_openai()).model_dump() == message.model_dump()
    with pytest.raises(ValueError, match="at least 1 character"):
        FunctionCall(name="")


def http_library() -> Any:
    """The HTTP package the installed ``openai`` client is built on (``httpx`` or a fork of it),
    for its in-memory ``MockTransport``."""
    import importlib

    client_base = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    library = importlib.import_module(client_base.__module__.split(".")[0])
    if not hasattr(library, "MockTransport"):
        pytest.skip(f"{library.__name__} has no MockTransport")
    return library


# -- Server-Sent Events --------------------------------------------------------------------------


def test_sse_frames() -> None:
    chunk = ChunkAdapter("m", id="chatcmpl-1", created=1).chunks([ContentDelta("two\nlines\r\n «ü» \u2028")])[1]
    frame = to_sse(chunk)
    assert frame.startswith("data: {") and frame.endswith("}\n\n")
    assert frame.count("\n") == 2 and "\r" not in frame  # one data line, then the blank line
    assert json.loads(frame[len("data: ") : -2]) == chunk
    assert "«ü»" in frame  # UTF-8 text stays readable
    assert SSE_DONE == "data: [DONE]\n\n"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_the_openai_client_reads_our_sse_stream(case: Case) -> None:
    """Serve the SSE frames to the real ``openai`` client over an in-memory transport."""
    httpx = http_library()
    chunks, parser, _ = run_chunks(case, split(case.completion, 3), model="served")
    body = "".join(to_sse(chunk) for chunk in chunks) + SSE_DONE

    def handler(request: Any) -> Any:
        assert json.loads(request.content)["stream"] is True
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode("utf-8"))

    client = openai.OpenAI(
        api_key="unused", base_url="http://test/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    stream = client.chat.completions.create(model="served", messages=[{"role": "user", "content": "x"}], stream=True)
    received = list(stream)
    assert [chunk.model_dump(exclude_unset=True) for chunk in received] == [
        ChatCompletionChunk.model_validate(chunk).model_dump(exclude_unset=True) for chunk in chunks
    ]
    message, finish = accumulate([chunk.model_dump(exclude_unset=True) for chunk in received])
    assert without_ids(message) == expected_message(case) and finish == case.finish


def test_the_openai_client_reads_a_whole_response() -> None:
    httpx = http_library()
    case = CASES[0]
    response = completion_response(codec_for(case).parse_detailed(case.completion), model="served")

    def handler(request: Any) -> Any:
        return httpx.Response(200, json=response)

    client = openai.OpenAI(
        api_key="unused", base_url="http://test/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    completion = client.chat.completions.create(model="served", messages=[{"role": "user", "content": "x"}])
    message = completion.choices[0].message
    assert message.content == case.content
    assert getattr(message, "reasoning_content", None) == case.reasoning
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls or []] == list(case.calls)
    assert completion.choices[0].finish_reason == "tool_calls"
