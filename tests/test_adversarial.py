"""Adversarial model output: the parser stays linear, bounded in memory and lossless.

Nothing here measures wall-clock time (timings are noisy). Linearity is checked with counts
that do not depend on the machine:

* **work**: the number of Python and built-in function calls a parse makes, for an input and
  for one twice its size (a quadratic step shows as a ratio near 4, not 2);
* **lexer look-ups**: the characters the delimiter lexer is handed and examines on each feed,
  which must not grow with the text already read;
* **memory**: the ``tracemalloc`` peak of a parse, for an input and one twice its size.

Every case also checks that nothing was lost (the spans reassemble the input) and that lenient
parsing raised nothing.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from template_corpus import special_tokens, template

import chatcodec
from chatcodec import ParseError
from chatcodec.parse.assistant import AssistantAssembler
from chatcodec.events import Event, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.parse.json_scan import JsonWalk
from chatcodec.parse.lexer import DelimiterMatcher, Found
from chatcodec.parse.stream import ParseResult

# time(2n) / time(n) of a linear parser is 2; the checks allow a little for fixed costs.
MAX_GROWTH = 2.2
MB = 1_000_000
SMALL_DELTAS = (1, 2, 3, 5, 7)  # cycled: misaligned with every repeated unit below

DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
DS_END = "<｜end▁of▁sentence｜>"


def ds_call(name: str, arguments: str, *, close: bool = True) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}" + ("<｜tool▁call▁end｜>" if close else "")


def hermes_call(name: str, arguments: str, *, close: bool = True) -> str:
    return f'\n<tool_call>\n{{"name": "{name}", "arguments": {arguments}' + ("}\n</tool_call>" if close else "")


def call_text(family: str, arguments: str, *, name: str = "f", close: bool = True) -> str:
    """One tool call with raw ``arguments`` text, as the family writes it."""
    if family == "deepseek":
        return DS_CALLS_BEGIN + ds_call(name, arguments, close=close) + (DS_CALLS_END if close else "")
    return hermes_call(name, arguments, close=close)


# ---- feeding and measuring -----------------------------------------------------------------


def pieces_of(text: str, sizes: tuple[int, ...] | None) -> Iterator[str]:
    """``text`` whole (``sizes`` None) or cut into deltas of the given sizes, cycled."""
    if sizes is None:
        yield text
        return
    pos = 0
    index = 0
    while pos < len(text):
        size = sizes[index % len(sizes)]
        yield text[pos : pos + size]
        pos += size
        index += 1


@dataclass
class Parsed:
    result: ParseResult
    events: list[Event]
    feeds: int


def parse(family: str, text: str, sizes: tuple[int, ...] | None = None, **options: Any) -> Parsed:
    parser = chatcodec.load(family).stream(**options)
    events: list[Event] = []
    feeds = 0
    for delta in pieces_of(text, sizes):
        events += parser.feed(delta)
        feeds += 1
    events += parser.close()
    return Parsed(parser.result(), events, feeds)


def work(run: Callable[[], object]) -> int:
    """How many Python and built-in function calls ``run`` makes: a machine-independent
    measure of work (it grows like running time, without its noise)."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return count


def peak_memory(run: Callable[[], object]) -> int:
    """The ``tracemalloc`` peak while ``run`` runs, above what was allocated before."""
    already = tracemalloc.is_tracing()
    if not already:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not already:
            tracemalloc.stop()
    return peak - before


def growth(measure: Callable[[int], int], n: int) -> float:
    # Warm the per-grammar caches (parser states, matchers) with the longer input: it continues
    # the shorter one and may reach states the shorter one never does.
    measure(2 * n)
    return measure(2 * n) / measure(n)


