"""A small, seeded slice of `make fuzz`: every format, every promise, a few dozen inputs each."""

from __future__ import annotations

import functools
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatcodec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz  # noqa: E402
from parsing_support import draw_cut_answer  # noqa: E402


@pytest.mark.parametrize("name", sorted(fuzz.FORMATS))
def test_fuzz_slice_keeps_every_promise(name: str) -> None:
    violations = fuzz.run([name], seed=20261130, per_format=40, max_size=1500, log=lambda _: None)
    assert violations[name] == []


def test_the_fuzzer_finds_a_broken_promise(monkeypatch: pytest.MonkeyPatch) -> None:
    # A parser whose spans lose a character must be reported.
    import chatcodec.parse.stream as stream

    real = stream.ParseResult.reassemble
    monkeypatch.setattr(stream.ParseResult, "reassemble", lambda self: real(self)[1:])
    violations = fuzz.run(["qwen3"], seed=1, per_format=5, max_size=300, log=lambda _: None)
    assert any("spans do not tile" in line for line in violations["qwen3"])


def test_the_fuzzer_splits_each_format_among_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``--jobs``: each format's inputs in shares with seeds of their own, checked in as many
    # processes, whose findings all come back (a planted bug, seen from both shares).
    assert fuzz.shares(7, 10, 1) == [("7", 10)]
    assert fuzz.shares(7, 10, 3) == [("7.0", 4), ("7.1", 3), ("7.2", 3)]
    import chatcodec.parse.stream as stream

    real = stream.ParseResult.reassemble
    monkeypatch.setattr(stream.ParseResult, "reassemble", lambda self: real(self)[1:])
    violations = fuzz.run(["qwen3"], seed=1, per_format=6, max_size=300, log=lambda _: None, jobs=2)
    broken = [line for line in violations["qwen3"] if "spans do not tile" in line]
    assert any("seed 1.0 " in line for line in broken) and any("seed 1.1 " in line for line in broken)


def test_the_fuzzer_finds_a_parser_that_is_not_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A parser that refers back to itself lives on after it is dropped, until the cyclic
    # collector runs: that must be reported.
    import chatcodec.parse.stream as stream

    real = stream.StreamParser.__init__

    def with_a_cycle(self: stream.StreamParser, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        self.feed_back = self.feed  # type: ignore[attr-defined]

    monkeypatch.setattr(stream.StreamParser, "__init__", with_a_cycle)
    violations = fuzz.run(["qwen3"], seed=1, per_format=3, max_size=300, log=lambda _: None)
    assert any("not freed at once" in line for line in violations["qwen3"])


def test_the_fuzzer_gives_the_caller_s_options_to_every_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stream that ignores ``reasoning`` and ``prefill`` reads those cases unlike the one-shot
    # parse: the fuzzer must say so, and only of the cases that give them.
    real = chatcodec.Codec.stream

    def forgetful(self: chatcodec.Codec, prompt: str | None = None, **options: object) -> object:
        options.pop("reasoning", None)
        options.pop("prefill", None)
        return real(self, prompt, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(chatcodec.Codec, "stream", forgetful)
    lines = fuzz.run(["qwen3"], seed=3, per_format=60, max_size=600, log=lambda _: None)["qwen3"]
    assert any("streamed message differs" in line for line in lines)
    assert lines and all("reasoning=None, prefill=None)" not in line for line in lines)


def test_the_fuzzer_finds_text_left_out_of_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    # The spans still tile the input, but the message lacks a character of its content.
    real = chatcodec.Codec.parse_detailed

    def lossy(self: chatcodec.Codec, *args: object, **options: object) -> object:
        result = real(self, *args, **options)  # type: ignore[arg-type]
        if result.message.content:
            result.message.content = result.message.content[1:]
        return result

    monkeypatch.setattr(chatcodec.Codec, "parse_detailed", lossy)
    lines = fuzz.run(["qwen3"], seed=5, per_format=20, max_size=600, log=lambda _: None)["qwen3"]
    assert any("content spans do not add up" in line for line in lines)


@functools.lru_cache(maxsize=None)
def _inputs(name: str) -> fuzz.Inputs:
    return fuzz.Inputs(fuzz.load(name), random.Random(name), max_size=1500)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(fuzz.FORMATS)), st.data())
def test_hypothesis_inputs_keep_every_promise(name: str, data: st.DataObject) -> None:
    # The same promises on inputs hypothesis builds (and shrinks when one breaks): an answer the
    # template writes, cut anywhere, with the format's delimiters and awkward pieces spliced in.
    inputs = _inputs(name)
    pieces = st.sampled_from(inputs.spellings or fuzz.PIECES) | st.sampled_from(fuzz.PIECES) | st.text(max_size=6)
    text = draw_cut_answer(data, inputs.valid, pieces, splices=4, tail=6)
    prompt = data.draw(st.sampled_from([inputs.prompt, None, *inputs.other_prompts]))
    tools = data.draw(st.sampled_from(fuzz.TOOL_CHOICES))
    reasoning = prefill = None
    if prompt is None:
        # No prompt: the output opens as the format decides, or as the caller says, or after
        # what another parser read (the start of an answer, or any text).
        reasoning = data.draw(st.sampled_from((None, False, True) if inputs.opens_reasoning else (None, False)))
        if reasoning is None and data.draw(st.booleans()):
            prefill = draw_cut_answer(data, inputs.valid, pieces, splices=1, tail=3)
    chunking = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    case = fuzz.Case(text, prompt, tools, reasoning=reasoning, prefill=prefill)
    assert fuzz.check(inputs.codec, case, chunking) == []


# Found by a 10⁶-input run of harmony (seed 1209): a reasoning block's closing tag inside a
# call was read as the end of a block that was not open (gpt-oss's separator is spelled as the
# block's opening tag, and a message's header ends a block too), and the call's text came
# after the text that followed it.
@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>commentary<|constrain|>json to=functions.<|channel|>analysis<|message|><|call|>to=functions.<|end|><|start|>>",
        "<|channel|>analysis<|message|><|start|>assistant<|start|>assistant to=functions.<|end|><|start|>n",
    ],
)
def test_harmony_inputs_the_long_run_found(text: str) -> None:
    codec = fuzz.load("harmony")
    case = fuzz.Case(text, None, fuzz.TOOLS)
    assert fuzz.check(codec, case, random.Random(1)) == []
