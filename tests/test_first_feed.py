"""A stream's first delta holding a whole completion is read the one-shot way (``first_feed``).

The stream must not tell: the events of that delta (once adjacent deltas of a channel are
joined), the events of ``close()``, the message, finish reason, diagnostics and spans are the
ones the engine gives when it reads the same delta, and more text fed after it, or a property
asked before ``close()``, continues exactly as the engine would. The reference is the same
parser with the one-shot way switched off.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatcodec
from chatcodec.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from chatcodec.parse.first_feed import MIN_WHOLE_FEED
from chatcodec.parse.stream import StreamParser
from test_whole_text import FAST_TEMPLATES, FUZZ_FORMATS, _answers, _inputs, _key, fuzz

_INVENTED_ID = re.compile(r"call_[0-9a-f]{24}|[A-Za-z0-9]{9}")  # OpenAI-style, or Mistral's nine letters and digits
PROSE = "Weighing the request against what the tools can do, one step at a time. " * 5


def _canonical(events: list[Event]) -> list[tuple[Any, ...]]:
    """Events with adjacent deltas of one channel (or one call's arguments) joined and the
    randomly invented call ids blanked: what a client builds from them."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, (ContentDelta, ReasoningDelta)):
            key: tuple[Any, ...] = (type(event).__name__, event.text)
        elif isinstance(event, ToolCallArgumentsDelta):
            key = ("arguments", event.index, event.text)
        elif isinstance(event, ToolCallStart):
            key = ("start", event.index, None if _INVENTED_ID.fullmatch(event.id) else event.id, event.name)
        elif isinstance(event, ToolCallEnd):
            key = ("end", event.index, event.arguments, event.parsed, event.id)
        else:
            key = (repr(event),)
        if out and key[0] in ("ContentDelta", "ReasoningDelta") and out[-1][0] == key[0]:
            out[-1] = (key[0], out[-1][1] + key[1])
        elif out and key[0] == "arguments" and out[-1][:2] == key[:2]:
            out[-1] = ("arguments", key[1], out[-1][2] + key[2])
        elif key[0] in ("ContentDelta", "ReasoningDelta", "arguments") and not key[-1]:
            continue  # (an empty delta says nothing)
        else:
            out.append(key)
    return out


def _parsers(codec: chatcodec.Codec, **options: Any) -> tuple[StreamParser, StreamParser]:
    """A parser as a caller gets it, and the same parser reading every delta with the engine."""
    fast, engine = codec.stream(**options), codec.stream(**options)
    engine._whole_prefill = None
    return fast, engine


def _took_the_one_shot_way(parser: StreamParser) -> bool:
    return parser._read_whole is not None


def _same_run(codec: chatcodec.Codec, deltas: list[str], **options: Any) -> bool:
    """Feed both parsers the deltas and close them; everything must agree. Whether the first
    delta was read the one-shot way."""
    fast, engine = _parsers(codec, **options)
    took = False
    announced: list[str] = []
    for number, delta in enumerate(deltas):
        got, expected = fast.feed(delta), engine.feed(delta)
        took = took or (number == 0 and _took_the_one_shot_way(fast))
        assert _canonical(got) == _canonical(expected), (number, delta)
        announced += [event.id for event in got if isinstance(event, ToolCallStart)]
    closing = fast.close()
    assert _canonical(closing) == _canonical(engine.close())
    # (A call inside a reasoning block is announced when the block's end, or the text's, says
    # it was one: at close() where the block never ends.)
    announced += [event.id for event in closing if isinstance(event, ToolCallStart)]
    assert _key(fast.result()) == _key(engine.result())
    # The ids the events gave out are the message's, though the engine read the text again.
    assert announced == [call.id for call in fast.result().message.tool_calls or []]
    assert (fast.finish_reason, fast.state, fast.spans_end) == (engine.finish_reason, engine.state, engine.spans_end)
    return took


def _long_answers(path: Path) -> list[tuple[chatcodec.Codec, str, str | None]]:
    known = _answers(path)
    assert known is not None
    codec, _, answers = known
    lengthened = []
    for answer, prompt in answers:
        if len(answer) < MIN_WHOLE_FEED:
            answer = PROSE + answer  # (leading prose: content, or the reasoning a prompt opened)
        lengthened.append((codec, answer, prompt))
        if answer.rstrip() != answer:
            # (Where a turn's header begins with a newline, a trailing one may begin the next
            # header: the engine holds it back until ``close()``, and so must the one-shot way.
            # A model stopping at its end token writes none.)
            lengthened.append((codec, answer.rstrip(), prompt))
    return lengthened


# (Templates with no answer of their own write nothing for the fuzzer to read.)
ANSWERING = [path for path in FAST_TEMPLATES if _long_answers(path)]


@pytest.mark.parametrize("path", ANSWERING, ids=lambda path: path.stem)
def test_a_whole_answer_in_one_delta_reads_as_the_engine_reads_it(path: Path) -> None:
    taken = 0
    for codec, answer, prompt in _long_answers(path):
        for options in ({"prompt": prompt, "tools": fuzz.TOOLS}, {"prompt": None}):
            taken += _same_run(codec, [answer], **options)
    # The way must be taken, or this would compare the engine with itself.
    assert taken > 0


def test_most_templates_take_the_one_shot_way() -> None:
    taking = 0
    for path in ANSWERING:
        codec, answer, prompt = _long_answers(path)[0]
        fast, _ = _parsers(codec, prompt=prompt)
        fast.feed(answer)
        taking += _took_the_one_shot_way(fast)
    assert taking >= 0.8 * len(ANSWERING)


QWEN_ANSWER = (
    "<think>\n" + PROSE + "\n</think>\n\nI will look it up.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
)


def test_more_text_after_a_whole_first_delta_goes_on_as_the_engine_would() -> None:
    codec = chatcodec.load("qwen3")
    head = QWEN_ANSWER[: QWEN_ANSWER.index("<|im_end|>")]
    assert _same_run(codec, [head, '\n<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>', "<|im_end|>"])
    assert _same_run(codec, [head, "", "<|im_end|>"])
    assert _same_run(codec, [QWEN_ANSWER, "trailing"])


def test_a_property_asked_before_close_is_the_engines() -> None:
    codec = chatcodec.load("qwen3")
    head = QWEN_ANSWER[: QWEN_ANSWER.index("<|im_end|>")]
    for ask in ("message", "state", "diagnostics", "spans", "spans_end", "finish_reason"):
        fast, engine = _parsers(codec)
        fast.feed(head)
        engine.feed(head)
        assert _took_the_one_shot_way(fast)
        got, expected = getattr(fast, ask), getattr(engine, ask)
        if ask == "message":
            assert _key_of_message(got) == _key_of_message(expected)
        else:
            assert got == expected, ask
        # ... and the stream goes on the engine's way.
        assert _canonical(fast.feed("<|im_end|>")) == _canonical(engine.feed("<|im_end|>"))
        assert _canonical(fast.close()) == _canonical(engine.close())
        assert _key(fast.result()) == _key(engine.result())


def _key_of_message(message: chatcodec.Message) -> dict[str, Any]:
    data = message.model_dump()
    for call in data.get("tool_calls") or []:
        call["id"] = None if _INVENTED_ID.fullmatch(call["id"]) else call["id"]
    return data


@pytest.mark.parametrize("tail", ["<tool_ca", "<", "<|im_e", "\n<tool_call", "\n"])
def test_a_text_ending_where_a_delimiter_may_begin_gives_that_tail_at_close(tail: str) -> None:
    # The engine gives such a tail only at ``close()`` (as content, or as the delimiter more
    # text makes of it); read the one-shot way, the stream holds it back the same.
    codec = chatcodec.load("qwen3")
    text = "<think>\n" + PROSE + "</think>\n\nSure." + tail
    assert _same_run(codec, [text]) is True
    assert _same_run(codec, [text, "d"]) is True
    fast = codec.stream()
    given = fast.feed(text)
    assert isinstance(given[-1], ContentDelta) and given[-1].text == "Sure."
    assert fast.close()[0] == ContentDelta(tail)
    assert fast.message.content == "Sure." + tail


def test_a_reasoning_close_written_twice_cut_in_the_first_delta_is_the_engines() -> None:
    # Found by the fuzz harness: a first delta that ends inside a reasoning close written a
    # second time (``\n</think>\n\n\n</``). The state read the one-shot way held only ``</``,
    # where the engine holds the whole ``\n</`` (it looks for the close again): the newline was
    # given as content, then read as the close's. Where the two may differ, the engine reads it.
    codec = chatcodec.load("qwen3")
    text = "<think>\n" + PROSE + "\n</think>\n\n\n</think>\n\nThe answer."
    cut = text.rindex("</think>") + 2
    assert _same_run(codec, [text[:cut], text[cut:]]) is False


def test_a_tail_the_state_does_not_hold_is_given_at_once() -> None:
    # The grammar spells "\n"-led delimiters, but a state does not look for spellings that
    # begin with whitespace (their bare form is looked for): the engine gives a content's last
    # newline at once, and so does a stream reading the text the one-shot way.
    deci = chatcodec.load(_TEMPLATES / "Deci-DeciLM-7B-instruct.jinja")
    text = PROSE + "Plain answer.\n"
    assert _same_run(deci, [text]) is True
    fast = deci.stream()
    assert fast.feed(text)[-1] == ContentDelta(text)


def test_a_delimiter_at_the_end_is_no_reason_to_decline() -> None:
    # "\n</think>" may still become "\n</think>\n\n": held back, but it gives no event.
    codec = chatcodec.load("qwen3")
    assert _same_run(codec, ["<think>\n" + PROSE + "\n</think>"])
    assert _same_run(codec, ["<think>\n" + PROSE + "\n</think>", "\n\nDone."])


def test_a_first_delta_with_something_odd_is_the_engines() -> None:
    codec = chatcodec.load("qwen3")
    text = PROSE + '<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>'
    fast, _ = _parsers(codec, tools=fuzz.TOOLS)
    fast.feed(text)
    assert not _took_the_one_shot_way(fast)
    assert not _same_run(codec, [text], tools=fuzz.TOOLS)


def test_a_short_or_later_delta_is_the_engines() -> None:
    codec = chatcodec.load("qwen3")
    fast, _ = _parsers(codec)
    fast.feed(QWEN_ANSWER[:MIN_WHOLE_FEED - 1])
    assert not _took_the_one_shot_way(fast)
    fast, _ = _parsers(codec)
    fast.feed("Hi")
    fast.feed(QWEN_ANSWER)
    assert not _took_the_one_shot_way(fast)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FUZZ_FORMATS), st.data())