# ---- adversarial inputs --------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """An adversarial input family: ``make(n)`` builds an input of about ``n`` characters."""

    name: str
    family: str
    make: Callable[[int], str]
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def repeated(unit: str, prefix: str = "") -> Callable[[int], str]:
    return lambda n: prefix + unit * max(1, n // len(unit))


def quotes_and_backslashes(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice('"\\') for _ in range(n))


def token_soup(family: str, seed: int = 11) -> Callable[[int], str]:
    """Random runs of delimiters, partial delimiters, quotes, brackets and text (no end token,
    which would leave the rest unparsed). ``make(2 * n)`` continues ``make(n)``."""
    common = ['"', "\\", "{", "}", "[", "]", "text ", " ", "\n", '"name": "f", "arguments": ']
    if family == "deepseek":
        tokens = common + [
            DS_CALLS_BEGIN,
            "<｜tool▁call▁begin｜>",
            "<｜tool▁sep｜>",
            "<｜tool▁call▁end｜>",
            DS_CALLS_END,
            "<｜tool▁",
            "<｜tool▁call",
            "</think>",
        ]
    else:
        tokens = common + ["<tool_call>\n", "\n<tool_call>", "\n</tool_call>", "</tool_call>", "<tool_", "<tool_call"]
        tokens += ["<think>\n", "\n</think>\n\n"] if family == "qwen3" else []

    def make(n: int) -> str:
        rng = random.Random(seed)
        parts: list[str] = []
        total = 0
        while total < n:
            parts.append(rng.choice(tokens))
            total += len(parts[-1])
        return "".join(parts)

    return make


def tiny_calls(family: str) -> Callable[[int], str]:
    """About ``n`` characters of back-to-back small tool calls."""

    def make(n: int) -> str:
        count = max(1, n // 45)
        if family == "deepseek":
            body = "".join(ds_call("f", f'{{"i": {i}}}') for i in range(count))
            return DS_CALLS_BEGIN + body + DS_CALLS_END + DS_END
        end = "<|im_end|>" if family == "qwen3" else "<|eot_id|>"
        return "".join(hermes_call("f", f'{{"i": {i}}}') for i in range(count)) + end

    return make


def nested(family: str, opener: str = "[", closer: str = "]") -> Callable[[int], str]:
    return lambda n: call_text(family, '{"a": ' + opener * n + closer * n + "}")


def unterminated_string(family: str) -> Callable[[int], str]:
    """A tool call whose arguments open a string that never closes; delimiters follow inside."""
    filler = 'x</tool_call><|im_end|><|eot_id|><｜tool▁call▁end｜><｜end▁of▁sentence｜>\\"\n'
    return lambda n: call_text(family, '{"a": "' + filler * max(1, n // len(filler)), close=False)


def in_json_string(family: str, body: Callable[[int], str]) -> Callable[[int], str]:
    """``body`` inside a tool call's JSON arguments, right after an opening quote (no close)."""
    return lambda n: call_text(family, '{"a": "' + body(n), close=False)


PARTIAL_DELIMITERS = [
    Case("qwen3 <tool_", "qwen3", repeated("<tool_")),
    Case("qwen3 <tool_ in reasoning", "qwen3", repeated("<tool_", prefix="<think>\n")),
    Case("llama3_hermes <tool_", "llama3_hermes", repeated("<tool_")),
    Case("deepseek <｜tool▁", "deepseek", repeated("<｜tool▁")),
    Case("deepseek <｜tool▁call", "deepseek", repeated("<｜tool▁call")),
    Case("deepseek <｜tool▁call in reasoning", "deepseek", repeated("<｜tool▁call"), {"reasoning": True}),
]

LINEAR_CASES = [
    *PARTIAL_DELIMITERS,
    Case("qwen3 nested brackets", "qwen3", lambda n: nested("qwen3")(n // 2)),
    Case("deepseek nested objects", "deepseek", lambda n: nested("deepseek", '{"a":', "}")(n // 8)),
    Case("qwen3 unterminated string", "qwen3", unterminated_string("qwen3")),
    Case("llama3_hermes unterminated string", "llama3_hermes", unterminated_string("llama3_hermes")),
    Case("deepseek unterminated string", "deepseek", unterminated_string("deepseek")),
    Case("qwen3 quotes in a string", "qwen3", in_json_string("qwen3", quotes_and_backslashes)),
    Case(
        "deepseek quotes in arguments",
        "deepseek",
        lambda n: call_text("deepseek", quotes_and_backslashes(n), close=False),
    ),
    Case("qwen3 tiny calls", "qwen3", tiny_calls("qwen3")),
    Case("llama3_hermes tiny calls", "llama3_hermes", tiny_calls("llama3_hermes")),
    Case("deepseek tiny calls", "deepseek", tiny_calls("deepseek")),
    Case("qwen3 token soup", "qwen3", token_soup("qwen3")),
    Case("deepseek token soup", "deepseek", token_soup("deepseek")),
    Case("llama3_hermes token soup", "llama3_hermes", token_soup("llama3_hermes")),
]


# ---- linear work and memory ----------------------------------------------------------------


@pytest.mark.parametrize("sizes", [None, SMALL_DELTAS], ids=["whole", "deltas"])
@pytest.mark.parametrize("case", LINEAR_CASES, ids=str)
def test_work_grows_linearly(case: Case, sizes: tuple[int, ...] | None) -> None:
    def measure(n: int) -> int:
        text = case.make(n)
        return work(lambda: parse(case.family, text, sizes, **case.options))

    ratio = growth(measure, 10_000)
    assert ratio <= MAX_GROWTH, f"{case}: twice the input took {ratio:.2f}x the work"


@pytest.mark.parametrize("case", [c for c in LINEAR_CASES if c not in PARTIAL_DELIMITERS], ids=str)
def test_memory_grows_linearly(case: Case) -> None:
    def measure(n: int) -> int:
        text = case.make(n)
        return peak_memory(lambda: parse(case.family, text, None, **case.options))

    ratio = growth(measure, 20_000)
    assert ratio <= MAX_GROWTH, f"{case}: twice the input took {ratio:.2f}x the memory"


# ---- 1 MB of partial delimiters ------------------------------------------------------------


def partial_delimiter_params() -> Iterator[Any]:
    for case in PARTIAL_DELIMITERS:
        yield pytest.param(case, None, id=f"{case}-whole")
        if "reasoning" not in case.name:  # the same lexing as in content, in another state
            yield pytest.param(case, SMALL_DELTAS, id=f"{case}-deltas")


@pytest.mark.parametrize(("case", "sizes"), list(partial_delimiter_params()))
def test_megabyte_of_partial_delimiters(case: Case, sizes: tuple[int, ...] | None) -> None:
    text = case.make(MB)
    parsed = parse(case.family, text, sizes, **case.options)
    result = parsed.result
    assert result.reassemble() == text
    assert not result.message.tool_calls
    body = text.removeprefix("<think>\n")
    if "<think>" in text or case.options.get("reasoning"):
        assert result.message.reasoning_content == body
        assert result.finish_reason == "length"  # the reasoning block never closed
    else:
        assert result.message.content == body
        assert result.finish_reason == "stop"
    assert result.diagnostics == []  # a partial delimiter is no delimiter at all
    # Held-back text is released with the next delta: at most one event per feed.
    assert len(parsed.events) <= parsed.feeds + 2


def test_partial_delimiters_use_memory_in_proportion() -> None:
    text = "<tool_" * (MB // 6)
    peak = peak_memory(lambda: parse("qwen3", text))
    assert peak <= 4 * len(text), f"{peak / len(text):.1f} bytes per character"


@pytest.mark.parametrize("whole", [True, False], ids=["codec.parse", "feed-close"])
def test_many_tool_calls_read_at_once_use_memory_in_proportion(whole: bool) -> None:
    # Each call's JSON is decoded once to find its end; a long text read at once must not keep
    # every call's decoded arguments alive until the end (in pieces waiting for the assembler,
    # or in the events), which took 11 times the input.
    arguments = json.dumps({"rows": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(40)]})
    text = "".join(call_text("qwen3", arguments) for _ in range(300)) + "<|im_end|>"
    codec = chatcodec.load("qwen3")
    codec.parse(text)  # tables and caches built before measuring

    def read() -> object:
        if whole:
            return codec.parse(text)
        parser = codec.stream()
        events = parser.feed(text) + parser.close()
        return parser.result(), events

    peak = peak_memory(read)
    assert peak <= 4 * len(text), f"{peak / len(text):.1f} bytes per character"


@pytest.mark.parametrize("family", ["qwen3", "deepseek", "llama3_hermes"])
def test_a_parse_leaves_nothing_for_the_cyclic_collector(family: str) -> None:
    # Everything a parse builds is freed by reference counting alone, the moment it is dropped:
    # a server parses one completion per request, and a parser in a reference cycle would keep
    # all it read (10 KB of completion: about 60 KB) until the next full collection. Streams
    # closed and not, the one-shot path and the general way (a malformed call), transcripts.
    codec = chatcodec.load(family)
    good = call_text(family, '{"city": "Paris", "days": [1, 2]}') + "done"
    broken = call_text(family, '{"city": "Par')
    transcript = codec.render(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ]
    )

    def work() -> None:
        for text in (good, broken, good + broken):
            codec.parse(text)
            codec.parse_detailed(text)
            closed = codec.stream()
            for at in range(0, len(text), 3):
                closed.feed(text[at : at + 3])
            closed.close()
            codec.stream().feed(text[: len(text) // 2])  # dropped in the middle
        codec.parse_transcript(transcript)

    work()  # tables and caches built first
    gc.collect()
    gc.disable()
    try:
        work()
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0


def test_a_calls_end_event_decodes_its_arguments_when_read() -> None:
    end = ToolCallEnd(0, '{"city": "Paris"}')
    assert end.parsed == {"city": "Paris"} and end.parsed is end.parsed
    assert end == ToolCallEnd(0, '{"city": "Paris"}', {"city": "Paris"})
    assert ToolCallEnd(1, "{oops").parsed is None
    assert ToolCallEnd(0, "[]", []).parsed == [] and ToolCallEnd(0, "1", None).parsed is None  # given wins
    with pytest.raises(AttributeError, match="immutable"):
        end.arguments = "{}"  # type: ignore[misc]


# ---- deep nesting ----------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", [None, (1, 4, 16, 64)], ids=["whole", "deltas"])
@pytest.mark.parametrize("family", ["qwen3", "llama3_hermes", "deepseek"])
@pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ('{"a":', "}")], ids=["arrays", "objects"])
def test_hundred_thousand_nested_brackets(family: str, opener: str, closer: str, sizes: tuple[int, ...] | None) -> None:
    depth = 100_000
    arguments = '{"a": ' + opener * depth + closer * depth + "}"
    text = call_text(family, arguments) + ("<|im_end|>" if family == "qwen3" else "")
    parsed = parse(family, text, sizes)  # no RecursionError
    result = parsed.result
    assert result.reassemble() == text
    (call,) = result.message.tool_calls or []
    assert call.function.name == "f"
    assert call.function.arguments == arguments  # the model's own text, never re-serialized
    streamed = "".join(e.text for e in parsed.events if isinstance(e, ToolCallArgumentsDelta))
    assert streamed == arguments
    (end,) = [e for e in parsed.events if isinstance(e, ToolCallEnd)]
    assert end.arguments == arguments
    # Too deep for Python's json module: the call keeps its raw text and says so.
    if end.parsed is None:
        assert [d.kind for d in result.diagnostics] == ["malformed_tool_call"]
    assert call.function.parsed_arguments == end.parsed  # (None here: it never raises)


def _at_stack_depth(frames: int, run: Callable[[], object]) -> object:
    return run() if frames == 0 else _at_stack_depth(frames - 1, run)


# A value nested just short of the recursion limit is decoded, then written as JSON a few frames
# further down the stack, where the limit is reached (found by the fuzz harness: an LFM2 call's
# object 968 levels deep, read from a worker process's deeper stack). Whatever the depth of the
# caller's stack, reading it raises nothing.
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("LiquidAI-LFM2.5-8B-A1B", "<|tool_call_start|>{VALUE}"),
        ("LiquidAI-LFM2.5-8B-A1B", "<|tool_call_start|>[f(a={VALUE})]<|tool_call_end|>"),
        ("Qwen-Qwen3-Coder", "<tool_call>\n<function=f>\n<parameter=a>\n{VALUE}\n</parameter>\n</function>\n</tool_call>"),
        ("ZhipuAI-GLM-4.6", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>{VALUE}</arg_value>\n</tool_call>"),
    ],
    ids=["lfm2-object", "lfm2-python", "qwen3-coder", "glm"],
)
def test_a_value_nested_near_the_recursion_limit(name: str, call: str) -> None:
    path = template(name)
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "object"}}}}}]
    for depth in (940, 955, 968, 980, 990):
        text = call.replace("{VALUE}", '{"a": ' * depth + "1" + "}" * depth)
        for frames in range(0, 40):
            result = _at_stack_depth(frames, lambda: codec.parse_detailed(text, tools=tools, reasoning=False))
            assert isinstance(result, ParseResult) and result.reassemble() == text


