"""The one-shot fast path (``chatcodec.parse.whole``) reads exactly what the general way reads.

``codec.parse`` / ``parse_detailed`` try it first; it either gives the very result the streaming
parser gives (message, finish reason, diagnostics, spans) or declines. These tests compare the two
directly: on every repository template's own answers (where it must also be taken, or the
comparison would prove nothing), on answers cut and spliced by hypothesis, and on the inputs it
must decline, whose diagnostics only the general way gives.
"""

from __future__ import annotations

import functools
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatcodec
from chatcodec.codec import _tool_digest
from chatcodec.parse.spans import Span
from chatcodec.parse.stream import ParseResult
from chatcodec.parse.whole import WholeTextReader, whole_text_reader
from parsing_support import draw_cut_answer
from template_corpus import ALL_TEMPLATES, special_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz  # noqa: E402


_INVENTED_ID = re.compile(r"call_[0-9a-f]{24}|[A-Za-z0-9]{9}")  # OpenAI-style, or Mistral's nine letters and digits


def _key(result: ParseResult) -> tuple[Any, ...]:
    message = result.message.model_dump()
    for call in message.get("tool_calls") or []:
        if _INVENTED_ID.fullmatch(call["id"]):
            call["id"] = None  # fresh random ids on both sides; ids the model wrote must agree
    return message, result.finish_reason, result.diagnostics, result.spans, result.text


def _both(
    codec: chatcodec.Codec, text: str, prompt: str | None, tools: Any = None, reasoning: bool | None = None
) -> tuple[ParseResult | None, ParseResult]:
    """The fast path's result (None when it declines) and the general way's."""
    general = codec.stream(prompt, tools=tools, reasoning=reasoning).parse_whole(text)
    prefill, start = codec._start(prompt, reasoning, None)
    names, _ = _tool_digest(tools)
    reader = whole_text_reader(codec.format, start)
    fast = reader.parse(text, prefill, frozenset(names) if names is not None else None)
    # What ``codec.parse`` reads, keeping no spans, decides the same.
    bare = reader.parse(text, prefill, frozenset(names) if names is not None else None, spans=False)
    assert (bare is None) == (fast is None)
    if bare is not None and fast is not None:
        assert bare.spans == []
        assert _key(bare)[:3] == _key(fast)[:3]
    return fast, general


def _load(path: Path) -> chatcodec.Codec | None:
    try:
        codec = chatcodec.load(path, special_tokens=special_tokens(path))
        codec.format  # noqa: B018 - templates with no framing have no parser
    except chatcodec.ChatCodecError:
        return None
    return codec


@functools.lru_cache(maxsize=None)
def _answers(path: Path) -> tuple[chatcodec.Codec, str | None, tuple[tuple[str, str | None], ...]] | None:
    codec = _load(path)
    if codec is None or not whole_text_reader(codec.format).usable:
        return None
    inputs = fuzz.Inputs(codec, random.Random(path.stem), max_size=3000)
    # (Not the answer whose value quotes a whole answer: its JSON spells the format's delimiters,
    # which the fast path leaves to the general way.)
    answers = [answer for answer in inputs.valid if answer != inputs.quoting]
    return codec, inputs.prompt, tuple((answer, inputs.prompt_of.get(answer, inputs.prompt)) for answer in answers)


FAST_TEMPLATES = [path for path in ALL_TEMPLATES if _answers(path) is not None]


def test_the_fast_path_serves_most_templates() -> None:
    # Hermes-style calls, DeepSeek's, Kimi's, and formats with no call syntax: 158 of 242.
    assert len(FAST_TEMPLATES) >= 140


@pytest.mark.parametrize("path", FAST_TEMPLATES, ids=lambda path: path.stem)
def test_a_templates_own_answers_take_the_fast_path_and_read_the_same(path: Path) -> None:
    known = _answers(path)
    assert known is not None
    codec, _, answers = known
    declined = []
    for answer, prompt in answers:
        for options in ({"prompt": prompt, "tools": fuzz.TOOLS}, {"prompt": prompt}, {"prompt": None}):
            fast, general = _both(codec, answer, options["prompt"], options.get("tools"))
            if fast is not None:
                assert _key(fast) == _key(general), (answer, options)
            elif not general.diagnostics:
                declined.append((answer, options))
    # An answer the general way reads without a word to say is of the common shape.
    assert declined == []


