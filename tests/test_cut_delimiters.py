"""A completion that ends inside a delimiter: a whole special token, then the start of what must
follow it (a server's token limit reached inside gpt-oss's ``<|channel|>final<|message|>``).

The held text is neither content nor a delimiter: it is an unparsed span with an
``unclosed_delimiter`` diagnostic, and the finish is ``length``. Text that only looks like the
start of a delimiter (``<tool_ca``: a model writes ``<tool_call>`` as one token) stays text.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from parsing_support import parse_both

import chatcodec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz_run  # noqa: E402 - the fuzz harness's templates

HARMONY_REASONING = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant"


@pytest.fixture(scope="module")
def gpt_oss() -> tuple[chatcodec.Codec, str]:
    codec = fuzz_run.load("harmony")
    return codec, codec.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)


@pytest.mark.parametrize(
    ("completion", "reasoning"),
    [
        (HARMONY_REASONING + "<|channel|>fin", "Think."),
        (HARMONY_REASONING + "<|channel|>", "Think."),
        ("<|channel|>analy", None),
        ("<|channel|>analysis", None),
    ],
)
def test_gpt_oss_text_cut_inside_a_header_is_no_content(gpt_oss: tuple[chatcodec.Codec, str], completion: str, reasoning: str | None) -> None:
    codec, prompt = gpt_oss
    result = parse_both(codec, completion, prompt=prompt)
    assert not result.message.content
    assert result.message.reasoning_content == reasoning
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_delimiter"]
    cut = completion.rindex("<|channel|>")
    assert result.diagnostics[0].position == cut
    assert [(span.kind, result.span_text(span)) for span in result.spans][-1] == ("unparsed", completion[cut:])
    assert codec.parse(completion, prompt).content == result.message.content
    with pytest.raises(chatcodec.ParseError) as raised:
        codec.parse(completion, prompt, strict=True)
    assert raised.value.kind == "unclosed_delimiter"


def test_deepseek_text_cut_inside_a_calls_opening_is_cut_short() -> None:
    codec = chatcodec.load("deepseek", family="deepseek_v3")
    # `<｜tool▁call▁begin｜>` is one token; the call's opening goes on with "function<｜tool▁sep｜>".
    text = "Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>func"
    result = parse_both(codec, text, reasoning=False)
    assert result.message.content == "Let me look.<｜tool▁calls▁begin｜>"
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_tool_call", "unclosed_delimiter"]


@pytest.mark.parametrize(("family", "text"), [("qwen3", "Use <tool_ca"), ("deepseek", "Hi<｜tool▁ca")])
def test_text_that_only_looks_like_a_cut_delimiter_stays_text(family: str, text: str) -> None:
    # No whole token begins it: a model writes `<tool_call>` and `<｜tool▁calls▁begin｜>` as one.
    result = parse_both(chatcodec.load(family), text, reasoning=False)
    assert result.message.content == text
    assert result.finish_reason == "stop" and result.diagnostics == []


@pytest.mark.parametrize("name", ["qwen3_coder", "seed"])
@pytest.mark.parametrize("rest", ["", "\n", "\n<func"])
def test_text_cut_after_a_whole_tag_that_only_begins_a_calls_opening_is_cut_short(name: str, rest: str) -> None:
    # Qwen3-Coder's and Seed's calls open with `<tool_call>` then `<function=`: the first tag
    # alone is no delimiter, but a model writes it as one token, so text that ends there or
    # inside `<function=` was cut inside the call's opening, as Hermes' `<tool_call>` would be.
    codec = fuzz_run.load(name)
    prompt = codec.render([{"role": "user", "content": "hi"}], tools=fuzz_run.TOOLS, add_generation_prompt=True)
    opening = "<seed:tool_call>" if name == "seed" else "<tool_call>"
    completion = "Let me check.\n" + opening + rest
    result = parse_both(codec, completion, prompt=prompt, tools=fuzz_run.TOOLS)
    assert result.message.content == "Let me check."
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_delimiter"]
    assert [(span.kind, result.span_text(span)) for span in result.spans][-1] == ("unparsed", "\n" + opening + rest)
    # Text going on after the tag in a way no opening does is text, as before.
    written = "Let me check.\n" + opening + " is the tag."
    assert parse_both(codec, written, prompt=prompt, tools=fuzz_run.TOOLS).message.content == written


@pytest.mark.parametrize(("text", "held"), [("\n</think>\n<response>", "<response>"), ("Hi.\n</think>\n\n<response>", "<response>")])
def test_text_cut_after_a_whole_tag_that_begins_an_answers_opening_is_cut_short(text: str, held: str) -> None:
    # ERNIE 4.5 Thinking opens its answer with `<response>\n`: text that ends right after the
    # tag was cut inside that opening, read whole as streamed (the one-shot way once took the
    # tag for content while a stream held it back).
    codec = chatcodec.load(str(Path(__file__).parent / "templates" / "Baidu-ERNIE-4.5-21B-A3B-Thinking.jinja"))
    result = parse_both(codec, text)
    assert not result.message.content
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_delimiter"]
    assert [(span.kind, result.span_text(span)) for span in result.spans][-1] == ("unparsed", held)
    fed_whole = codec.stream()
    fed_whole.feed(text)
    fed_whole.close()
    assert fed_whole.result().spans == result.spans


@pytest.mark.parametrize("prefill", ["\n</think>\n<re", "\n</think>\n<response"])
def test_a_tag_begun_in_the_prefill_and_cut_after_it_is_cut_short(prefill: str) -> None:
    # Found by fuzzing: the same, where the prefill (a handover) holds the tag's start and the
    # text its end. The one-shot way looked at the text alone, where no tag stands.
    codec = chatcodec.load(str(Path(__file__).parent / "templates" / "Baidu-ERNIE-4.5-21B-A3B-Thinking.jinja"))
    text = "<response>"[len(prefill) - prefill.rindex("<") :]
    result = codec.parse_detailed(text, prefill=prefill)
    assert not result.message.content
    assert result.finish_reason == "length"
    assert [d.kind for d in result.diagnostics] == ["unclosed_delimiter"]
    assert not codec.parse(text, prefill=prefill).content
    fed_whole = codec.stream(prefill=prefill)
    fed_whole.feed(text)
    fed_whole.close()
    assert fed_whole.result().message.content == result.message.content