@pytest.mark.parametrize("sizes", [None, (1, 4, 16, 64)], ids=["whole", "deltas"])
@pytest.mark.parametrize("family", ["qwen3", "llama3_hermes", "deepseek"])
@pytest.mark.parametrize("digits", [5000, 4300])
def test_an_integer_longer_than_python_converts(family: str, digits: int, sizes: tuple[int, ...] | None) -> None:
    # JSON sets no limit on a number's digits; Python converts at most 4,300 (by default) and
    # raises ValueError past it. Such arguments stay the model's text, with a diagnostic.
    arguments = '{"n": ' + "7" * digits + "}"
    text = call_text(family, arguments)
    parsed = parse(family, text, sizes)
    result = parsed.result
    assert result.reassemble() == text
    (call,) = result.message.tool_calls or []
    assert call.function.arguments == arguments
    (end,) = [e for e in parsed.events if isinstance(e, ToolCallEnd)]
    decodable = digits <= sys.get_int_max_str_digits()
    assert call.function.parsed_arguments == end.parsed == ({"n": int("7" * digits)} if decodable else None)
    kinds = [d.kind for d in result.diagnostics]
    assert kinds == ([] if decodable else ["malformed_tool_call"])
    if not decodable:
        assert "cannot be decoded" in result.diagnostics[0].message
        with pytest.raises(ParseError, match="cannot be decoded"):
            chatcodec.load(family).parse(text, strict=True)


