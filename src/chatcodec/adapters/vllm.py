"""vLLM's tool parser and reasoning parser, for any chat template chatcodec reads.

    pip install chatcodec[vllm]
    vllm serve MODEL --reasoning-parser chatcodec --tool-call-parser chatcodec --enable-auto-tool-choice

The plugin (``chatcodec.adapters.vllm_plugin``, an entry point vLLM loads at start-up) registers
both under the name ``chatcodec``. The template is the tokenizer's own chat template; set
``CHATCODEC_TEMPLATE`` (a bundled name, a ``.jinja`` file or a model folder) when the server
renders with another one (``--chat-template``), and ``CHATCODEC_FAMILY`` when the format cannot
be told from the template.

Both halves parse only the new text of each delta (vLLM's "engine-based" streaming: it hands
them ``delta_text`` and calls ``finish_streaming`` at the end). The reasoning half reads from
the state the prompt leaves (inside ``<think>``, after an empty think block, at the start of the
turn, where a ``<think>`` may still open) and, when the text leaves reasoning, hands the rest to
the tool half as plain text: when a call opens inside an unclosed think block, that text starts
with the opening tag again, so the tool half reads the call and whatever reasoning follows it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaMessage,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser
from vllm.tool_parsers.abstract_tool_parser import ToolParser

from chatcodec.adapters.openai import ChunkAdapter
from chatcodec.codec import Codec, load, load_from_tokenizer
from chatcodec.events import ContentDelta, Diagnostic, Event, ReasoningDelta
from chatcodec.parse.spans import Span
from chatcodec.parse.stream import StreamParser
from chatcodec.render.loading import tokenizer_special_tokens

TEMPLATE_VARIABLE = "CHATCODEC_TEMPLATE"
FAMILY_VARIABLE = "CHATCODEC_FAMILY"
# The prompt's state is read from its last assistant header on: the generation prompt and any
# prefill are in the last few hundred tokens of any prompt.
PROMPT_TAIL_TOKENS = 512
# Tokens before a decode step's new ones that are decoded with them, so that a closing tag
# split across steps is seen whole.
CLOSE_TAG_WINDOW = 16
REASONING_DELIMITERS = frozenset({"THINK_OPEN", "THINK_CLOSE"})


def codec_for(tokenizer: Any) -> Codec:
    """The codec for a server's tokenizer: its own chat template, or ``CHATCODEC_TEMPLATE``."""
    family = os.environ.get(FAMILY_VARIABLE) or None
    override = os.environ.get(TEMPLATE_VARIABLE)
    if override:
        return _load_override(override, tuple(sorted(tokenizer_special_tokens(tokenizer).items())), family)
    return load_from_tokenizer(tokenizer, family=family)


@lru_cache(maxsize=8)
def _load_override(name: str, special_tokens: tuple[tuple[str, str], ...], family: str | None) -> Codec:
    return load(name, special_tokens=dict(special_tokens), family=family)


def _tool_definitions(request: Any) -> list[Any]:
    """The request's tools as chatcodec takes them (definitions, so arguments are read with
    their schemas); none when the request forbids calls, so a call the model writes anyway
    stays in the content instead of vanishing."""
    tools = getattr(request, "tools", None)
    if not tools or getattr(request, "tool_choice", None) == "none":
        return []
    definitions: list[Any] = []
    for tool in tools:
        function = getattr(tool, "function", None)
        if function is not None:  # chat completions: {"type": "function", "function": {...}}
            definitions.append(tool.model_dump(exclude_none=True))
        elif getattr(tool, "name", None):  # the Responses API: a flat function tool
            definitions.append(tool.name)
    return definitions