def test_any_cut_of_a_long_answer_reads_the_same(name: str, data: st.DataObject) -> None:
    inputs = _inputs(name)
    answer = PROSE + data.draw(st.sampled_from(inputs.valid))
    first = data.draw(st.integers(MIN_WHOLE_FEED, len(answer)))
    rest = answer[first:]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(rest)), max_size=4)))
    deltas = [answer[:first]] + [rest[a:b] for a, b in zip([0, *cuts], [*cuts, len(rest)])]
    prompt = data.draw(st.sampled_from([inputs.prompt, None]))
    tools = data.draw(st.sampled_from([fuzz.TOOLS, None]))
    _same_run(inputs.codec, deltas, prompt=prompt, tools=tools)


@pytest.mark.parametrize("name", sorted(fuzz.FORMATS))
def test_a_first_delta_that_ends_with_a_delimiter_goes_on_as_the_engine_would(name: str) -> None:
    # A first delta cut right after a delimiter that begins a longer spelling (InternLM2's
    # ``<|action_end|>`` and ``<|action_end|>\n``), then the rest: the engine holds that
    # delimiter back, and the end of the call it closes was given twice.
    inputs = _inputs(name)
    codec = inputs.codec
    spellings = codec.format.grammar.spellings
    for answer in inputs.valid:
        answer = PROSE + answer
        spans = codec.parse_detailed(answer, prompt=inputs.prompt, tools=fuzz.TOOLS).spans
        for span in spans:
            written = answer[span.start : span.end]
            begins_another = any(len(other) > len(written) and other.startswith(written) for other in spellings)
            if span.kind == "delimiter" and span.end >= MIN_WHOLE_FEED and span.end < len(answer) and begins_another:
                _same_run(codec, [answer[: span.end], answer[span.end :]], prompt=inputs.prompt, tools=fuzz.TOOLS)