FUZZ_FORMATS = ["qwen3", "llama3_hermes", "deepseek", "deepseek_r1", "harmony", "kimi"]


@functools.lru_cache(maxsize=None)
def _inputs(name: str) -> fuzz.Inputs:
    return fuzz.Inputs(fuzz.load(name), random.Random(name), max_size=1500)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FUZZ_FORMATS), st.data())
def test_cut_and_spliced_answers_read_the_same_both_ways(name: str, data: st.DataObject) -> None:
    inputs = _inputs(name)
    pieces = st.sampled_from(inputs.spellings) | st.sampled_from(fuzz.PIECES) | st.text(max_size=4)
    text = draw_cut_answer(data, inputs.valid, pieces, splices=3)
    prompt = data.draw(st.sampled_from([inputs.prompt, None]))
    tools = data.draw(st.sampled_from([fuzz.TOOLS, None, ["search"]]))
    has_reasoning = bool(inputs.codec.format.reasoning_open)
    reasoning = data.draw(st.sampled_from([None, True, False])) if prompt is None and has_reasoning else None
    fast, general = _both(inputs.codec, text, prompt, tools, reasoning)
    if fast is not None:
        assert _key(fast) == _key(general)
        assert not general.diagnostics


QWEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.mark.parametrize(
    ("text", "diagnostic"),
    [
        ("Sure.\n" + QWEN_CALL.replace("get_weather", "launch"), "unknown_tool"),
        ("<think>\nhm\n" + QWEN_CALL + "\nmore", "tool_call_in_reasoning"),
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>', "malformed_tool_call"),
        (QWEN_CALL.replace("}}", "}} trailing"), "unexpected_text"),
        ("Hello</think> there", "stray_delimiter"),
        ("Done.<|im_end|>more text", "unexpected_text"),
        ("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par", "unclosed_tool_call"),
    ],
)
def test_what_the_fast_path_declines_gets_its_diagnostic(text: str, diagnostic: str) -> None:
    _declined(chatcodec.load("qwen3"), text, diagnostic)


DS_CALL = "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>"


@pytest.mark.parametrize(
    ("text", "diagnostic"),
    [
        ("Sure.<｜tool▁calls｜>" + DS_CALL + "<｜tool▁calls▁end｜>", "noncanonical"),
        ("Sure." + DS_CALL + "<｜tool▁calls▁end｜>", "noncanonical"),
        ("Sure.<｜tool▁calls▁begin｜>get_weather", "malformed_tool_call"),
        ("<｜tool▁calls▁begin｜>" + DS_CALL.replace("get_weather", "get weather") + "<｜tool▁calls▁end｜>", "malformed_tool_call"),
        ("<｜tool▁calls▁begin｜>" + DS_CALL.replace("}", "} and more") + "<｜tool▁calls▁end｜>", "unexpected_text"),
        ("<｜tool▁calls▁begin｜>" + DS_CALL.replace("get_weather", "launch") + "<｜tool▁calls▁end｜>", "unknown_tool"),
    ],
)
def test_what_the_fast_path_declines_in_deepseek_gets_its_diagnostic(text: str, diagnostic: str) -> None:
    _declined(chatcodec.load("deepseek"), text, diagnostic)


R1_CALL = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>"


def test_a_later_call_opened_in_r1_distills_spelling_gets_its_diagnostic() -> None:
    # Found by fuzzing: the fast path read the section's later calls by their shape, and missed
    # that one opened with <｜tool▁calls｜>, which the general way reads as noncanonical.
    codec = chatcodec.load(str(Path(__file__).resolve().parent / "templates" / "DeepSeek-R1.jinja"))
    text = "<｜tool▁calls▁begin｜>" + R1_CALL + "\n" + R1_CALL.replace("<｜tool▁call▁begin｜>", "<｜tool▁calls｜>") + "<｜tool▁calls▁end｜>"
    _declined(codec, text, "noncanonical")


def _declined(codec: chatcodec.Codec, text: str, diagnostic: str) -> None:
    fast, general = _both(codec, text, None, fuzz.TOOLS)
    assert fast is None
    assert diagnostic in [d.kind for d in general.diagnostics]
    assert [d.kind for d in codec.parse_detailed(text, tools=fuzz.TOOLS).diagnostics] == [
        d.kind for d in general.diagnostics
    ]


