"""Formats composed of a framing, a reasoning syntax and a call syntax: the framing read from a
template agrees with the hand-written pieces, the pieces compose in any combination, `inspect`
says what was found, and transcripts and prompted completions keep the engine's properties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from template_corpus import template
from test_transcript import conversations

import chatcodec
from chatcodec.cli import main
from chatcodec.formats import format_named
from chatcodec.formats.base import Format
from chatcodec.formats.calls import DEEPSEEK, HERMES
from chatcodec.parse.lalr import LalrTable
from chatcodec.parse.transcript import TranscriptReader

# -- the derived framing agrees with the hand-written one ------------------------------------


@pytest.mark.parametrize("name", ["qwen3", "llama3_hermes"])
def test_derived_framing_reads_what_the_hand_written_one_reads(name: str) -> None:
    derived = chatcodec.load(name)
    hand_written = chatcodec.load(name, family=name)
    assert derived.format.source is not None and hand_written.format.source is None

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(conversations(name))
    def check(conversation: dict[str, Any]) -> None:
        try:
            text = derived.render(
                conversation["messages"],
                tools=conversation["tools"],
                add_generation_prompt=conversation["gp"],
                **conversation["kwargs"],
            )
        except chatcodec.TemplateRenderError:
            assume(False)
        a, b = derived.parse_transcript(text), hand_written.parse_transcript(text)
        assert [m.to_openai() | {"tool_calls": None} for m in a.messages] == [
            m.to_openai() | {"tool_calls": None} for m in b.messages
        ]
        assert [[c.function for c in m.tool_calls or []] for m in a.messages] == [
            [c.function for c in m.tool_calls or []] for m in b.messages
        ]
        assert (a.tools, a.add_generation_prompt, a.template_kwargs) == (
            b.tools,
            b.add_generation_prompt,
            b.template_kwargs,
        )
        # The same text is template text (delimiters) in both.
        assert _template_text(a) == _template_text(b)

    check()


def _template_text(transcript: chatcodec.codec.Transcript) -> set[int]:
    positions: set[int] = set()
    for span in transcript.parts():
        if span.kind in ("delimiter", "template"):
            positions.update(range(span.start, span.end))
    return positions


def test_the_derived_qwen3_framing_spells_the_hand_written_delimiters() -> None:
    source = chatcodec.load("qwen3").format.source
    assert source is not None
    assert source.headers == {
        "system": "<|im_start|>system\n",
        "user": "<|im_start|>user\n",
        "assistant": "<|im_start|>assistant\n",
        "tool": "<|im_start|>user\n<tool_response>\n",
    }
    assert source.footers["assistant"] == "<|im_end|>\n"
    assert source.tool_separator == "\n</tool_response>\n<tool_response>\n"
    assert source.tools_block is not None and source.tools_block.begin.startswith("\n\n# Tools\n\n")
    assert dict(source.prefills)["<think>\n\n</think>\n\n"] == (("enable_thinking", False),)


# -- composition ----------------------------------------------------------------------------


def test_any_framing_composes_with_any_call_syntax() -> None:
    # Qwen's ChatML framing with DeepSeek's call syntax: one LALR grammar, one engine.
    chatml = chatcodec.load("qwen3").format
    mixed = Format("chatml+deepseek", chatml.framing, chatml.reasoning, DEEPSEEK)
    codec = chatcodec.load("qwen3")
    codec._format = mixed
    completion = (
        "<think>\nplan\n</think>\n\nOn it.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
        '<｜tool▁sep｜>{"city": "Oslo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><|im_end|>'
    )
    message = codec.parse(completion)
    assert (message.reasoning_content, message.content) == ("plan", "On it.")
    assert message.tool_calls is not None and message.tool_calls[0].function.arguments == '{"city": "Oslo"}'
    # The same framing without calls: the call delimiters are text.
    plain = Format("chatml", chatml.framing, chatml.reasoning, None)
    codec._format = plain
    assert codec.parse(completion).content == completion.split("</think>\n\n")[1].removesuffix("<|im_end|>")


def test_named_formats_compose_from_pieces() -> None:
    deepseek = format_named("deepseek")
    assert deepseek.calls is DEEPSEEK and deepseek.reasoning is not None
    assert format_named("qwen3").calls is HERMES
    for text in (format_named(name).grammar_text for name in ("qwen3", "deepseek", "deepseek_v3", "llama3_hermes")):
        LalrTable(text, "completion")  # each is one LALR grammar
    with pytest.raises(chatcodec.UnsupportedTemplateError, match="unknown format 'nope'"):
        format_named("nope")


# ChatML, with calls written in a syntax no model uses: ``CALL name(json)``.
INVENTED_CALLS = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}"
    "{% for c in m.tool_calls or [] %}CALL {{ c.function.name }}({{ c.function.arguments | tojson }}){% endfor %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_a_template_whose_call_syntax_is_unknown_parses_content_and_reasoning(tmp_path: Path) -> None:
    path = tmp_path / "invented.jinja"
    path.write_text(INVENTED_CALLS)
    codec = chatcodec.load(path)
    assert codec.format.calls is None
    assert "does not read yet" in (codec.format.calls_note or "")
    assert "CALL cc_probe_tool(" in (codec.format.calls_note or "")  # the note shows what it wrote
    completion = 'Sure.\nCALL get_weather({"city": "Paris"})<|im_end|>'
    result = codec.parse_detailed(completion)
    assert result.message.content == completion.removesuffix("<|im_end|>") and result.message.tool_calls is None


# -- inspect ------------------------------------------------------------------------------------


def test_inspect_prints_the_framing_reasoning_calls_and_capabilities(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "-t", "qwen3"]) == 0
    out = capsys.readouterr().out
    assert "  user: header '<|im_start|>user\\n', footer '<|im_end|>\\n'" in out
    assert "reasoning: <think> … </think>" in out
    assert "calls: hermes" in out
    assert "  reasoning kept: after the last user message" in out
    path = str(template("Llama-3.1-8B-Instruct"))
    assert main(["inspect", "-t", path]) == 0
    out = capsys.readouterr().out
    assert 'calls: llama_json  {"name": …, "parameters": {…}} as the whole answer' in out
    assert "  tools block (user): begins 'Given the following functions" in out
    assert "  parallel calls: no" in out  # Llama 3.1 raises on two calls


def test_inspect_json_and_grammar(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "-t", "qwen3", "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["calls"]["syntax"] == "hermes"
    assert described["framing"]["roles"]["tool"]["header"] == "<|im_start|>user\n<tool_response>\n"
    assert described["capabilities"]["tool_role"] is True
    assert described == chatcodec.load("qwen3").describe()
    assert main(["inspect", "-t", "qwen3", "--grammar"]) == 0
    grammar = capsys.readouterr().out
    assert grammar == chatcodec.load("qwen3").format.grammar_text
    LalrTable(grammar, "transcript")


def test_inspect_of_a_template_without_a_framing_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.jinja"
    plain.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert main(["inspect", "-t", str(plain)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "does not write a format chatcodec can parse" in err


# -- transcripts keep the engine's properties -------------------------------------------------

ALPHABET = st.sampled_from(
    list("ab <>|/\n{}\":,") + ["<|im_start|>", "<|im_end|>", "user\n", "assistant\n", "<think>", "</think>", "<tool_call>"]
)


@pytest.mark.parametrize("name", ["qwen3", "llama3_hermes", "deepseek"])
@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(ALPHABET, max_size=40), cuts=st.lists(st.integers(1, 7), min_size=1, max_size=5))
def test_any_text_reads_as_a_transcript_that_tiles_it_in_any_chunking(name: str, pieces: list[str], cuts: list[int]) -> None:
    codec = chatcodec.load(name)
    text = "".join(pieces)
    whole = codec.parse_transcript(text)
    assert whole.reassemble() == text
    parts = whole.parts()
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
    chunks, at, i = [], 0, 0
    while at < len(text):
        step = cuts[i % len(cuts)]
        chunks.append(text[at : at + step])
        at += step
        i += 1
    chunked = TranscriptReader(codec.format, text).read(chunks)
    assert _summary(chunked) == _summary(whole)
    assert chunked.parts() == parts


def _summary(transcript: Any) -> list[Any]:
    return [
        (m.role, m.content, m.reasoning_content, [(c.function.name, c.function.arguments) for c in m.tool_calls or []])
        for m in transcript.messages
    ]
