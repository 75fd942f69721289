"""SGLang's tool-call detector and reasoning detector, for any chat template chatcodec reads.

    pip install chatcodec[sglang]
    sglang serve --model-path MODEL --reasoning-parser chatcodec --tool-call-parser chatcodec

The plugin (``chatcodec.adapters.sglang_plugin``, an ``sglang.srt.plugins`` entry point that
SGLang runs before it reads its arguments) adds both under the name ``chatcodec``. The
template is the tokenizer's own (``CHATCODEC_TEMPLATE`` / ``CHATCODEC_FAMILY`` as for vLLM).

SGLang passes the reasoning detector's normal text on to the tool detector, delta by delta;
the reasoning detector starts inside reasoning when SGLang says the prompt opened it
(``force_reasoning``). SGLang's tool detector has no reasoning field: after a call written
inside an unclosed think block, the rest of that block reaches the client as content, with its
tags, rather than being lost.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

from chatcodec.adapters.handover import (
    TEMPLATE_VARIABLE,
    ReasoningHalf,
    ToolHalf,
    closed_prefill,
    codec_for,
    load_cached,
    tool_definitions,
)
from chatcodec.adapters.openai import ChunkAdapter
from chatcodec.codec import Codec
from chatcodec.errors import ChatCodecError
from chatcodec.events import ContentDelta, Event


# SGLang's server hands its parsers the tokenizer. Code that builds them without one (test
# harnesses) gets the template named by CHATCODEC_TEMPLATE or, failing that, a bundled one:
# for the tool detector, the one the output's first tag belongs to (DeepSeek's tags start with
# a full-width bar; Qwen3's and Hermes' are <tool_call>), for the reasoning detector qwen3's
# <think> tags.
def _codec(tokenizer: Any) -> Codec | None:
    if tokenizer is not None:
        return codec_for(tokenizer)
    override = os.environ.get(TEMPLATE_VARIABLE)
    return load_cached(override) if override else None


def _for_tag(tag_start: str) -> Codec:
    return load_cached("deepseek" if tag_start.startswith("<｜") else "qwen3")


@lru_cache(maxsize=32)
def _generation_prompt(codec: Codec) -> str | None:
    """The template's own generation prompt (default keywords), or ``None`` if it fails."""
    try:
        return codec.render([{"role": "user", "content": "?"}], add_generation_prompt=True, on_special_tokens="ignore")
    except ChatCodecError:
        return None


def _prompt_for(codec: Codec, inside_reasoning: bool | None) -> str | None:
    """The template's generation prompt when it agrees with what SGLang says of the request's
    (inside reasoning or not): it says with which spelling the prompt opened or closed the
    block, so whitespace the output starts with goes where the whole parse puts it."""
    prompt = _generation_prompt(codec)
    if prompt is None or inside_reasoning is None:
        return None
    state = codec.prompt_state(prompt)
    if inside_reasoning:
        return prompt if state.state == "reasoning" else None
    return prompt if state.state == "content" and state.prefill else None