@pytest.mark.parametrize("family", ["qwen3", "deepseek"])
def test_nested_brackets_in_strict_mode_raise_only_parse_errors(family: str) -> None:
    depth = 100_000
    text = call_text(family, '{"a": ' + "[" * depth + "]" * depth + "}")
    try:
        chatcodec.load(family).parse(text, strict=True)
    except ParseError:
        pass


@pytest.mark.parametrize("family", ["qwen3", "deepseek"])
def test_unbalanced_brackets_still_close_the_call(family: str) -> None:
    arguments = '{"a": ' + "[" * 100_000
    text = call_text(family, arguments) + "after"
    result = parse(family, text, (1, 4, 16, 64)).result
    assert result.reassemble() == text
    assert any(d.kind == "malformed_tool_call" for d in result.diagnostics)
    assert result.message.content is not None and result.message.content.endswith("after")


# ---- unterminated JSON strings, quotes and backslashes -------------------------------------


@pytest.mark.parametrize("sizes", [None, (1, 3, 8, 21)], ids=["whole", "deltas"])
@pytest.mark.parametrize("family", ["qwen3", "llama3_hermes", "deepseek"])
def test_unterminated_json_string(family: str, sizes: tuple[int, ...] | None) -> None:
    text = unterminated_string(family)(MB // 2)
    parsed = parse(family, text, sizes)
    result = parsed.result
    assert result.reassemble() == text
    # Every delimiter after the open quote is inside the string: one call, never closed.
    (call,) = result.message.tool_calls or []
    prefix = '\n<tool_call>\n{"name": "f", "arguments": ' if family != "deepseek" else None
    expected = text.removeprefix(prefix) if prefix else text.split("<｜tool▁sep｜>", 1)[1]
    assert call.function.arguments == expected
    assert result.finish_reason == "length"
    assert "unclosed_tool_call" in [d.kind for d in result.diagnostics]
    with pytest.raises(ParseError):
        chatcodec.load(family).parse(text, strict=True)


@pytest.mark.parametrize("sizes", [None, (1, 3, 8, 21)], ids=["whole", "deltas"])
@pytest.mark.parametrize(
    "where",
    ["content", "reasoning", "qwen3 string", "hermes object", "deepseek arguments"],
)
def test_megabyte_of_quotes_and_backslashes(where: str, sizes: tuple[int, ...] | None) -> None:
    size = MB if sizes is None else MB // 4
    body = quotes_and_backslashes(size)
    family, text, options = {
        "content": ("qwen3", body, {}),
        "reasoning": ("deepseek", body, {"reasoning": True}),
        "qwen3 string": ("qwen3", in_json_string("qwen3", lambda n: body)(0), {}),
        "hermes object": ("llama3_hermes", call_text("llama3_hermes", body, close=False), {}),
        "deepseek arguments": ("deepseek", call_text("deepseek", body, close=False), {}),
    }[where]
    result = parse(family, text, sizes, **options).result
    assert result.reassemble() == text
    message = result.message
    if where == "content":
        assert message.content == body
    elif where == "reasoning":
        assert message.reasoning_content == body
    else:
        assert len(message.tool_calls or []) <= 1


@pytest.mark.parametrize("family", ["qwen3", "llama3_hermes", "deepseek"])
def test_token_soup_is_lossless(family: str) -> None:
    for seed in range(50):
        text = token_soup(family, seed)(2_000)
        whole = parse(family, text).result
        assert whole.reassemble() == text
        streamed = parse(family, text, (1, 2, 3, 5, 8, 13)).result
        assert streamed.reassemble() == text


# ---- many tiny tool calls --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "sizes"),
    [("qwen3", None), ("llama3_hermes", None), ("deepseek", None), ("qwen3", (3, 16, 64)), ("deepseek", (3, 16, 64))],
    ids=["qwen3-whole", "llama3_hermes-whole", "deepseek-whole", "qwen3-deltas", "deepseek-deltas"],
)
def test_ten_thousand_tiny_tool_calls(family: str, sizes: tuple[int, ...] | None) -> None:
    count = 10_000
    text = tiny_calls(family)(45 * count)
    parsed = parse(family, text, sizes)
    result = parsed.result
    assert result.reassemble() == text
    assert result.diagnostics == []
    assert result.finish_reason == "tool_calls"
    calls = result.message.tool_calls or []
    assert len(calls) == count
    assert all(json.loads(call.function.arguments) == {"i": i} for i, call in enumerate(calls))
    starts = [e.index for e in parsed.events if isinstance(e, ToolCallStart)]
    assert starts == list(range(count))
    assert len({call.id for call in calls}) == count


