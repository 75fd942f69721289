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

from collections.abc import Iterable, Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaMessage,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser
from vllm.tool_parsers.abstract_tool_parser import ToolParser

from chatcodec.adapters.handover import ReasoningHalf, ToolHalf, closed_prefill, codec_for, tool_definitions
from chatcodec.adapters.openai import ChunkAdapter
from chatcodec.events import ContentDelta, Diagnostic, Event

# The prompt's state is read from its last assistant header on: the generation prompt and any
# prefill are in the last few hundred tokens of any prompt.
PROMPT_TAIL_TOKENS = 512
# Tokens before a decode step's new ones that are decoded with them, so that a closing tag
# split across steps is seen whole.
CLOSE_TAG_WINDOW = 16


def _tool_definitions(request: Any) -> list[Any]:
    """The request's tools; none when the request forbids calls, so a call the model writes
    anyway stays in the content instead of vanishing."""
    if getattr(request, "tool_choice", None) == "none":
        return []
    return tool_definitions(getattr(request, "tools", None))


def _keep_special_tokens(request: Any) -> None:
    """Have vLLM decode special tokens into the text, as they are spelled: with
    ``spaces_between_special_tokens`` on (its default), a slow tokenizer writes
    ``<|action_start|> <|plugin|>`` for two adjacent tokens, a delimiter no template writes."""
    request.skip_special_tokens = False
    if hasattr(request, "spaces_between_special_tokens"):
        request.spaces_between_special_tokens = False


class ChatcodecToolParser(ToolParser):  # type: ignore[misc]
    """vLLM's ``ToolParser`` over chatcodec's parser for the model's format."""

    engine_based_streaming = True
    # Set by vLLM when no reasoning parser runs: think blocks then stay in the content, as
    # the model wrote them.
    skip_reasoning_parsing = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self.codec = codec_for(tokenizer)
        self.format = self.codec.format  # a template chatcodec cannot read fails at start-up
        self.diagnostics: list[Diagnostic] = []
        self._half: ToolHalf | None = None
        self._chunks = ChunkAdapter("vllm", reasoning_field="reasoning")

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            # Call delimiters are often special tokens: they must reach the parser, spelled as
            # the template writes them (a slow tokenizer otherwise puts a space between two).
            _keep_special_tokens(request)
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        half = self._new_half(request)
        events, found = half.read(model_output)
        self.diagnostics.extend(half.diagnostics)
        content = "".join(event.text for event in events if isinstance(event, ContentDelta))
        calls = [
            ToolCall(id=call.id, function=FunctionCall(name=call.function.name, arguments=call.function.arguments))
            for call in found
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
        if self._half is None:
            self._half = self._new_half(request)
        return self._delta_message(self._half.feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        """The text's end: a call the model left open is settled, held-back text released."""
        if self._half is None:
            return None
        half, self._half = self._half, None
        message = self._delta_message(half.finish())
        self.diagnostics.extend(half.diagnostics)
        return message

    def _new_half(self, request: Any) -> ToolHalf:
        # When this request's prompt closed reasoning, vLLM gives all of the output to this half:
        # it starts where that prompt left off (read from the template with the request's
        # keywords; the prompt itself reaches only the reasoning parser).
        keywords = getattr(request, "chat_template_kwargs", None)
        return ToolHalf(
            self.codec,
            _tool_definitions(request),
            think_blocks_as_text=self.skip_reasoning_parsing,
            closed_prefill=closed_prefill(self.codec, keywords if isinstance(keywords, dict) else None),
        )

    def _delta_message(self, events: list[Event]) -> DeltaMessage | None:
        deltas = self._chunks.deltas(events)
        content = "".join(delta.get("content", "") for delta in deltas)
        reasoning = "".join(delta.get("reasoning", "") for delta in deltas)
        calls = [call for delta in deltas for call in delta.get("tool_calls", [])]
        if not (content or reasoning or calls):
            return None
        return DeltaMessage(content=content or None, reasoning=reasoning or None, tool_calls=calls)


class ChatcodecReasoningParser(ReasoningParser):  # type: ignore[misc]
    """vLLM's ``ReasoningParser`` over chatcodec's parser for the model's format."""

    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.codec = codec_for(tokenizer)
        self.format = self.codec.format  # a template chatcodec cannot read fails at start-up
        self._prompt: str | None = None
        self._half: ReasoningHalf | None = None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._half.diagnostics if self._half is not None else []

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
            _keep_special_tokens(request)  # the tags must reach the parser
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

    # -- parsing -----------------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        """The reasoning, and the text after it for the tool half (``None`` when empty)."""
        self._half = ReasoningHalf(self.codec, self._prompt)
        reasoning, rest = self._half.split(model_output)
        return reasoning or None, rest or None

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._half is None:
            self._half = ReasoningHalf(self.codec, self._prompt, resend_reasoning=True)
        split = self._half.feed(delta_text)
        if not (split.reasoning or split.rest):
            return None
        return DeltaMessage(reasoning=split.reasoning or None, content=split.rest or None)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._half is not None and self._half.handed_over

    def finish_streaming(self) -> DeltaMessage | None:
        """The output ended while still in reasoning: what the parser held back."""
        if self._half is None:
            return None
        reasoning, content = self._half.finish()
        if not (reasoning or content):
            return None
        return DeltaMessage(reasoning=reasoning or None, content=content or None)

    def _decode_tail(self, ids: Sequence[int]) -> str:
        return self._decode(list(ids[-PROMPT_TAIL_TOKENS:]))

    def _decode(self, ids: list[int]) -> str:
        text = self.model_tokenizer.decode(ids, skip_special_tokens=False)
        return text if isinstance(text, str) else ""