class ChatcodecToolParser(ToolParser):  # type: ignore[misc]
    """vLLM's ``ToolParser`` over chatcodec's parser for the model's format."""

    engine_based_streaming = True
    # Set by vLLM when no reasoning parser runs: reasoning blocks then stay in the content,
    # tags included, as the model wrote them.
    skip_reasoning_parsing = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self.codec = codec_for(tokenizer)
        self.format = self.codec.format  # a template chatcodec cannot read fails at start-up
        self.diagnostics: list[Diagnostic] = []
        self._stream: StreamParser | None = None
        self._chunks: ChunkAdapter | None = None

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            # Call delimiters are often special tokens: they must reach the parser.
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        stream = self._new_stream(request, model_output)
        events = stream.feed(model_output) + stream.close()
        content = self._content_of(events)
        calls = [
            ToolCall(id=call.id, function=FunctionCall(name=call.function.name, arguments=call.function.arguments))
            for call in stream.message.tool_calls or []
        ]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content or None)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        if self._stream is None:
            if not delta_text:
                return None  # the first text decides where parsing starts
            self._stream = self._new_stream(request, delta_text)
        return self._delta_message(self._stream.feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        """The text's end: a call the model left open is settled, held-back text released."""
        if self._stream is None:
            return None
        stream, self._stream = self._stream, None
        return self._delta_message(stream.close())

    # -- events -> vLLM's messages -----------------------------------------------------------

    def _new_stream(self, request: Any, first_text: str) -> StreamParser:
        """The text this half sees starts where the reasoning half left off: inside reasoning
        if it opens with the reasoning tag (a call written inside a think block, handed over),
        otherwise after reasoning, where a think tag is text. With no reasoning parser at all,
        think blocks are text too: they stay in the content exactly as written."""
        self._chunks = ChunkAdapter("vllm", reasoning_field="reasoning")
        syntax = self.format.reasoning
        prefill = None
        if syntax is not None and (self.skip_reasoning_parsing or not first_text.startswith(syntax.open_tag)):
            prefill = syntax.open_tag + syntax.close_tag
        return self.codec.stream(tools=_tool_definitions(request), reasoning=False, prefill=prefill)

    def _delta_message(self, events: list[Event]) -> DeltaMessage | None:
        assert self._chunks is not None
        deltas = self._chunks.deltas(events)
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        content = "".join(delta.get("content", "") for delta in deltas)
        reasoning = "".join(delta.get("reasoning", "") for delta in deltas)
        calls = [call for delta in deltas for call in delta.get("tool_calls", [])]
        if not (content or reasoning or calls):
            return None
        return DeltaMessage(content=content or None, reasoning=reasoning or None, tool_calls=calls)

    def _content_of(self, events: list[Event]) -> str:
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        return "".join(event.text for event in events if isinstance(event, ContentDelta))


class ChatcodecReasoningParser(ReasoningParser):  # type: ignore[misc]
    """vLLM's ``ReasoningParser`` over chatcodec's parser for the model's format."""

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.codec = codec_for(tokenizer)
        self.format = self.codec.format  # a template chatcodec cannot read fails at start-up
        self.diagnostics: list[Diagnostic] = []
        self._prompt: str | None = None
        self._stream: StreamParser | None = None
        self._fed: list[str] = []  # the text read while still in reasoning
        self._emitted_upto = 0  # the end of the text sent as reasoning
        self._handed_over = False

    @property
    def reasoning_start_str(self) -> str | None:
        return self.format.reasoning.open_tag if self.format.reasoning else None

    @property
    def reasoning_end_str(self) -> str | None:
        return self.format.reasoning.close_tag if self.format.reasoning else None

    def adjust_request(self, request: Any) -> Any:
        syntax = self.format.reasoning
        special = set(getattr(self.model_tokenizer, "all_special_tokens", ()) or ())
        if syntax is not None and {syntax.open_tag, syntax.close_tag} & special:
            request.skip_special_tokens = False  # the tags must reach the parser
        return request

    # -- the prompt --------------------------------------------------------------------------

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._prompt = self._decode_tail(prompt_token_ids)

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """True when the text ends after reasoning for good: the format has none, or the last
        assistant turn closed its think block. False inside reasoning, and at the start of a
        turn where the model may still open one (after a Qwen3 prompt, say)."""
        if self.format.reasoning is None:
            return True
        state = self.codec.prompt_state(self._decode_tail(input_ids))
        return state.state != "reasoning" and state.prefill != ""

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """True when the closing tag ends inside this decode step's tokens."""
        syntax = self.format.reasoning
        if syntax is None:
            return True
        new = len(list(delta_ids))
        if new == 0:
            return False
        window = list(input_ids[-(new + CLOSE_TAG_WINDOW) :])
        text = self._decode(window)
        before = len(self._decode(window[:-new]))
        at = text.rfind(syntax.close_tag)
        return at >= 0 and at + len(syntax.close_tag) > before

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        syntax = self.format.reasoning
        if syntax is None:
            return list(input_ids)
        close_id = self.vocab.get(syntax.close_tag)
        if close_id is None or close_id not in input_ids:
            return []
        last = len(input_ids) - 1 - input_ids[::-1].index(close_id)
        return list(input_ids[last + 1 :])

    # -- whole output ------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        """The reasoning, and the text after it for the tool half (``None`` for either when
        empty). A call written inside an unclosed think block is in that text, behind the
        opening tag: the tool half reads it, and the reasoning after it, as streaming does."""
        stream = self._new_stream()
        events = stream.feed(model_output) + stream.close()
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        spans = stream.spans
        rest = self._handover(model_output, spans, _leaving_point(spans))
        return stream.message.reasoning_content or None, rest or None

    # -- streaming ---------------------------------------------------------------------------

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._handed_over:
            return DeltaMessage(content=delta_text) if delta_text else None
        if self._stream is None:
            self._stream = self._new_stream()
        stream = self._stream
        self._fed.append(delta_text)
        events = stream.feed(delta_text)
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        left = stream.state not in ("reasoning", "undecided") or any(
            not isinstance(event, ReasoningDelta | Diagnostic) for event in events
        )
        if not left:
            spans = stream.spans
            self._emitted_upto = spans[-1].end if spans else 0
            reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
            return DeltaMessage(reasoning=reasoning) if reasoning else None
        # The text left reasoning in this delta. Everything not sent yet goes to the tool half
        # as content, this delta's reasoning included (vLLM keeps only one half's reasoning
        # from the delta that hands over).
        self._handed_over = True
        text = "".join(self._fed)
        self._fed.clear()
        rest = self._handover(text, stream.spans, self._emitted_upto)
        return DeltaMessage(content=rest) if rest else None

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._handed_over

    def finish_streaming(self) -> DeltaMessage | None:
        """The output ended while still in reasoning (or nothing was read): what the parser
        held back is released. After the hand-over there is nothing left here."""
        if self._handed_over or self._stream is None:
            return None
        stream, self._stream = self._stream, None
        events = stream.close()
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
        content = "".join(event.text for event in events if isinstance(event, ContentDelta))
        if not (reasoning or content):
            return None
        return DeltaMessage(reasoning=reasoning or None, content=content or None)

    # -- helpers -----------------------------------------------------------------------------

    def _new_stream(self) -> StreamParser:
        return self.codec.stream(self._prompt)

    def _handover(self, text: str, spans: list[Span], start: int) -> str:
        """``text[start:]`` for the tool half; when reasoning is open there (a call opened
        inside the think block), behind the opening tag, so the tool half reads it from inside."""
        rest = text[start:]
        syntax = self.format.reasoning
        if rest and syntax is not None and self._reasoning_open_at(spans, start):
            rest = syntax.open_tag + rest
        return rest

    def _reasoning_open_at(self, spans: list[Span], cut: int) -> bool:
        opened = self._prompt is not None and self.codec.prompt_state(self._prompt).state == "reasoning"
        for span in spans:
            if span.start >= cut:
                break
            if span.name == "THINK_OPEN" or span.kind == "reasoning":
                opened = True
            elif span.name == "THINK_CLOSE":
                opened = False
        return opened

    def _decode_tail(self, ids: Sequence[int]) -> str:
        return self._decode(list(ids[-PROMPT_TAIL_TOKENS:]))

    def _decode(self, ids: list[int]) -> str:
        text = self.model_tokenizer.decode(ids, skip_special_tokens=False)
        return text if isinstance(text, str) else ""


def _leaving_point(spans: list[Span]) -> int:
    """Where the text leaves reasoning: the start of its first span that is neither reasoning
    nor a think tag; or, when none is written yet (a call's opening tag is a span only once the
    call is read), the end of the last reasoning span or tag (0 when there is none)."""
    last_reasoning_end = 0
    for span in spans:
        if span.kind == "reasoning" or span.name in REASONING_DELIMITERS:
            last_reasoning_end = span.end
        else:
            return span.start
    return last_reasoning_end