# ---- 10 MB in one-character deltas -------------------------------------------------------------


def ten_megabytes() -> tuple[str, str, str]:
    """A completion of about 10 MB: long reasoning, long content, one tool call."""
    line = "Step {i}: the value is {v}, so a < b holds; next.\n"
    reasoning = "".join(line.format(i=i, v=i * 7919 % 100_003) for i in range(100_000))
    content = "".join(f"Result {i} is ready. " for i in range(250_000))
    text = f"<think>\n{reasoning}\n</think>\n\n{content}" + hermes_call("f", '{"done": true}') + "<|im_end|>"
    return text, reasoning, content


def test_ten_megabytes_in_one_character_deltas() -> None:
    text, reasoning, content = ten_megabytes()
    assert len(text) >= 10 * MB
    parser = chatcodec.load("qwen3").stream()
    events = 0
    feed = parser.feed
    for char in text:
        events += len(feed(char))
    events += len(parser.close())
    result = parser.result()
    assert result.reassemble() == text
    message = result.message
    assert message.reasoning_content == reasoning
    assert message.content == content
    assert [c.function.arguments for c in message.tool_calls or []] == ['{"done": true}']
    assert result.diagnostics == []
    assert events <= len(text) + 10  # at most one event per delta, plus the call's and finish


LLAMA_31 = Path(__file__).parent / "templates" / "Llama-3.1-8B-Instruct.jinja"