def test_deepseek_calls_in_their_section_take_the_fast_path() -> None:
    codec = chatcodec.load("deepseek")
    text = "hm</think>Sure.<｜tool▁calls▁begin｜>\n" + DS_CALL + DS_CALL.replace("{", " {") + "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
    fast, general = _both(codec, text, None, fuzz.TOOLS, reasoning=True)
    assert fast is not None
    assert _key(fast) == _key(general)
    assert fast.message.content == "Sure.\n"  # the newline inside the section is text
    assert [call.function.arguments for call in fast.message.tool_calls or []] == ['{"city": "Paris"}'] * 2
    assert fast.finish_reason == "tool_calls"


def test_the_fast_path_reads_a_prompts_open_reasoning_and_a_held_tag() -> None:
    codec = chatcodec.load("qwen3")
    # "<think>" ends the prefill but may go on as "<think>\n" in the completion: the delimiter
    # straddles the two, and its span starts at the completion's first character.
    text = "\nweighing it\n</think>\n\nParis." + "\n" + QWEN_CALL + "<|im_end|>"
    fast, general = _both(codec, text, None, fuzz.TOOLS, reasoning=True)
    assert fast is not None
    assert _key(fast) == _key(general)
    assert fast.message.reasoning_content == "weighing it"
    assert fast.message.content == "Paris."
    assert fast.spans[0] == Span("delimiter", 0, 1, "THINK_OPEN", None)
    assert fast.finish_reason == "tool_calls"
    # Read again, the reading resumes from the state the prefill left, and still gives the
    # straddling delimiter's span.
    again, _ = _both(codec, text, None, fuzz.TOOLS, reasoning=True)
    assert again is not None and _key(again) == _key(general)


def test_formats_of_other_call_syntaxes_take_the_general_way() -> None:
    # (Mistral's calls are a name and arguments too, but its ids and list forms are the
    # general way's.)
    mistral = fuzz.load("mistral")
    assert not WholeTextReader(mistral.format).usable
    assert mistral.parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>').tool_calls


def test_kimi_calls_keep_the_id_the_model_wrote() -> None:
    codec = fuzz.load("kimi")
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>'
    )
    fast, general = _both(codec, text, None, fuzz.TOOLS)
    assert fast is not None
    assert _key(fast) == _key(general)
    call = (fast.message.tool_calls or [])[0]
    assert (call.id, call.function.name) == ("functions.get_weather:0", "get_weather")


def test_a_prefill_does_not_cost_a_copy_of_the_text() -> None:
    # The prefill ("<think>", held back because "<think>\n" is a longer spelling) is read on a
    # short head; the completion itself is not joined to it. The parse then holds the text's
    # reasoning (one copy, the message's) and little else.
    import tracemalloc

    codec = chatcodec.load("deepseek")
    text = "Weighing the options, one by one. " * 30_000 + "</think>Done.<｜end▁of▁sentence｜>"
    codec.parse_detailed(text, reasoning=True)  # warm: parse tables, moves
    tracemalloc.start()
    try:
        result = codec.parse_detailed(text, reasoning=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.message.content == "Done." and result.finish_reason == "stop"
    assert peak < 1.5 * len(text)  # a joined copy would make it 2x


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        ("Weighing it.</think>It is 4.<｜end▁of▁sentence｜>", "Weighing it.", "It is 4."),
        ("It is 4.<｜end▁of▁sentence｜>", None, "It is 4."),
        ("It is 4.", None, "It is 4."),
        ("Weighing it.</think>", "Weighing it.", None),
    ],
)
def test_with_no_prompt_leading_text_is_reasoning_if_a_closing_tag_follows(
    text: str, reasoning: str | None, content: str | None
) -> None:
    # DeepSeek's models may or may not have had "<think>" opened by their prompt: without one,
    # text before "</think>" is reasoning, and text that no closing tag follows is the answer.
    codec = chatcodec.load("deepseek")
    fast, general = _both(codec, text, None, None)
    assert fast is not None
    assert _key(fast) == _key(general)
    assert (fast.message.reasoning_content, fast.message.content or None) == (reasoning, content)