def _longest_held_tail(spellings: list[str], text: str) -> int | None:
    """Where the longest tail of ``text`` that is a proper prefix of a spelling starts: the
    definition, one position at a time."""
    for at in range(len(text)):
        tail = text[at:]
        if any(len(spelling) > len(tail) and spelling.startswith(tail) for spelling in spellings):
            return at
    return None


_TEMPLATES = Path(__file__).resolve().parent / "templates"


@pytest.mark.parametrize("name", ["qwen3", "deepseek", "Cohere-command-a-reasoning-08-2025.jinja"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_held_tail_is_the_longest_prefix_of_a_spelling(name: str, data: st.DataObject) -> None:
    # (The Cohere template spells a default system prompt of some 6,000 characters: its
    # prefixes are looked for directly, not kept.)
    from chatcodec.parse.held import HeldTails
    from template_corpus import special_tokens

    path = _TEMPLATES / name
    codec = chatcodec.load(path, special_tokens=special_tokens(path)) if path.exists() else chatcodec.load(name)
    grammar = codec.format.grammar
    spellings = sorted(grammar.spellings)
    spelling = data.draw(st.sampled_from(spellings))
    before = data.draw(st.sampled_from(spellings + ["", "prose ", "\n", " <"]))
    text = "x" + before[: data.draw(st.integers(0, 40))] + spelling[: data.draw(st.integers(1, len(spelling)))]
    assert HeldTails(grammar.spellings).start(text) == _longest_held_tail(spellings, text)


def test_a_whole_first_delta_builds_no_engine_and_more_text_does() -> None:
    # A server that builds a parser per request and feeds it the whole completion pays for
    # the one-shot reading alone; the engine and the assembler come when more text does.
    qwen3 = chatcodec.load("qwen3")
    answer = PROSE + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    parser = qwen3.stream(tools=["get_weather"])
    assert "_engine" not in vars(parser) and "_assembler" not in vars(parser)
    parser.feed(answer)
    parser.close()
    assert parser.message.tool_calls and parser.message.tool_calls[0].function.name == "get_weather"
    assert "_engine" not in vars(parser) and "_assembler" not in vars(parser)
    resumed = qwen3.stream(tools=["get_weather"])
    resumed.feed(answer)
    resumed.feed(" ")
    assert "_engine" in vars(resumed)
    resumed.close()
    assert resumed.message.content == PROSE + " "


def test_a_parser_never_fed_answers_from_the_engine_it_builds() -> None:
    parser = chatcodec.load("qwen3").stream(reasoning=True)
    assert parser.close()[-1].reason == "length"  # type: ignore[union-attr]  # (inside <think>)
    assert parser.message.content == "" and parser.message.reasoning_content is None


@pytest.mark.parametrize(
    ("name", "section", "one_shot"),
    [
        (
            "kimi",
            '<|tool_calls_section_begin|> <|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"query": "x"}'
            "<|tool_call_end|><|tool_calls_section_end|>",
            True,
        ),
        (
            "deepseek_v3_1",
            '<｜tool▁calls▁begin｜>\n<｜tool▁call▁begin｜>search<｜tool▁sep｜>{"query": "x"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            False,
        ),
    ],
)
def test_whitespace_after_a_section_opener_comes_before_the_call(name: str, section: str, one_shot: bool) -> None:
    # The whitespace is content written before the call: every way of reading the text gives
    # it before the call's start (the engine once held it until the call's end).
    codec = fuzz.load(name)
    text = PROSE + section
    assert _same_run(codec, [text], tools=fuzz.TOOLS) == one_shot
    streamed = codec.stream(tools=fuzz.TOOLS)
    events = [event for character in text for event in streamed.feed(character)] + streamed.close()
    whole = codec.stream(tools=fuzz.TOOLS)
    assert _canonical(events) == _canonical(whole.feed(text) + whole.close())
    opener_length = section.index(">") + 1  # (the whitespace after the opener, then a call)
    whitespace = section[opener_length : section.index("<", opener_length)]
    assert [key[:2] for key in _canonical(events)[:2]] == [("ContentDelta", PROSE + whitespace), ("start", 0)]
