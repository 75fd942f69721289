"""A delimiter the parser's state rejects must not hide one it accepts that begins inside it.

gpt-oss's tool turn ends with ``"<|end|>`` (a tool result is written as a JSON string); the
reasoning's closing tag is ``<|end|><|start|>assistant``. Reasoning that ends with a quote
holds both, one character apart: the longer, later one is the one the state takes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import chatcodec
from chatcodec.errors import GrammarError
from chatcodec.parse.grammar import FamilyGrammar
from chatcodec.parse.transcript import TranscriptReader
from template_corpus import special_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz_run  # noqa: E402 - the fuzz harness's format list

TEMPLATES = Path(__file__).parent / "templates"
GPT_OSS = TEMPLATES / "OpenAI-gpt-oss-120b.jinja"
CALL = (
    "<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
    '{"city": "Paris"}<|call|>'
)


@pytest.fixture(scope="module")
def gpt_oss() -> chatcodec.Codec:
    return chatcodec.load(GPT_OSS, special_tokens=special_tokens(GPT_OSS))


@pytest.mark.parametrize("reasoning", ['I will call it: "', '"', 'say "hi"'])
def test_gpt_oss_reasoning_that_ends_with_a_quote_is_closed_by_its_tag(gpt_oss: chatcodec.Codec, reasoning: str) -> None:
    prompt = gpt_oss.render([{"role": "user", "content": "Weather in Paris?"}], add_generation_prompt=True)
    completion = "<|channel|>analysis<|message|>" + reasoning + CALL
    whole = gpt_oss.parse_detailed(completion, prompt)
    assert whole.message.reasoning_content == reasoning
    assert [(c.function.name, c.function.arguments) for c in whole.message.tool_calls or []] == [("get_weather", '{"city": "Paris"}')]
    assert whole.diagnostics == [] and whole.finish_reason == "tool_calls"
    spans = [(span.kind, completion[span.start : span.end]) for span in whole.spans]
    assert ("delimiter", "<|end|><|start|>assistant") in spans
    message = gpt_oss.parse(completion, prompt)
    assert message.reasoning_content == reasoning and message.tool_calls is not None
    assert message.tool_calls[0].function == whole.message.tool_calls[0].function  # type: ignore[index]
    for size in (1, 2, 3, 7):
        parser = gpt_oss.stream(prompt)
        for at in range(0, len(completion), size):
            parser.feed(completion[at : at + size])
        parser.close()
        streamed = parser.result()
        assert streamed.message.reasoning_content == reasoning and streamed.spans == whole.spans, size


def test_a_quote_then_the_tool_turns_closing_is_still_text_in_a_user_turn(gpt_oss: chatcodec.Codec) -> None:
    # Where the state takes nothing that begins inside it, the rejected spelling stays what it
    # was: the quote is the user's text, and the turn ends at ``<|end|>``.
    conversation = [{"role": "user", "content": 'He said "yes"'}, {"role": "assistant", "content": "Good."}]
    text = gpt_oss.render(conversation)
    messages = gpt_oss.parse_transcript(text).messages
    assert [(m.role, m.content) for m in messages][-2:] == [("user", 'He said "yes"'), ("assistant", "Good.")]


def _formats_with_reasoning() -> list[str]:
    return [name for name in fuzz_run.FORMATS if fuzz_run.load(name).format.reasoning is not None]


@pytest.mark.parametrize("name", _formats_with_reasoning())
def test_reasoning_that_ends_with_a_delimiters_first_character_is_closed_by_its_tag(name: str) -> None:
    # Every character a spelling of the format begins with, and the usual punctuation, written
    # last in the reasoning: the closing tag right after it still closes it.
    codec = fuzz_run.load(name)
    grammar = codec.format.grammar
    opener, closer = codec.format.reasoning_opener, grammar.literal("THINK_CLOSE")
    assert opener is not None
    for char in sorted({spelling[0] for spelling in grammar.spellings} | set("\"'],}>|#<`")):
        for reasoning in ("x" + char, "x " + char):
            result = codec.parse_detailed(opener + reasoning + closer + "answer")
            assert (result.message.reasoning_content or "").strip() == reasoning.strip(), (char, result.message)
            assert (result.message.content or "").strip() == "answer" and result.diagnostics == [], (char, result)


# A rendered conversation: a turn's end token ends the turn even inside what reads as a JSON
# string (an answer that begins with "{" and leaves a quote open, in a format whose calls are
# bare JSON objects); the turns after it are read.
@pytest.mark.parametrize(
    "template", ["Llama-3.1-8B-Instruct", "Meta-Llama-4-Scout-17B-16E-Instruct", "Llama-3.2-3B-Instruct"]
)
@pytest.mark.parametrize("answer", ['{"size": "5 inches', '{"a": [1, "b', '{ "unclosed: 1 }'])
def test_a_turn_end_token_ends_an_answer_that_leaves_a_json_string_open(template: str, answer: str) -> None:
    path = TEMPLATES / f"{template}.jinja"
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    conversation = [
        {"role": "user", "content": "Size?"},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": 'And the "weight"?'},
        {"role": "assistant", "content": "Two pounds."},
    ]
    text = codec.render(conversation)
    transcript = codec.parse_transcript(text)
    assert [(m.role, m.content) for m in transcript.messages if m.role != "system"] == [
        (m["role"], m["content"]) for m in conversation
    ]
    assert transcript.reassemble() == text
    # Read in chunks (a turn end split between two), the same.
    for size in (1, 3, 7):
        chunks = [text[at : at + size] for at in range(0, len(text), size)]
        chunked = TranscriptReader(codec.format, text).read(chunks)
        assert [(m.role, m.content) for m in chunked.messages] == [(m.role, m.content) for m in transcript.messages]


# One spelling for three delimiters (gpt-oss-20b's first template ends a reasoning message, a
# call and the turn with <|end|>): each state takes the one it accepts, the preferred first.
SHARED_END_GRAMMAR = """
completion: THINK_OPEN REASONING? THINK_CLOSE call? END
call: CALL_BEGIN TOOL_ARGUMENTS? CALL_END
THINK_OPEN: "<think>"
THINK_CLOSE: "<|end|>"
CALL_BEGIN: "<call>"
CALL_END: "<|end|>"
END: "<|end|>"
%declare REASONING TOOL_ARGUMENTS
"""


def test_a_spelling_shared_by_three_delimiters_is_the_one_each_state_takes() -> None:
    grammar = FamilyGrammar("shared", SHARED_END_GRAMMAR)
    assert grammar.spellings["<|end|>"] == "END"
    taken = set()
    for state, actions in grammar.tables["completion"].states.items():
        accepted = grammar.state_info("completion", state).matcher.accepted
        if "<|end|>" in accepted:
            expected = next(t for t in ("THINK_CLOSE", "CALL_END", "END") if t in actions)
            assert accepted["<|end|>"] == expected
            taken.add(expected)
    assert taken == {"THINK_CLOSE", "CALL_END", "END"}


def test_a_spelling_shared_by_delimiters_that_may_not_share_one_is_an_error() -> None:
    text = SHARED_END_GRAMMAR.replace('THINK_OPEN: "<think>"', 'THINK_OPEN: "<call>"')
    with pytest.raises(GrammarError, match=r"'<call>' spells both"):
        FamilyGrammar("clash", text)
