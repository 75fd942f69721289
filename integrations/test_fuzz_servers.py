"""The fuzzer's inputs for each format (outputs its own template writes, whole and cut short
anywhere), streamed through vLLM's and SGLang's own serving code token by token with the
plugin parsers: every message must equal chatcodec's one-shot parse after the same prompt."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import run as fuzz
from sglang.srt.entrypoints.openai.protocol import Function, Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins
from template_corpus import special_tokens
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser.parser_manager import ParserManager
from vllm.plugins import load_general_plugins

import chatcodec
from servers import Accumulated, byte_level_tokenizer, drive_sglang, drive_vllm, token_deltas

# The formats these tests were checked on against the servers' code (the fuzzer knows more;
# tests/test_handover.py runs its own split over all of them).
SERVED_FORMATS = (
    "qwen3", "deepseek", "llama3_hermes", "deepseek_r1", "dsml", "llama_json", "llama4_json", "pythonic_list",
    "pythonic", "olmo3", "mistral", "mistral_list", "qwen3_coder", "glm", "kimi", "harmony", "minimax", "seed",
    "tool_calls_list", "cohere", "gemma", "atem", "hunyuan", "minicpm", "minimax_m1", "xtml", "minimax_m3",
)  # fmt: skip
FORMATS = sorted(SERVED_FORMATS)
ROOT = Path(__file__).resolve().parent.parent


def fuzz_case(name: str, seed: int) -> tuple[chatcodec.Codec, fuzz.Inputs, list[str], Any]:
    """The format's codec and fuzz inputs (25 texts), and a tokenizer for its template."""
    codec = fuzz.load(name)
    rng = random.Random(seed)
    inputs = fuzz.Inputs(codec, rng, 600)
    texts = [text for text in (rng.choice([inputs._valid, inputs._truncated])() for _ in range(25)) if text]
    path = ROOT / "tests" / "templates" / f"{fuzz.FORMATS[name]}.jinja"
    if not path.exists():
        path = ROOT / "templates" / f"{fuzz.FORMATS[name]}.jinja"
    tokenizer = byte_level_tokenizer(path, (inputs.prompt or "") + "".join(texts), special_tokens(path))
    return codec, inputs, texts, tokenizer


def whole_parse(codec: chatcodec.Codec, text: str, prompt: str | None) -> tuple[str, str, list[tuple[str, str]]]:
    message = codec.parse(text, prompt, tools=fuzz.TOOLS)
    calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
    return message.reasoning_content or "", message.content or "", calls


@pytest.mark.parametrize("name", FORMATS)
def test_vllm_streams_fuzz_inputs_as_the_whole_parse_reads_them(name: str) -> None:
    load_general_plugins()
    codec, inputs, texts, tokenizer = fuzz_case(name, 7)
    rng = random.Random(7)
    cls = ParserManager.get_parser(
        tool_parser_name="chatcodec", reasoning_parser_name="chatcodec", enable_auto_tools=True, tokenizer=tokenizer
    )
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=fuzz.TOOLS, stream=True)
    # vLLM's serving code always gives the prompt's tokens; the prompt is the template's own
    # (one template refuses the fuzzer's conversation: its outputs stream without a prompt).
    prompt_ids = tokenizer.encode(inputs.prompt, add_special_tokens=False) if inputs.prompt is not None else None
    for text in texts:
        out: Accumulated = drive_vllm(cls, tokenizer, request, token_deltas(tokenizer, text, rng.randint(1, 4)), prompt_ids)
        assert out.summary() == whole_parse(codec, text, inputs.prompt), text


@pytest.mark.parametrize("name", FORMATS)
def test_sglang_streams_fuzz_inputs_as_the_whole_parse_reads_them(name: str) -> None:
    load_plugins()
    codec, inputs, texts, tokenizer = fuzz_case(name, 8)
    if inputs.prompt is None:
        pytest.skip("the template refuses the fuzzer's conversation")
    rng = random.Random(8)
    tools = [Tool(type="function", function=Function(**tool["function"])) for tool in fuzz.TOOLS]
    forced = codec.prompt_state(inputs.prompt).state == "reasoning"
    for text in texts:
        whole = codec.parse_detailed(text, inputs.prompt, tools=fuzz.TOOLS)
        if any(diagnostic.kind == "tool_call_in_reasoning" for diagnostic in whole.diagnostics):
            continue  # SGLang's documented difference: the rest of that think block is content
        reasoning_parser = ReasoningParser("chatcodec", True, forced, None, tokenizer=tokenizer, tool_call_parser_active=True)
        tool_parser = FunctionCallParser(tools, "chatcodec", tokenizer=tokenizer)
        deltas = [delta for delta, _ in token_deltas(tokenizer, text, rng.randint(1, 4))]
        out = drive_sglang(reasoning_parser, tool_parser, deltas)
        assert out.summary() == whole_parse(codec, text, inputs.prompt), text
