"""A real template's own rendering of an assistant message reads back as that message.

For one real template per call syntax: any text in the content and the reasoning, and calls
whose arguments hold any text, rendered by the template after a prompt, parse back (streamed
and whole) into the same content, reasoning and calls, with no diagnostic. This is what caught
gpt-oss reasoning that ends with a quote: `"<|end|>` is a tool turn's closing, and the
reasoning's closing tag `<|end|><|start|>assistant` begins one character later.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from parsing_support import feed_in_chunks

import chatcodec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz_run  # noqa: E402 - the fuzz harness's templates and tools

# Formats whose template writes every message it is given in a form a model writes back. Left
# out, each for a reason of its template: Llama 3.1/4 JSON, Muse and the pythonic ones drop or
# move the content beside calls; Cohere writes the next turn's header after a call; Gemma 4
# writes calls in a notation of its own; DeepSeek R1/V3.2 drop the prompt's think opener.
FORMATS = ("olmo3", "mistral", "magistral", "mistral_list", "qwen3_coder", "glm", "kimi", "minimax", "seed", "tool_calls_list", "harmony", "internlm2")
# The ids the template writes a call with, where it writes any (Kimi's name the function).
IDS = {
    "kimi": lambda name, index: f"functions.{name}:{index}",
    "mistral": lambda name, index: f"a1b2c3d4{index}",
    "mistral_list": lambda name, index: f"a1b2c3d4{index}",
}

PIECES = st.sampled_from(
    list("abcxyz XYZ019.,;:!?-_'\"\\/{}[]()<>|=&%$#@*+~`")
    + ["\n", "\t", "é", "日", "😀", "x<y", "</b>", "to=", "```", "｜"]
)
text = st.lists(PIECES, min_size=1, max_size=16).map("".join).map(str.strip).filter(bool)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.lists(PIECES, max_size=6).map("".join)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "k_1"]), children, max_size=3),
    max_leaves=6,
)
# Arguments that fit the tools' schemas (a string parameter given a number is the string's
# text in formats that write values bare: not what this property is about).
calls = st.lists(
    st.one_of(
        st.builds(lambda city, days: ("get_weather", {"city": city} if days is None else {"city": city, "days": days}),
                  text, st.none() | st.integers(-5, 30)),
        st.builds(lambda query, filters: ("search", {"query": query} if filters is None else {"query": query, "filters": filters}),
                  text, st.none() | st.dictionaries(st.sampled_from(["a", "b"]), json_values, max_size=2)),
    ),
    max_size=2,
)


@pytest.fixture(scope="module")
def codecs() -> dict[str, tuple[chatcodec.Codec, str, tuple[str, ...]]]:
    out = {}
    for name in FORMATS:
        codec = fuzz_run.load(name)
        prompt = codec.render([{"role": "user", "content": "hi"}], tools=fuzz_run.TOOLS, add_generation_prompt=True)
        out[name] = (codec, prompt, tuple(codec.format.grammar.spellings))
    return out


def _message(name: str, content: str, reasoning: str | None, drawn: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if drawn:
        ids = IDS.get(name)
        message["tool_calls"] = [
            {"type": "function", "function": {"name": call, "arguments": arguments}, **({"id": ids(call, i)} if ids else {})}
            for i, (call, arguments) in enumerate(drawn)
        ]
    return message


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(content=text | st.just(""), reasoning=st.none() | text, drawn=calls)
def test_a_templates_rendering_of_a_message_reads_back_as_it(
    codecs: dict[str, tuple[chatcodec.Codec, str, tuple[str, ...]]],
    name: str,
    content: str,
    reasoning: str | None,
    drawn: list[tuple[str, dict[str, Any]]],
) -> None:
    codec, prompt, spellings = codecs[name]
    if name == "harmony":
        # gpt-oss's template writes one call, and the content beside a call as its analysis.
        drawn = drawn[:1]
        if drawn:
            content = ""
    if name == "mistral_list" and drawn:
        content = ""  # Mistral 7B's template writes no content beside calls
    message = _message(name, content, reasoning, drawn)
    # Text that spells a delimiter of the format is not what a template can write unescaped.
    written = [content, reasoning or "", *(json.dumps(a, ensure_ascii=False) for _, a in drawn)]
    assume(not any(spelling.strip() and spelling.strip() in piece for piece in written for spelling in spellings))
    try:
        full = codec.render([{"role": "user", "content": "hi"}, message], tools=fuzz_run.TOOLS, on_special_tokens="ignore")
    except chatcodec.ChatCodecError:
        assume(False)
    assume(full.startswith(prompt))
    completion = full[len(prompt) :]
    # Where the template writes the reasoning, it reads back; some leave it out of the turn.
    opener = codec.format.reasoning_opener
    expect_reasoning = reasoning is not None and opener is not None and opener.strip() in completion

    whole = codec.parse_detailed(completion, prompt, tools=fuzz_run.TOOLS)
    _, streamed = feed_in_chunks(codec, completion, [1, 3, 7], prompt=prompt, tools=fuzz_run.TOOLS)
    for result in (whole, streamed):
        got = result.message
        assert result.diagnostics == [], (completion, result.diagnostics)
        assert (got.content or "").strip() == content.strip(), completion
        if expect_reasoning:
            assert (got.reasoning_content or "").strip() == (reasoning or "").strip(), completion
        assert [(c.function.name, c.function.parsed_arguments) for c in got.tool_calls or []] == drawn, completion