def test_readers_are_kept_for_a_bounded_number_of_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    import chatcodec.parse.whole as whole

    monkeypatch.setattr(whole, "MAX_READERS", 2)
    monkeypatch.setattr(whole, "_READERS", {})
    formats = [chatcodec.load(name).format for name in ("qwen3", "deepseek", "llama3_hermes")]
    readers = [whole_text_reader(found) for found in formats]
    assert len(whole._READERS) == 2
    assert whole_text_reader(formats[2]) is readers[2]  # the newest stays
    assert whole_text_reader(formats[0]) is not readers[0]  # the oldest was let go


@pytest.mark.parametrize("prefill", ["<think></think>", "<think>\n", ""])
def test_parse_with_a_prefill_reads_as_a_stream_with_it(prefill: str) -> None:
    codec = chatcodec.load("qwen3")
    for text in ["Sure.\n" + QWEN_CALL + "<|im_end|>", "hm\n</think>\n\nok", "<think>x</think>y"]:
        whole = codec.parse_detailed(text, tools=fuzz.TOOLS, prefill=prefill)
        streamed = codec.stream(tools=fuzz.TOOLS, prefill=prefill).parse_whole(text)
        assert _key(whole) == _key(streamed), (prefill, text)


@pytest.mark.parametrize(
    "arguments",
    [
        '{"note": "</tool_call> is the closing tag"}',  # the first delimiter is inside a string
        '{"s": "\\ud800"}',  # a lone surrogate, escaped
        '{"deep": ' + "[" * 300 + "]" * 300 + "}",  # deeper than pydantic-core's decoder goes
        '{"k": 1, "k": 2}',
    ],
)
def test_call_bodies_the_quick_check_refuses_are_read_the_long_way(arguments: str) -> None:
    codec = chatcodec.load("qwen3")
    text = '<tool_call>\n{"name": "get_weather", "arguments": ' + arguments + "}\n</tool_call>"
    fast, general = _both(codec, text, None, fuzz.TOOLS)
    assert fast is not None and _key(fast) == _key(general)
    assert fast.message.tool_calls[0].function.arguments == arguments  # type: ignore[index]
    deepseek = chatcodec.load("deepseek")
    text = "<｜tool▁calls▁begin｜>" + DS_CALL.replace('{"city": "Paris"}', arguments) + "<｜tool▁calls▁end｜>"
    if "</tool_call>" in arguments:
        text = text.replace("</tool_call>", "<｜tool▁call▁end｜>")
    fast, general = _both(deepseek, text, None, fuzz.TOOLS)
    assert fast is not None and _key(fast) == _key(general)
    assert not general.diagnostics


def test_nan_and_infinity_are_no_json_on_either_path() -> None:
    # The json module and pydantic-core's parser take them; JSON has neither.
    arguments = '{"x": NaN, "y": -Infinity}'
    codec = chatcodec.load("qwen3")
    text = '<tool_call>\n{"name": "get_weather", "arguments": ' + arguments + "}\n</tool_call>"
    fast, general = _both(codec, text, None, fuzz.TOOLS)
    assert fast is None  # a malformed call is the general way's to read
    assert _key(codec.parse_detailed(text, tools=fuzz.TOOLS)) == _key(general)
    assert general.message.tool_calls[0].function.arguments == arguments  # type: ignore[index]
    assert [d.kind for d in general.diagnostics] == ["malformed_tool_call"]


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
# What a model's broken JSON is made of: the grammar's own characters and the letters of its words.
_JSON_CHARACTERS = st.sampled_from(list('{}[]:," \\\n\t0123456789.-+eEtruefalsnNIy\x00\x1fé😀') + ["\\u", "\\ud800"])


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES, st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), _JSON_CHARACTERS), max_size=4))
def test_the_quick_object_check_accepts_only_what_json_reads_as_an_object(
    value: Any, edits: list[tuple[int, int, str]]
) -> None:
    from chatcodec.parse.json_scan import is_json_object, loads_json

    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict) and not edits:
        assert is_json_object(text)
    for at, removed, inserted in edits:
        at %= len(text) + 1
        text = text[:at] + inserted + text[at + removed :]
    if is_json_object(text):
        assert isinstance(loads_json(text), dict), text


def test_the_moves_a_reader_remembers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import chatcodec.parse.whole as whole

    # Each DeepSeek call deepens the parser stack, so every call of a long text is a new move.
    monkeypatch.setattr(whole, "MOVES_CACHE_SIZE", 40)
    codec = chatcodec.load("deepseek")
    reader = WholeTextReader(codec.format)
    text = "<｜tool▁calls▁begin｜>" + DS_CALL * 60 + "<｜tool▁calls▁end｜>"
    for _ in range(2):
        read = reader.parse(text, "", None)
        assert read is not None and len(read.message.tool_calls or []) == 60
    assert len(reader._moves) <= 40 and reader._edges_kept <= 40


