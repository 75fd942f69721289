"""Properties of the parser that hold for all inputs: render -> parse inverts, any chunking gives
the same result, spans tile the input, and no text makes lenient parsing raise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from parsing_support import FAMILIES, feed_in_chunks, normalized, summarize

import chatcodec
from chatcodec.events import ContentDelta, ReasoningDelta, ToolCallArgumentsDelta


CODECS = {name: chatcodec.load(name) for name in FAMILIES}
SPELLINGS = {name: sorted(CODECS[name].format.grammar.spellings, key=len) for name in FAMILIES}

# Text that exercises escaping and the characters delimiters are made of.
ALPHABET = st.sampled_from(
    list("abcxyz XYZ019.,;:!?-_'\"\\/{}[]()<>|=&%$#@*+~`")
    + ["\n", "\t", "é", "ß", "日", "本", "😀", "🚀", "｜", "▁", "\u2028"]
)
text = st.text(alphabet=ALPHABET, max_size=40)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(alphabet=ALPHABET, max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(alphabet=ALPHABET, min_size=1, max_size=6), children, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(alphabet=ALPHABET, min_size=1, max_size=8), json_values, max_size=4)
tool_names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)


def free_of_delimiters(family: str, value: str) -> bool:
    return not any(spelling.strip() and spelling in value for spelling in SPELLINGS[family])


def clean(value: str) -> str:
    # Templates trim or strip edges (Llama's |trim, Qwen's strip('\n')): keep edges non-blank.
    return value.strip()


@st.composite
def assistant_messages(draw: Any, family: str) -> dict[str, Any]:
    content = clean(draw(text))
    assume(free_of_delimiters(family, content))
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if family == "qwen3" and draw(st.booleans()):
        reasoning = clean(draw(text))
        assume(free_of_delimiters(family, reasoning))
        if reasoning:
            message["reasoning_content"] = reasoning
    calls = draw(st.lists(st.tuples(tool_names, arguments), max_size=3))
    if calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": name, "arguments": args}} for name, args in calls
        ]
        for _, args in calls:
            assume(free_of_delimiters(family, json.dumps(args, ensure_ascii=False)))
    return message


def expected_message(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    content = message["content"]
    out: dict[str, Any] = {"role": "assistant", "content": content if content or not calls else None}
    if message.get("reasoning_content"):
        out["reasoning_content"] = message["reasoning_content"]
    if calls:
        out["tool_calls"] = [
            {
                "id": "ID",
                "type": "function",
                "function": {
                    "name": call["function"]["name"],
                    "arguments": json.dumps(call["function"]["arguments"], ensure_ascii=False),
                },
            }
            for call in calls
        ]
    return out


def render_and_split(family: str, message: dict[str, Any], kwargs: dict[str, Any]) -> tuple[str, str]:
    codec = CODECS[family]
    history = [{"role": "user", "content": "Question?"}]
    prompt = codec.render(history, add_generation_prompt=True, **kwargs)
    full = codec.render(history + [message], **kwargs)
    assert full.startswith(prompt), "the template's generation prompt is not a prefix of the reply"
    return prompt, full[len(prompt) :]


def check_round_trip(family: str, message: dict[str, Any], kwargs: dict[str, Any]) -> None:
    prompt, completion = render_and_split(family, message, kwargs)
    result = CODECS[family].parse_detailed(completion, prompt)
    assert normalized(result.message) == expected_message(message)
    assert result.diagnostics == []
    assert result.reassemble() == completion


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_qwen3_render_then_parse_gives_the_message_back(data: st.DataObject) -> None:
    message = data.draw(assistant_messages("qwen3"))
    thinking = data.draw(st.sampled_from([{}, {"enable_thinking": True}, {"enable_thinking": False}]))
    if thinking.get("enable_thinking") is False:
        # The prompt already closed an empty think block: a reply has no reasoning.
        message.pop("reasoning_content", None)
    check_round_trip("qwen3", message, thinking)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_deepseek_render_then_parse_gives_the_message_back(data: st.DataObject) -> None:
    message = data.draw(assistant_messages("deepseek"))
    check_round_trip("deepseek", message, {})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_llama3_hermes_render_then_parse_gives_the_message_back(data: st.DataObject) -> None:
    message = data.draw(assistant_messages("llama3_hermes"))
    check_round_trip("llama3_hermes", message, {})


@st.composite
def noisy_completions(draw: Any, family: str) -> str:
    """Delimiter spellings (whole and cut short) mixed with arbitrary text."""
    spellings = SPELLINGS[family]
    parts = draw(
        st.lists(
            st.one_of(
                text,
                st.sampled_from(spellings),
                st.sampled_from(spellings).map(lambda s: s[: max(1, len(s) // 2)]),
                st.sampled_from(['{"name": "f", "arguments": {"a": "', '"}}', '{"x": [1, {"y": "}"}]}', "{}"]),
            ),
            max_size=14,
        )
    )
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FAMILIES), st.data())
def test_any_chunking_gives_the_same_result(family: str, data: st.DataObject) -> None:
    completion = data.draw(noisy_completions(family))
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=6))
    reasoning = data.draw(st.sampled_from([None, True, False])) if family != "llama3_hermes" else None
    codec = CODECS[family]
    whole_events, whole = feed_in_chunks(codec, completion, [max(1, len(completion))], reasoning=reasoning)
    events, chunked = feed_in_chunks(codec, completion, sizes, reasoning=reasoning)
    assert normalized(chunked.message) == normalized(whole.message)
    assert chunked.finish_reason == whole.finish_reason
    assert chunked.diagnostics == whole.diagnostics
    assert chunked.spans == whole.spans
    a, b = summarize(events), summarize(whole_events)
    for summary in (a, b):
        for call in summary["calls"].values():
            call.pop("id")
    assert a == b


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FAMILIES), st.data())
def test_spans_tile_the_input_and_deltas_match_the_message(family: str, data: st.DataObject) -> None:
    completion = data.draw(st.one_of(noisy_completions(family), st.text(max_size=80)))
    events, result = feed_in_chunks(CODECS[family], completion, [3])
    assert result.reassemble() == completion
    position = 0
    for span in result.spans:
        assert span.start == position and span.end > span.start
        position = span.end
    assert position == len(completion)
    message = result.message
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == (message.content or "")
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == (message.reasoning_content or "")
    for index, call in enumerate(message.tool_calls or []):
        fragments = [e.text for e in events if isinstance(e, ToolCallArgumentsDelta) and e.index == index]
        assert "".join(fragments) == call.function.arguments


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FAMILIES), st.text(max_size=200), st.sampled_from([None, True, False]))
def test_lenient_parsing_never_raises(family: str, completion: str, reasoning: bool | None) -> None:
    result = CODECS[family].parse_detailed(completion, reasoning=None if family == "llama3_hermes" else reasoning)
    assert result.reassemble() == completion


_MATCHERS = {
    "qwen3 content": (["\n<tool_call>\n", "\n<tool_call>", "<tool_call>\n", "<tool_call>", "<|im_end|>"], ["</think>"]),
    "two leads": (["[TOOL_CALLS]", "</s>", " [ARGS]"], ["<|im_end|>"]),
    # Spellings found only after whitespace: their bare form alone is a false start.
    "fences": (["\n```json\n", "\n```<|end|>", "</think>"], ["<｜tool▁sep｜>"]),
    # One lead, and spellings found only after whitespace: the lead's own regex finds each
    # bare form, and only the whitespace before it is looked at.
    "one lead, fences": (["\n```json\n", "\n```<|end|>"], ["\n\n```"]),
    # A spelling of one lead holding one of another (DeepSeek V3's closing fence).
    "nested": (["\n```<｜tool▁call▁end｜>", "```<｜tool▁call▁end｜>", "<｜tool▁call▁end｜>"], ["<think>"]),
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_MATCHERS)), st.data())
def test_the_matchers_fast_find_is_the_regex_search(name: str, data: st.DataObject) -> None:
    # ``find`` looks for the spellings' first characters with str.find and tries the regex just
    # before each; it must give exactly the regex's own leftmost match, in text thick or thin
    # with those characters (past a couple of false starts each lead's own regex takes over).
    from chatcodec.parse.lexer import DelimiterMatcher

    accepted, others = _MATCHERS[name]
    matcher = DelimiterMatcher({s: f"T{i}" for i, s in enumerate(accepted)}, {s: f"O{i}" for i, s in enumerate(others)})
    assert matcher._leads  # the fast way is the one under test
    pieces = st.sampled_from([*accepted, *others, "<", "[", "\n", " ", "\n\n", "x" * 40, "tool_call>", "/s>", "`", "```json\n", "```", "a < b `c` <", "```json", "x```json\n" * 5])
    filler = "x" * data.draw(st.integers(0, 120))  # long enough for the str.find way
    text = filler + "".join(data.draw(st.lists(pieces | st.text(max_size=5), min_size=1, max_size=60)))
    pos = data.draw(st.integers(0, min(len(text), 12)))
    end = data.draw(st.sampled_from([len(text), len(text) - 1])) if len(text) > pos else pos
    fast = matcher.find(text, pos, end)
    slow = matcher.pattern.search(text, pos, end)
    assert (fast and fast.span()) == (slow and slow.span())


@pytest.mark.parametrize("name", ["fences", "one lead, fences"])
@pytest.mark.parametrize("repeats", [3, 6, 12, 40])
def test_the_fast_find_past_many_false_starts(name: str, repeats: int) -> None:
    # A backtick is a false start here, and so is a fence written without the newline its
    # spelling needs: past a couple of each kind the search changes strategy.
    from chatcodec.parse.lexer import DelimiterMatcher

    accepted, others = _MATCHERS[name]
    matcher = DelimiterMatcher({s: f"T{i}" for i, s in enumerate(accepted)}, {s: f"O{i}" for i, s in enumerate(others)})
    for tail in ("</think>", "\n```json\n", "no delimiter"):
        text = "x" * 70 + "x```json\n" * repeats + tail
        fast = matcher.find(text, 0, len(text))
        slow = matcher.pattern.search(text, 0, len(text))
        assert (fast and fast.span()) == (slow and slow.span())


@pytest.mark.parametrize("name", sorted(_MATCHERS))
@pytest.mark.parametrize("distance", [0, 1, 150, 200, 255, 256, 257, 600, 2049, 9000, 40000])
def test_the_fast_find_far_past_the_false_starts(name: str, distance: int) -> None:
    # Past its false starts the search looks through stretches that double: a spelling just
    # inside, just past or far past a stretch's end is found where the regex finds it.
    from chatcodec.parse.lexer import DelimiterMatcher

    accepted, others = _MATCHERS[name]
    matcher = DelimiterMatcher({s: f"T{i}" for i, s in enumerate(accepted)}, {s: f"O{i}" for i, s in enumerate(others)})
    false_starts = "a < b `c` [x] <u8> ``` " * 4
    for spelling in [*accepted, *others, "no delimiter"]:
        text = "x" * 80 + false_starts + "y" * distance + spelling + "z" * 10
        for pos, end in ((0, len(text)), (0, len(text) - 10), (85, len(text))):
            fast = matcher.find(text, pos, end)
            slow = matcher.pattern.search(text, pos, end)
            assert (fast and fast.span()) == (slow and slow.span()), (spelling, pos, end)


# A call's arguments as models write them: nested, with strings that hold quotes, backslashes,
# brackets and the format's own delimiters (text inside a string).
_ARGUMENT_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(st.sampled_from(list('ab "\\{}[]<>/:,\né😀') + ["</tool_call>", "<tool_call>"]), max_size=8).map("".join),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text("abc", max_size=3), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text("xyz", min_size=1, max_size=3), _ARGUMENT_VALUES, max_size=4),
    st.booleans(),
    st.lists(st.integers(1, 9), min_size=1, max_size=5),
)
def test_a_calls_arguments_streamed_in_any_deltas_are_read_as_at_once(
    arguments: dict[str, Any], ascii_only: bool, sizes: list[int]
) -> None:
    # Most deltas of a call take the stream's arguments lane (a string's text, a number, a
    # member that does not close the object); a delta that closes the arguments, or one that
    # holds a delimiter outside a string, must leave it and read the rest as one-shot does.
    written = json.dumps(arguments, ensure_ascii=ascii_only)
    completion = f'<think>\nok\n</think>\n\nSure.\n<tool_call>\n{{"name": "f", "arguments": {written}}}\n</tool_call>'
    codec = CODECS["qwen3"]
    whole_events, whole = feed_in_chunks(codec, completion, [len(completion)], reasoning=None)
    events, chunked = feed_in_chunks(codec, completion, sizes, reasoning=None)
    assert normalized(chunked.message) == normalized(whole.message)
    assert chunked.spans == whole.spans and chunked.diagnostics == whole.diagnostics == []
    (call,) = chunked.message.tool_calls or []
    assert json.loads(call.function.arguments) == arguments
    streamed = "".join(event.text for event in events if isinstance(event, ToolCallArgumentsDelta))
    assert streamed == call.function.arguments == written