class ChatcodecDetector(BaseFormatDetector):  # type: ignore[misc]
    """SGLang's tool-call detector over chatcodec's parser for the model's format."""

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__()
        self.codec = _codec(tokenizer)
        if self.codec is not None:
            self.codec.format  # a template chatcodec cannot read fails here, by name
        self._half: ToolHalf | None = None
        self._chunks = ChunkAdapter("sglang")
        self._before_tag = ""  # with no template yet: text up to a tag that says which

    def supports_structural_tag(self) -> bool:
        return False  # "required" goes through SGLang's JSON-array path

    def has_tool_call(self, text: str) -> bool:
        """Whether ``text`` holds a call to any tool (SGLang asks before parsing it whole)."""
        return bool(self._read_whole(text, None).calls)

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        return self._read_whole(text, tools)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        head = ""
        if self._half is None:
            if self.codec is None:
                text = self._before_tag + new_text
                at = text.find("<")
                if at < 0 or at + 1 >= len(text):
                    # No tag yet: the text up to a possible one is content in every format.
                    sent = text if at < 0 else text[:at]
                    self._before_tag = text[len(sent) :]
                    return StreamingParseResult(normal_text=sent)
                self.codec = _for_tag(text[at:])
                head, new_text, self._before_tag = text[:at], text[at:], ""
            self._half = self._new_half(tools)
        result = self._result(self._half.feed(new_text))
        result.normal_text = head + result.normal_text
        return result

    def finish(self, tools: Any) -> StreamingParseResult:
        if self._half is None:
            held, self._before_tag = self._before_tag, ""
            return StreamingParseResult(normal_text=held)
        half, self._half = self._half, None
        return self._result(half.finish())

    def structure_info(self) -> Any:
        raise NotImplementedError("chatcodec reads the model's own call syntax; it builds no structural tags")

    def _new_half(self, tools: Any) -> ToolHalf:
        assert self.codec is not None
        # Think blocks the tool detector sees are text: SGLang has nowhere else to put them.
        return ToolHalf(self.codec, tool_definitions(tools), think_blocks_as_text=True, closed_prefill=_answer_prefill(self.codec))

    def _read_whole(self, text: str, tools: Any) -> StreamingParseResult:
        codec = self.codec or _for_tag(text[text.find("<") :] if "<" in text else "")
        half = ToolHalf(
            codec, tool_definitions(tools) if tools is not None else None, think_blocks_as_text=True, closed_prefill=_answer_prefill(codec)
        )
        events, found = half.read(text)
        content = "".join(event.text for event in events if isinstance(event, ContentDelta))
        calls = [
            ToolCallItem(tool_index=index, name=call.function.name, parameters=call.function.arguments)
            for index, call in enumerate(found)
        ]
        return StreamingParseResult(normal_text=content, calls=calls)

    def _result(self, events: list[Event]) -> StreamingParseResult:
        normal: list[str] = []
        calls: list[ToolCallItem] = []
        for delta in self._chunks.deltas(events):
            normal.append(delta.get("content", ""))
            for call in delta.get("tool_calls", []):
                function = call.get("function", {})
                name = function.get("name") if "id" in call and "name" in function else None
                calls.append(ToolCallItem(tool_index=call["index"], name=name, parameters=function.get("arguments", "")))
        return StreamingParseResult(normal_text="".join(normal), calls=calls)


class ChatcodecReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc]
    """SGLang's reasoning detector over chatcodec's parser for the model's format."""

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        tokenizer: Any = None,
        **options: Any,
    ) -> None:
        codec = _codec(tokenizer) or load_cached("qwen3")
        syntax = codec.format.reasoning
        super().__init__(
            think_start_token=syntax.open_tag if syntax else "",
            think_end_token=syntax.close_tag if syntax else "",
            force_reasoning=bool(force_reasoning),
            stream_reasoning=stream_reasoning,
            # Whether a request starts inside reasoning comes from the template, not this class.
            reasoning_default=None,
        )
        self.codec = codec
        self._force = force_reasoning
        # SGLang says whether the prompt opened reasoning, not how: the template's own
        # generation prompt says with which spelling, when it agrees.
        self._prompt = _prompt_for(codec, force_reasoning)
        self._half = self._new_half()
        self._held_reasoning: list[str] = []  # with stream_reasoning=False, sent at the end

    def _new_half(self) -> ReasoningHalf:
        if self._prompt is not None:
            return ReasoningHalf(self.codec, self._prompt)
        return ReasoningHalf(self.codec, inside_reasoning=self._force)

    def detect_and_parse(self, text: str) -> ReasoningResult:
        reasoning, rest = self._new_half().split(text)
        return ReasoningResult(normal_text=rest, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        split = self._half.feed(new_text)
        return self._result(split.reasoning, split.rest, done=self._half.handed_over)

    def finish(self) -> ReasoningResult:
        reasoning, content = self._half.finish()
        return self._result(reasoning, content, done=True)

    def _result(self, reasoning: str, normal: str, *, done: bool) -> ReasoningResult:
        if not self.stream_reasoning:
            self._held_reasoning.append(reasoning)
            reasoning = "".join(self._held_reasoning) if done else ""
            if done:
                self._held_reasoning.clear()
        return ReasoningResult(normal_text=normal, reasoning_text=reasoning)


def _answer_prefill(codec: Codec) -> str | None:
    """What the generation prompt of a format without reasoning writes that the answer goes on
    from (Functionary v3.2's ``>>>``): SGLang's tool detector never sees the prompt. (With
    reasoning, the reasoning detector before it says where the answer starts.)"""
    return closed_prefill(codec, None) if codec.format.reasoning is None else None
