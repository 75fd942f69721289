"""The fuzzer's inputs for each format (outputs its own template writes, whole and cut short
anywhere), streamed through vLLM's own ChatStreamProcessor token by token with the plugin
parsers: every message must equal chatcodec's one-shot parse after the same prompt."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from test_corpus_servers import byte_level_tokenizer, steps
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager
from vllm.plugins import load_general_plugins

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "vllm"))
import run as fuzz  # noqa: E402
from servers import Accumulated  # noqa: E402

# Every format the fuzzer knows, as in tests/test_handover.py.
FORMATS = sorted(fuzz.FORMATS)
TEMPLATES = Path(__file__).resolve().parent.parent / "tests" / "templates"


@pytest.mark.parametrize("name", FORMATS)
def test_vllm_streams_fuzz_inputs_as_the_whole_parse_reads_them(name: str) -> None:
    load_general_plugins()
    codec = fuzz.load(name)
    rng = random.Random(7)
    inputs = fuzz.Inputs(codec, rng, 600)
    texts = [rng.choice([inputs._valid, inputs._truncated])() for _ in range(25)]
    path = TEMPLATES / f"{fuzz.FORMATS[name]}.jinja"
    if not path.exists():
        path = Path(__file__).resolve().parent.parent / "templates" / f"{fuzz.FORMATS[name]}.jinja"
    tokenizer = byte_level_tokenizer(path, (inputs.prompt or "") + "".join(texts))
    cls = ParserManager.get_parser(
        tool_parser_name="chatcodec", reasoning_parser_name="chatcodec", enable_auto_tools=True, tokenizer=tokenizer
    )
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=fuzz.TOOLS, stream=True)
    for text in texts:
        if not text:
            continue
        # vLLM's serving code always gives the prompt's tokens; the prompt is the template's own.
        prompt = inputs.prompt
        prompt_ids = tokenizer.encode(prompt, add_special_tokens=False) if prompt is not None else None
        parser = cls(tokenizer, request.tools)
        processor = ChatStreamProcessor(parser.adjust_request(request), parser, enable_auto_tools=True, parser_cls=cls)
        out = Accumulated()
        deltas = steps(tokenizer, text, rng.randint(1, 4))
        for position, (delta, ids) in enumerate(deltas):
            step = processor.step(delta, ids, "stop" if position == len(deltas) - 1 else None, prompt_ids)
            if step.delta is not None:
                out.add(step.delta)
        message = codec.parse(text, prompt, tools=fuzz.TOOLS)
        calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
        assert out.summary() == (message.reasoning_content or "", message.content or "", calls), (text, prompt is not None)


@pytest.mark.parametrize("name", FORMATS)
def test_sglang_streams_fuzz_inputs_as_the_whole_parse_reads_them(name: str) -> None:
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.plugins import load_plugins

    load_plugins()
    codec = fuzz.load(name)
    rng = random.Random(8)
    inputs = fuzz.Inputs(codec, rng, 600)
    if inputs.prompt is None:
        pytest.skip("the template refuses the fuzzer's conversation")
    state = codec.prompt_state(inputs.prompt)
    texts = [rng.choice([inputs._valid, inputs._truncated])() for _ in range(25)]
    path = TEMPLATES / f"{fuzz.FORMATS[name]}.jinja"
    if not path.exists():
        path = Path(__file__).resolve().parent.parent / "templates" / f"{fuzz.FORMATS[name]}.jinja"
    tokenizer = byte_level_tokenizer(path, inputs.prompt + "".join(texts))
    tools = [Tool(type="function", function=Function(**tool["function"])) for tool in fuzz.TOOLS]
    forced = state.state == "reasoning"
    for text in texts:
        if not text:
            continue
        reasoning_parser = ReasoningParser("chatcodec", True, forced, None, tokenizer=tokenizer, tool_call_parser_active=True)
        tool_parser = FunctionCallParser(tools, "chatcodec", tokenizer=tokenizer)
        out = Accumulated()
        deltas = steps(tokenizer, text, rng.randint(1, 4))
        for position, (delta, _) in enumerate(deltas):
            last = position == len(deltas) - 1
            reasoning, normal = reasoning_parser.parse_stream_chunk(delta)
            if last:
                more_reasoning, more_normal = reasoning_parser.parse_stream_end()
                reasoning, normal = (reasoning or "") + (more_reasoning or ""), (normal or "") + (more_normal or "")
            out.reasoning += reasoning or ""
            normal_text, calls = tool_parser.parse_stream_chunk(normal or "")
            if last:
                end_text, end_calls = tool_parser.parse_stream_end()
                normal_text, calls = normal_text + end_text, list(calls) + list(end_calls)
            out.content += normal_text
            for call in calls:
                entry = out.calls.setdefault(call.tool_index, {"id": "", "name": "", "arguments": ""})
                entry["name"] += call.name or ""
                entry["arguments"] += call.parameters or ""
        whole = codec.parse_detailed(text, inputs.prompt, tools=fuzz.TOOLS)
        if any(diagnostic.kind == "tool_call_in_reasoning" for diagnostic in whole.diagnostics):
            continue  # SGLang's documented difference: the rest of that think block is content
        message = whole.message
        calls_read = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
        assert out.summary() == (message.reasoning_content or "", message.content or "", calls_read), text