# What may stand in a call where its shape expects a name, an object or a delimiter.
_SHAPE_PIECES = st.sampled_from(
    ["}", "{", '"', "\\", "\n", " ", "x", ",", "<", "```", "é", "😀", "\\ud800", '"}', "}}", "{}", "[", "get_weather"]
)


def _calls_of(inputs: fuzz.Inputs) -> list[str]:
    return [answer for answer in inputs.valid if "tool▁sep" in answer]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["deepseek", "deepseek_r1"]), st.data())
def test_calls_read_by_their_shape_read_as_the_general_way(name: str, data: st.DataObject) -> None:
    """A call written where the last one read from the same parser state was is read by its
    shape (two ``str.find``, no delimiter search). Around the shape's edges (the name, the
    separator, the object's braces, the closing delimiter) the text may be anything: what the
    shape reads must be what the general way reads."""
    inputs = _inputs(name)
    answers = _calls_of(inputs)
    for answer in answers:  # the shapes are learned (the same texts, read again, use them)
        _both(inputs.codec, answer, inputs.prompt_of.get(answer, inputs.prompt), fuzz.TOOLS)
    answer = data.draw(st.sampled_from(answers))
    first_call = answer.index("tool▁sep")
    spellings = st.sampled_from(inputs.spellings) | _SHAPE_PIECES
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(first_call, len(answer)))
        answer = answer[:at] + data.draw(spellings) + answer[at:]
    prompt = inputs.prompt_of.get(answer, inputs.prompt)
    tools = data.draw(st.sampled_from([fuzz.TOOLS, None]))
    general = inputs.codec.stream(prompt, tools=tools).parse_whole(answer)
    prefill, start = inputs.codec._start(prompt, None, None)
    names = frozenset(_tool_digest(tools)[0] or ()) if tools is not None else None
    bare = whole_text_reader(inputs.codec.format, start).parse(answer, prefill, names, spans=False)
    if bare is not None:
        assert _key(bare)[:2] == _key(general)[:2]
        assert not general.diagnostics


def test_a_call_read_again_is_read_by_its_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    codec = chatcodec.load("deepseek")
    text = "".join(
        f"<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{{\"city\": \"{city}\"}}<｜tool▁call▁end｜>" for city in ("Paris", "Oslo")
    )
    text = f"Sure.<｜tool▁calls▁begin｜>{text}<｜tool▁calls▁end｜>"
    first = codec.parse(text, tools=["get_weather"])
    shaped: list[Any] = []
    original = WholeTextReader._call_by_shape

    def spy(self: WholeTextReader, *args: Any) -> Any:
        read = original(self, *args)
        shaped.append(read)
        return read

    monkeypatch.setattr(WholeTextReader, "_call_by_shape", spy)
    again = codec.parse(text, tools=["get_weather"])
    assert shaped and all(read is not None for read in shaped)
    assert [call.function.model_dump() for call in again.tool_calls or []] == [
        call.function.model_dump() for call in first.tool_calls or []
    ] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}, {"name": "get_weather", "arguments": '{"city": "Oslo"}'}]
    assert again.content == "Sure."


@pytest.mark.parametrize("name", ["deepseek", "qwen3"])
def test_the_state_after_a_prefill_is_taken_up_again_only_where_the_text_starts_alike(name: str) -> None:
    """``codec.parse`` remembers the state a prefill's delimiters leave, by the prefill and the
    characters of the text its last delimiter could run on into (``<think>`` then ``\\n`` is one
    delimiter): texts that differ there read differently, in any order."""
    codec = chatcodec.load(name)
    texts = ["\nR</think>C", "R</think>C", "\n\nR</think>C", "</think>C", "C"]
    for prefill in ["<think>", "<think>\n", "<think>\n\n</think>\n\n", "</think>", "<"]:
        for order in (texts, texts[::-1], texts + texts):
            for text in order:
                parsed = codec.parse(text, prefill=prefill)
                streamed = codec.stream(prefill=prefill).parse_whole(text)
                assert parsed.model_dump() == streamed.message.model_dump(), (prefill, text)
