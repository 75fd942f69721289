"""Driving the servers' own code with the plugins, without an engine: vLLM's composed parser
and per-chunk stream processor, as `vllm serve` runs them for one request, and SGLang's
reasoning and function-call parsers in the order its chat serving calls them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tiny_tokenizer import tiny_tokenizer
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager

import chatcodec

TOKENIZER_SETUP: dict[str, dict[str, Any]] = {
    "qwen3": {
        "markers": ["<think>", "</think>", "<tool_call>", "</tool_call>"],
        "special": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"],
        "eos_token": "<|im_end|>",
    },
    "deepseek": {
        "markers": [
            "<think>", "</think>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁output▁begin｜>",
            "<｜tool▁output▁end｜>",
        ],
        "special": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
        "eos_token": "<｜end▁of▁sentence｜>",
        "bos_token": "<｜begin▁of▁sentence｜>",
    },
    "llama3_hermes": {
        "markers": ["<tool_call>", "</tool_call>"],
        "special": ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
        "eos_token": "<|eot_id|>",
        "bos_token": "<|begin_of_text|>",
    },
}
_TOKENIZERS: dict[str, Any] = {}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def tokenizer_for(template: str) -> Any:
    if template not in _TOKENIZERS:
        _TOKENIZERS[template] = tiny_tokenizer(template, **TOKENIZER_SETUP[template])
    return _TOKENIZERS[template]


def request_for(tools: list[dict[str, Any]] | None = None, **options: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="tiny", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=tools, **options
    )


def prompt_ids(template: str, **render_options: Any) -> list[int]:
    codec = chatcodec.load(template)
    prompt = codec.render(
        [{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER_TOOL], add_generation_prompt=True,
        on_special_tokens="ignore", **render_options
    )
    ids: list[int] = tokenizer_for(template).encode(prompt, add_special_tokens=False)
    return ids


def parser_class(template: str, *, tool: bool = True, reasoning: bool = True) -> Any:
    return ParserManager.get_parser(
        tool_parser_name="chatcodec" if tool else None,
        reasoning_parser_name="chatcodec" if reasoning else None,
        enable_auto_tools=True,
        tokenizer=tokenizer_for(template),
    )


@dataclass
class Accumulated:
    """What an OpenAI client makes of the streamed deltas."""

    reasoning: str = ""
    content: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None

    def add(self, delta: Any) -> None:
        self.reasoning += delta.reasoning or ""
        self.content += delta.content or ""
        for call in delta.tool_calls or []:
            entry = self.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            if call.id:
                entry["id"] = call.id
            if call.function is not None:
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""

    def summary(self) -> tuple[str, str, list[tuple[str, str]]]:
        return self.reasoning, self.content, [(c["name"], c["arguments"]) for _, c in sorted(self.calls.items())]


def byte_level_tokenizer(template: Path, text: str, special_tokens: dict[str, str]) -> Any:
    """A byte-level BPE learnt from the text it will encode, carrying the template: any text
    encodes and decodes back exactly, markers split over several tokens as in the worst case."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator([text] * 3, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, **special_tokens)
    tokenizer.chat_template = template.read_text(encoding="utf-8")
    return tokenizer


def token_deltas(tokenizer: Any, completion: str, group: int | list[int] = 1) -> list[tuple[str, list[int]]]:
    """The completion as the engine streams it: token ids in groups, each with the text the
    detokenizer adds (text of an unfinished UTF-8 character is held back, as vLLM does)."""
    ids: list[int] = tokenizer.encode(completion, add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=False) == completion
    sizes = [group] * len(ids) if isinstance(group, int) else group
    deltas: list[tuple[str, list[int]]] = []
    sent, at, step = "", 0, 0
    while at < len(ids):
        size = max(1, sizes[step % len(sizes)])
        step += 1
        chunk = ids[at : at + size]
        at += len(chunk)
        text = tokenizer.decode(ids[:at], skip_special_tokens=False)
        if text.endswith("\ufffd") and at < len(ids):
            deltas.append(("", chunk))
            continue
        deltas.append((text[len(sent) :], chunk))
        sent = text
    return deltas


def drive_vllm(
    parser_cls: Any, tokenizer: Any, request: ChatCompletionRequest, deltas: list[tuple[str, list[int]]], prompt: list[int] | None
) -> Accumulated:
    """One request's stream through vLLM's ChatStreamProcessor, the last delta finishing it."""
    parser = parser_cls(tokenizer, request.tools)
    processor = ChatStreamProcessor(parser.adjust_request(request), parser, enable_auto_tools=True, parser_cls=parser_cls)
    out = Accumulated()
    for position, (text, ids) in enumerate(deltas):
        last = position == len(deltas) - 1
        step = processor.step(text, ids, "stop" if last else None, prompt)
        if step.delta is not None:
            out.add(step.delta)
        if last:
            out.finish_reason = step.finish_reason
    return out


def drive_sglang(reasoning_parser: Any, tool_parser: Any, deltas: list[str]) -> Accumulated:
    """One request's stream through SGLang's parsers as its chat serving runs them: each
    delta's normal text goes on to the function-call parser, and both are flushed at the end."""
    out = Accumulated()
    for position, delta in enumerate(deltas):
        last = position == len(deltas) - 1
        reasoning, normal = reasoning_parser.parse_stream_chunk(delta)
        if last:
            more_reasoning, more_normal = reasoning_parser.parse_stream_end()
            reasoning, normal = (reasoning or "") + (more_reasoning or ""), (normal or "") + (more_normal or "")
        out.reasoning += reasoning or ""
        text, calls = tool_parser.parse_stream_chunk(normal or "")
        if last:
            end_text, end_calls = tool_parser.parse_stream_end()
            text, calls = text + end_text, list(calls) + list(end_calls)
        out.content += text
        for call in calls:
            entry = out.calls.setdefault(call.tool_index, {"id": "", "name": "", "arguments": ""})
            entry["name"] += call.name or ""
            entry["arguments"] += call.parameters or ""
    return out


def stream_through_vllm(
    template: str,
    completion: str,
    request: ChatCompletionRequest,
    prompt: list[int],
    *,
    group: int | list[int] = 1,
    tool: bool = True,
    reasoning: bool = True,
) -> Accumulated:
    tokenizer = tokenizer_for(template)
    deltas = token_deltas(tokenizer, completion, group)
    return drive_vllm(parser_class(template, tool=tool, reasoning=reasoning), tokenizer, request, deltas, prompt)


def parse_through_vllm(
    template: str,
    completion: str,
    request: ChatCompletionRequest,
    prompt: list[int],
    *,
    tool: bool = True,
    reasoning: bool = True,
) -> tuple[str, str, list[tuple[str, str]]]:
    cls = parser_class(template, tool=tool, reasoning=reasoning)
    parser = cls(tokenizer_for(template), request.tools)
    request = parser.adjust_request(request)
    parser.set_prompt_token_ids(prompt)
    found_reasoning, content, calls = parser.parse(completion, request, enable_auto_tools=True)
    return found_reasoning or "", content or "", [(call.name, call.arguments) for call in calls or []]


def chatcodec_reading(
    template: str, completion: str, prompt: list[int], tools: list[Any] | None
) -> tuple[str, str, list[tuple[str, str]]]:
    """chatcodec's own one-shot parse of the same completion after the same prompt."""
    prompt_text = tokenizer_for(template).decode(prompt, skip_special_tokens=False)
    message = chatcodec.load(template).parse(completion, prompt_text, tools=tools if tools is not None else [])
    calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
    return message.reasoning_content or "", message.content or "", calls