def llama_31() -> chatcodec.Codec:
    return chatcodec.load(LLAMA_31, special_tokens={"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})


def work_per_delta(codec: chatcodec.Codec, opened: str, text: str, n: int = 1000) -> float:
    """The calls each ``feed(text)`` makes, on a parser fed ``opened`` first."""
    parser = codec.stream()
    parser.feed(opened)
    return work(lambda: [parser.feed(text) for _ in range(n)]) / n


@pytest.mark.parametrize("delta", ["abcd", ', "x"', "}, {"])
def test_a_delta_inside_a_calls_arguments_costs_about_what_plain_text_does(delta: str) -> None:
    """Streaming: most deltas of a tool call are inside its arguments, and go straight on to
    them (no piece, no member-by-member reading), so such a delta, quotes and brackets
    included, costs well under a delta of reasoning that takes the general way (one that ends
    with "<": a delimiter may begin there, and is held back). A delta of reasoning with no
    delimiter in it and none beginning at its end ("a < b" included) takes a lane of its own: a
    search or two, the appends, the event."""
    codec = chatcodec.load("qwen3")
    opened = '<think>\nabc </think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": [{"b": "xy'

    def per_delta(prefix: str, text: str, n: int = 1000) -> float:
        parser = codec.stream()
        parser.feed(prefix)
        return work(lambda: [parser.feed(text) for _ in range(n)]) / n

    prefix = opened if delta == "abcd" else opened + '"'  # inside a string, or just after one
    plain = per_delta("<think>\nabc ", "abcd")
    general = per_delta("<think>\nabc ", "bc <")
    inside = per_delta(prefix, delta)
    assert plain <= 10, plain
    assert per_delta("<think>\nabc ", "a<b\nc") <= 18  # "<" and a newline that begin nothing
    assert inside * 1.25 <= general, (inside, general)
    # The arguments lane: a string's text is a search and the appends; a delta with quotes or
    # brackets adds their scan (a few regex searches), no piece and no member reading.
    assert inside <= (11 if delta == "abcd" else 22), inside
    parser = codec.stream()
    events = parser.feed(prefix) + [event for _ in range(1000) for event in parser.feed(delta)]
    arguments = "".join(event.text for event in events if isinstance(event, ToolCallArgumentsDelta))
    assert arguments == prefix[prefix.index('{"a"') :] + delta * 1000


def test_a_delta_inside_a_json_string_skips_the_delimiter_search() -> None:
    """Llama 3.1's calls are bare JSON objects, and inside one the grammar takes ``{`` and
    `` {`` (the next call): a delta with a space or a brace could begin a delimiter. Inside a
    string none can (a spelling there is text), so a delta of a string's text takes the short
    way whatever it holds, and one that spells a delimiter stays text."""
    codec = llama_31()
    opened = '{"name": "f", "parameters": {"a": "x'
    assert work_per_delta(codec, opened, "a { ") <= 2 * work_per_delta(codec, opened, "abcd")
    parser = codec.stream()
    events = parser.feed(opened) + [event for _ in range(200) for event in parser.feed("; {<|eot_id|>")]
    events += parser.feed('"}}') + parser.close()
    message = parser.message
    assert [call.function.arguments for call in message.tool_calls or []] == ['{"a": "x' + "; {<|eot_id|>" * 200 + '"}']
    assert parser.diagnostics == [] and message.content is None


def test_a_delta_ending_with_a_space_inside_a_json_string_holds_nothing_back() -> None:
    """In Llama 3.1's calls a space may begin `` {`` (the next call), so a delta that ends with
    one would be held back, and the next delta would take the general way, and so on for every
    word of a string. Inside a string every spelling is text: nothing is held, and the deltas
    after the first take the short way (the quote that opens the string, which may begin
    ``"<|eot_id|>``, arrives alone at the end of the text before)."""
    codec = llama_31()
    opened = '{"name": "f", "parameters": {"a": "'
    assert work_per_delta(codec, opened, "ab c ") <= 1.2 * work_per_delta(codec, opened, "abcd")
    parser = codec.stream()
    events = parser.feed(opened) + [event for _ in range(100) for event in parser.feed("ab c ")] + parser.feed('"}}')
    events += parser.close()
    arguments = "".join(event.text for event in events if isinstance(event, ToolCallArgumentsDelta))
    assert arguments == '{"a": "' + "ab c " * 100 + '"}'
    assert [call.function.arguments for call in parser.message.tool_calls or []] == [arguments]


# ---- the lexer looks at each character a bounded number of times -------------------------------


@dataclass
class LexerAudit:
    """Wraps the delimiter lexer to record, per feed, what it is handed and examines.

    A matcher call that searches ``text[pos:end]`` examines the characters up to where it stopped
    (a delimiter's end, or ``end``); a check at one position (``match_at``) or of the held-back
    tail (``hold_point``) examines at most one delimiter's length. The JSON string tracker is
    recorded apart: the walk of a tool-call body must see each of its characters once.
    """

    longest: int
    handed: list[int] = field(default_factory=list)  # len(text) of each matcher call
    examined: int = 0
    json_examined: int = 0
    pieces: int = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        search, match_at, hold_point = DelimiterMatcher.search, DelimiterMatcher.match_at, DelimiterMatcher.hold_point
        scan, handle = JsonWalk.scan, AssistantAssembler.handle
        audit = self

        def audited_search(matcher: DelimiterMatcher, text: str, pos: int, end: int, final: bool) -> Found | int:
            found = search(matcher, text, pos, end, final)
            audit.handed.append(len(text))
            audit.examined += (found.end if isinstance(found, Found) else end) - pos
            return found

        def audited_match_at(matcher: DelimiterMatcher, text: str, pos: int, end: int, final: bool) -> Any:
            audit.handed.append(len(text))
            audit.examined += min(end - pos, audit.longest)
            return match_at(matcher, text, pos, end, final)

        def audited_hold_point(matcher: DelimiterMatcher, text: str, pos: int, end: int) -> int:
            audit.handed.append(len(text))
            audit.examined += min(end - pos, audit.longest)
            return hold_point(matcher, text, pos, end)

        def audited_scan(walk: JsonWalk, text: str, text_start: int, upto: int) -> None:
            audit.json_examined += max(0, upto - walk.pos)
            scan(walk, text, text_start, upto)

        def audited_handle(assembler: AssistantAssembler, pieces: Any) -> list[Any]:
            # Every piece the engine hands out reaches the assembler (some while a long text is
            # still being read), and only once.
            pieces = list(pieces)
            audit.pieces += len(pieces)
            return handle(assembler, pieces)

        monkeypatch.setattr(DelimiterMatcher, "search", audited_search)
        monkeypatch.setattr(DelimiterMatcher, "match_at", audited_match_at)
        monkeypatch.setattr(DelimiterMatcher, "hold_point", audited_hold_point)
        monkeypatch.setattr(JsonWalk, "scan", audited_scan)
        monkeypatch.setattr(AssistantAssembler, "handle", audited_handle)


def random_deltas(seed: int) -> tuple[int, ...]:
    rng = random.Random(seed)
    return tuple(rng.randint(1, 24) for _ in range(997))


def audited_params() -> Iterator[Any]:
    feedings = [("whole", None), ("1-char", (1,)), ("random", random_deltas(3))]
    for case in LINEAR_CASES:
        for label, sizes in feedings:
            yield pytest.param(case, sizes, id=f"{case}-{label}")


@pytest.mark.parametrize(("case", "sizes"), list(audited_params()))
def test_lexer_never_rescans(case: Case, sizes: tuple[int, ...] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Principle 4 as a count: the lexer is handed each delta plus a held-back tail shorter than
    the longest delimiter, never the text already read, and over a whole stream it examines

        examined <= 2 * characters + 3 * longest * (feeds + pieces)

    Each character is searched once, or twice where a delimiter spelled inside a JSON string is
    searched again from its second character. On top of that each feed re-reads its held-back
    tail and checks it once more (2 * longest), and each piece handed out costs at most one
    delimiter's length of look-ahead at its boundary (match_at, a held-back check, the overlap
    of a search that stopped at a delimiter).
    """
    codec = chatcodec.load(case.family)
    longest = max(len(spelling) for spelling in codec.family.grammar.spellings)
    text = case.make(20_000)
    audit = LexerAudit(longest)
    audit.install(monkeypatch)
    parser = codec.stream(**case.options)
    feeds = 0
    for delta in pieces_of(text, sizes):
        audit.handed.clear()
        parser.feed(delta)
        feeds += 1
        assert max(audit.handed, default=0) < len(delta) + longest, "the lexer was handed text it had already read"
    parser.close()
    assert parser.result().reassemble() == text
    bound = 2 * len(text) + 3 * longest * (feeds + audit.pieces)
    assert audit.examined <= bound, f"examined {audit.examined} characters of {len(text)} (bound {bound})"
    assert audit.json_examined <= len(text), "the JSON walk read characters twice"


def test_the_search_past_false_starts_reads_a_long_text_once() -> None:
    """Past a few false starts each lead's regex takes over; a lead whose spellings the text
    never holds must not be scanned for to the end of the text at every delimiter (a megabyte
    of tool calls was read once per call, quadratic). The characters the leads' regexes scan
    are counted: about the text's length, not its square."""
    from chatcodec.parse.lexer import DelimiterMatcher

    # (The lead the text never spells comes first: each search for it would run to the end.)
    matcher = DelimiterMatcher({"[call]": "CALL", "[/call]": "END"}, {"<never>": "NEVER"})
    unit = "a < b [x] <u8> " + "x" * 50 + "[call]"
    text = unit * 5_000  # 360,000 characters, 5,000 delimiters, each after three false starts
    scanned = 0
    searches = matcher._lead_searches

    def counted(search: Any) -> Any:
        def run(string: str, pos: int, endpos: int) -> Any:
            nonlocal scanned
            match = search(string, pos, endpos)
            scanned += (endpos if match is None else match.end()) - pos  # a scan stops at its match
            return match

        return run

    matcher._lead_searches = tuple(counted(search) for search in searches)
    found, pos = 0, 0
    while (match := matcher.find(text, pos, len(text))) is not None:
        found += 1
        pos = match.end()
    assert found == 5_000
    assert scanned <= 20 * len(text), scanned


def test_stray_delimiters_before_a_long_rest_read_it_once() -> None:
    """A spelling the state rejects is checked for an accepted one that begins inside it
    (``<|end|>`` inside ``<|end|></s>``). That check looks only as far as such a spelling
    could reach: searched to the end of the text, text after the end of a turn that holds
    many stray tags (a model that goes on writing past ``<|im_end|>``) was read once per tag,
    2.7 seconds for 80,000 characters. The characters the check scans are counted."""
    matcher = DelimiterMatcher({"<|im_end|>": "END"}, {"<think>": "THINK_OPEN", "<|im_start|>": "START"})
    text = "<think>x <|im_start|>y " * 5_000 + "<|im_end|>"
    scanned = 0
    search = matcher._accepted_regex.search

    class Counted:
        def search(self, string: str, pos: int, endpos: int) -> Any:
            nonlocal scanned
            match = search(string, pos, endpos)
            scanned += (endpos if match is None else match.end()) - pos
            return match

    matcher._accepted_regex = Counted()  # type: ignore[assignment]
    found: list[Found] = []
    pos = 0
    while pos < len(text):
        hit = matcher.search(text, pos, len(text), final=True)
        assert isinstance(hit, Found)
        found.append(hit)
        pos = hit.end
        if hit.terminal == "END":
            break
    assert len(found) == 10_001 and [hit.stray for hit in found[-2:]] == [True, False]
    assert scanned <= 20 * len(text), scanned


def test_a_call_with_many_stretches_of_stray_text_is_read_in_linear_work() -> None:
    """gpt-oss reasoning that names a recipient again and again (``<|channel|>commentary
    to=assistant<|channel|>analysis<|message|>{"a": 1}ab``, repeated) is one unclosed call with
    text after its value between every pair of delimiters. Cutting those stretches out of the
    call's spans looked at every stretch for every span: 2.4 seconds at 60,000 characters."""
    path = template("OpenAI-gpt-oss-120b")
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    prompt = codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    unit = '<|channel|>commentary to=assistant<|channel|>analysis<|message|>{"a": 1}ab '

    def measure(n: int) -> int:
        return work(lambda: codec.parse_detailed(unit * (n // len(unit)), prompt=prompt))

    ratio = growth(measure, 20_000)
    assert ratio <= MAX_GROWTH, f"twice the input took {ratio:.2f}x the work"
    result = codec.parse_detailed(unit * 300, prompt=prompt)
    assert result.reassemble() == unit * 300
    assert result.spans[-1].kind == "reasoning" and result.spans[-1].end == len(unit) * 300


def test_a_later_call_quoting_many_call_ends_streams_in_linear_work() -> None:
    """A Qwen3-Coder call, then one whose value quotes ``</function>`` again and again, in
    7-character deltas. Whether the first call's ``</parameter>`` ends its value waits for the
    later call's end, and each delta asked again: the later call was read from its start each
    time, past every quoted end so far (the work grew with the square of the text)."""
    path = template("Qwen-Qwen3-Coder")
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    first = "<tool_call>\n<function=foo>\n<parameter=bar>a</parameter>\n</function>\n</tool_call>\n"
    later = "<tool_call>\n<function=foo>\n<parameter=bar>"

    def text(n: int) -> str:
        return first + later + "see </function> here " * (n // 21) + "</parameter>\n</function>\n</tool_call>"

    def measure(n: int) -> int:
        return work(lambda: parse_stream(codec, text(n), 7))

    ratio = growth(measure, 10_000)
    assert ratio <= MAX_GROWTH, f"twice the input took {ratio:.2f}x the work"
    result = parse_stream(codec, text(210), 7)
    assert [call.function.name for call in result.message.tool_calls or []] == ["foo", "foo"]


def parse_stream(codec: chatcodec.Codec, text: str, size: int) -> ParseResult:
    parser = codec.stream(reasoning=False)
    for at in range(0, len(text), size):
        parser.feed(text[at : at + size])
    parser.close()
    return parser.result()


def test_the_python_work_for_a_long_prefill_does_not_grow_with_it() -> None:
    """``codec.parse`` remembers the state a short prefill leaves, keyed by the text its last
    delimiter may reach into (finding how far looks only at the prefill's tail, as long as the
    longest spelling); a long one is read each time and kept by no record. (Every suffix of the
    prefill, a copy each, against every spelling was quadratic: 67 ms at 20,000 characters.)"""
    codec = chatcodec.load("qwen3")
    codec.parse("more</think>done", prefill="<think>\n" + "w" * 1_000)  # the states it meets, built

    def calls(length: int, letter: str) -> int:
        return work(lambda: codec.parse("more</think>done", prefill="<think>\n" + letter * length))

    short, long = calls(25_000, "x"), calls(50_000, "y")  # (new prefills: nothing remembered)
    assert long <= short * 1.2 + 1_000, (short, long)
    assert codec.parse("more</think>done", prefill="<think>\n" + "z" * 50_000).content == "done"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda codec: codec.parse(None), "the completion must be a str, not NoneType"),
        (lambda codec: codec.parse_detailed(b"<think>"), "the completion must be a str, not bytes"),
        (lambda codec: codec.parse("hi", prompt=5), "prompt must be a str, not int"),
        (lambda codec: codec.stream(prefill=b"<think>"), "prefill must be a str, not bytes"),
        (lambda codec: codec.prompt_state(None), "the prompt must be a str, not NoneType"),
        (lambda codec: codec.stream().feed(None), "feed() takes a str, not NoneType"),
        (lambda codec: codec.stream().feed(b"hello"), "feed() takes a str, not bytes"),
    ],
)
def test_text_that_is_no_str_is_refused_by_name(call: Callable[[chatcodec.Codec], Any], message: str) -> None:
    # (Bytes straight from a socket, or a None for a missing field: the error names it, where
    # it would otherwise come from deep inside the parser.)
    with pytest.raises(TypeError) as raised:
        call(chatcodec.load("qwen3"))
    assert str(raised.value) == message


def test_a_stream_in_a_run_of_text_refuses_bytes_by_name() -> None:
    parser = chatcodec.load("qwen3").stream()
    parser.feed("<think>\n</think>\n\nhello ")
    parser.feed("there ")
    with pytest.raises(TypeError, match=r"feed\(\) takes a str, not bytes"):
        parser.feed(b"x")
