"""Servers that split parsing in two halves (a reasoning parser, then a tool parser fed with
what the first leaves over): the two halves, over one chatcodec parser each, for any format.

``ReasoningHalf`` reads the output from the state the prompt leaves (inside ``<think>``, after an
empty think block, at the start of the turn) and sends reasoning as it comes. When the text
leaves reasoning it hands the rest over as plain text; a call opened inside an unclosed think
block is handed over behind the opening tag, so ``ToolHalf`` reads the call as a call and the
reasoning after it as reasoning. ``ToolHalf`` starts inside reasoning only when its text opens
with the reasoning tag; otherwise it starts after reasoning, where a think tag is text.

Both halves parse each delta's new text once. The servers' adapters (``vllm``, ``sglang``)
only translate these results into their own types.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chatcodec.codec import Codec, load, load_from_tokenizer
from chatcodec.errors import ChatCodecError, TemplateNotFoundError
from chatcodec.events import ContentDelta, Diagnostic, Event, ReasoningDelta
from chatcodec.formats.syntax import ReasoningSyntax
from chatcodec.messages import ToolCall, parse_tools
from chatcodec.parse.spans import Span
from chatcodec.parse.stream import StreamParser
from chatcodec.render.loading import tokenizer_special_tokens

logger = logging.getLogger("chatcodec")

TEMPLATE_VARIABLE = "CHATCODEC_TEMPLATE"
FAMILY_VARIABLE = "CHATCODEC_FAMILY"


# Tokenizers that carry no chat template (test tokenizers, some conversions) are matched to a
# bundled template by a turn marker their vocabulary holds as one token.
BUNDLED_BY_MARKER = (("<|im_start|>", "qwen3"), ("<｜Assistant｜>", "deepseek"), ("<|start_header_id|>", "llama3_hermes"))
_WARNED: set[str] = set()


def codec_for(tokenizer: Any) -> Codec:
    """The codec for a server's tokenizer: its own chat template, or the one named by
    ``CHATCODEC_TEMPLATE`` (a bundled name, a ``.jinja`` file, a model folder, the template's text) for servers
    started with another template; ``CHATCODEC_FAMILY`` names the format if needed. A tokenizer
    with no chat template gets the bundled template whose turn marker is in its vocabulary."""
    family = os.environ.get(FAMILY_VARIABLE) or None
    override = os.environ.get(TEMPLATE_VARIABLE)
    if override:
        return load_cached(override, tuple(sorted(tokenizer_special_tokens(tokenizer).items())), family)
    try:
        return load_from_tokenizer(tokenizer, family=family)
    except TemplateNotFoundError as missing:
        bundled = _bundled_for_vocabulary(tokenizer)
        if bundled is None:
            raise TemplateNotFoundError(
                f"{missing}; set {TEMPLATE_VARIABLE} to the template the server renders with"
            ) from None
        if bundled not in _WARNED:
            _WARNED.add(bundled)
            logger.warning("the tokenizer has no chat template: parsing with the bundled %r template", bundled)
        return load_cached(bundled, family=family)


def _bundled_for_vocabulary(tokenizer: Any) -> str | None:
    try:
        vocabulary = tokenizer.get_vocab()
    except Exception:  # a tokenizer without a vocabulary to ask: nothing to match
        return None
    for marker, name in BUNDLED_BY_MARKER:
        if marker in vocabulary:
            return name
    return None


@lru_cache(maxsize=8)
def load_cached(name: str, special_tokens: tuple[tuple[str, str], ...] = (), family: str | None = None) -> Codec:
    """``chatcodec.load``, once per name: servers build parsers per request."""
    return load(name, special_tokens=dict(special_tokens) or None, family=family)


def tool_definitions(tools: Any) -> list[Any]:
    """A server's tool objects as chatcodec takes them: definitions, so arguments are read
    with their schemas; a definition chatcodec cannot read, or a flat function tool (the
    Responses API), by its name."""
    definitions: list[Any] = []
    for tool in tools or []:
        function = getattr(tool, "function", None)
        if function is not None:  # {"type": "function", "function": {...}}
            definition = tool.model_dump(exclude_none=True)
            try:
                parse_tools([definition])
            except ChatCodecError:
                definition = function.name  # it still names a tool the model may call
            definitions.append(definition)
        elif getattr(tool, "name", None):
            definitions.append(tool.name)
    return definitions


@dataclass
class Split:
    """What one delta gives: reasoning to send, and text for the tool half."""

    reasoning: str = ""
    rest: str = ""


class ReasoningHalf:
    """The reasoning half for one output. ``prompt`` (the rendered prompt, or its tail) gives
    the starting state; without it, ``inside_reasoning`` says whether the prompt opened the
    block, and ``None`` reads the start as chatcodec does with no prompt.
    ``resend_reasoning``: when a call opens inside the think block, the delta hands all its
    text over, reasoning included, for a tool half that reads and sends reasoning itself.
    """

    def __init__(
        self,
        codec: Codec,
        prompt: str | None = None,
        *,
        inside_reasoning: bool | None = None,
        resend_reasoning: bool = False,
    ) -> None:
        self.codec = codec
        self.resend_reasoning = resend_reasoning
        found = codec.format
        # Spans that belong to reasoning or to the turn's start, not to the answer after it.
        lead = found.framing.lead_terminal
        self._reasoning_side = found.reasoning_open | found.reasoning_close | ({lead} if lead else set())
        self.format = codec.format
        self.prompt = prompt
        self.inside_reasoning = inside_reasoning
        self.diagnostics: list[Diagnostic] = []
        self.handed_over = False
        self._stream: StreamParser | None = None
        self._fed: list[str] = []  # the text read while still in reasoning
        self._emitted_upto = 0  # the end of the text sent as reasoning

    def feed(self, text: str) -> Split:
        if self.handed_over:
            return Split(rest=text)
        if self._stream is None:
            self._stream = self._new_stream()
        stream = self._stream
        self._fed.append(text)
        events = self._note(stream.feed(text))
        state = stream.state
        read_upto = stream.spans_end
        # A call has begun (its text may all be held until it closes), or something else was
        # read; text the parser merely holds back (the start of a possible ``<think>``) has not
        # left reasoning yet, whatever state the parser shows meanwhile.
        left = (
            state == "tool_call"
            or stream.holds_a_call  # (a call inside the block, whose events come later)
            or (state not in ("reasoning", "undecided") and read_upto > 0)
            or any(not isinstance(event, ReasoningDelta | Diagnostic) for event in events)
        )
        if not left:
            self._emitted_upto = read_upto
            return Split(reasoning="".join(event.text for event in events if isinstance(event, ReasoningDelta)))
        return self._hand_over(stream.spans, ended=state == "ended")

    def _hand_over(self, spans: list[Span], *, ended: bool) -> Split:
        self.handed_over = True
        whole = "".join(self._fed)
        self._fed.clear()
        cut = self._leaving_point(spans)
        # Reasoning left open goes on after what interrupted it (a call), unless the output ended.
        inside = self._open_at(spans, cut) and not (ended or self._ends_at(spans, cut))
        if self.resend_reasoning and inside:
            # A call opened inside the think block: this delta's text goes to the tool half
            # whole, its reasoning included, since the tool half will send reasoning of its own
            # (what follows the call) and vLLM keeps one half's reasoning per delta. If the
            # block itself opened in this delta, the marker takes the place of its tag.
            start = self._emitted_upto
            if not self._open_at(spans, start):
                for span in spans:
                    if span.name in self.format.reasoning_open and start <= span.start < cut:
                        start = span.start
                        break
            return Split(rest=self._handover(whole, self._after_openers(spans, start), inside))
        reasoning = "".join(
            whole[max(span.start, self._emitted_upto) : min(span.end, cut)]
            for span in spans
            if span.kind == "reasoning" and span.end > self._emitted_upto and span.start < cut
        )
        start = self._after_openers(spans, cut) if inside else cut
        return Split(reasoning=reasoning, rest=self._handover(whole, start, inside))

    def finish(self) -> tuple[str, str]:
        """The output ended before leaving reasoning (or with only held-back text read): the
        reasoning and the content the parser held back, read from the prompt's state as the
        whole output's parse reads them. (A call cannot be among them: a call's start hands
        the text over.) Nothing is left after the hand-over."""
        if self.handed_over or self._stream is None:
            return "", ""
        stream, self._stream = self._stream, None
        events = self._note(stream.close())
        reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
        content = "".join(event.text for event in events if isinstance(event, ContentDelta))
        return reasoning, content

    def split(self, output: str) -> tuple[str, str]:
        """A whole output: all its reasoning (after a call inside the think block too), and the
        text for the tool half, from where it first leaves reasoning."""
        stream = self._new_stream()
        self._note(stream.feed(output) + stream.close())
        spans = stream.spans
        cut = self._leaving_point(spans)
        inside = self._open_at(spans, cut) and not self._ends_at(spans, cut)
        start = self._after_openers(spans, cut) if inside else cut
        return stream.message.reasoning_content or "", self._handover(output, start, inside)

    def _new_stream(self) -> StreamParser:
        if self.prompt is not None:
            return self.codec.stream(self.prompt)
        if self.inside_reasoning and self.format.reasoning is not None:
            return self.codec.stream(reasoning=True)
        return self.codec.stream(reasoning=False if self.inside_reasoning is False else None)

    def _note(self, events: list[Event]) -> list[Event]:
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        return events

    def _handover(self, text: str, start: int, inside: bool) -> str:
        """``text[start:]``; when the text leaves reasoning for a call inside the think block
        (``inside``), behind the marker that has the tool half read it, and the reasoning
        after it, from inside."""
        rest = text[start:]
        syntax = self.format.reasoning
        if rest and inside and syntax is not None:
            return _inside_marker(syntax) + rest
        return rest

    def _ends_at(self, spans: list[Span], cut: int) -> bool:
        """Does the text leave reasoning at ``cut`` by ending (the turn's end token)?"""
        for span in spans:
            if span.start >= cut:
                return span.name in self.format.end
        return False

    def _after_openers(self, spans: list[Span], start: int) -> int:
        """Past the opening tags at ``start``: the marker stands for them (a block's own tag, or a
        repeated one, which reads as nothing more)."""
        for span in spans:
            if span.start == start and span.name in self.format.reasoning_open:
                start = span.end
            elif span.start > start:
                break
        return start

    def _leaving_point(self, spans: list[Span]) -> int:
        """Where the text leaves reasoning: the start of its first span that is neither reasoning,
        a think tag nor the delimiter some framings write between the assistant header and the
        answer (Reka's space, GLM's newline: the turn's, not to be read again); or, when
        none is written yet (a call's opening tag is a span only once the call is read), the end of
        the last of those (0 when there is none)."""
        last_reasoning_end = 0
        for span in spans:
            if span.kind == "reasoning" or span.name in self._reasoning_side:
                last_reasoning_end = span.end
            else:
                return span.start
        return last_reasoning_end

    def _open_at(self, spans: list[Span], cut: int) -> bool:
        """Is a think block open at ``cut`` (opened by the prompt or the text, not closed)?"""
        if self.prompt is not None:
            opened = self.codec.prompt_state(self.prompt).state == "reasoning"
        else:
            opened = bool(self.inside_reasoning)
        for span in spans:
            if span.start >= cut:
                break
            if span.name in self.format.reasoning_open or span.kind == "reasoning":
                opened = True
            elif span.name in self.format.reasoning_close:
                opened = False
        return opened


def closed_prefill(codec: Codec, template_kwargs: dict[str, Any] | None) -> str | None:
    """The text a generation prompt rendered with ``template_kwargs`` writes after the
    assistant header, when it closes reasoning there (``<think></think>``: thinking switched
    off), or in a format without reasoning, when it writes any (Functionary v3.2's ``>>>``, the
    mark its answer's first part follows); else ``None``. Rendered once per codec and keywords."""
    key = json.dumps(template_kwargs or {}, sort_keys=True, default=str)
    return _closed_prefill(codec, key)


@lru_cache(maxsize=64)
def _closed_prefill(codec: Codec, template_kwargs: str) -> str | None:
    if codec.format.reasoning is None and not any(prefill for prefill, _ in codec.format.prefill_keywords):
        return None
    try:
        prompt = codec.render(
            [{"role": "user", "content": "?"}],
            add_generation_prompt=True,
            on_special_tokens="ignore",
            **json.loads(template_kwargs),
        )
    except ChatCodecError:
        return None
    state = codec.prompt_state(prompt)
    if codec.format.reasoning is None:
        return state.prefill or None
    return state.prefill if state.state == "content" and state.prefill else None


def _inside_marker(syntax: ReasoningSyntax) -> str:
    """What goes before text handed over from inside a think block: the opening tag twice.
    A parser reads a repeated opening tag as one, and text after a closed block that merely
    starts with the tag (a stray one the model wrote) is not taken for a hand-over."""
    return _whole_tag(syntax.open_spellings, syntax.open_tag) * 2


def _whole_tag(spellings: Sequence[str], tag: str) -> str:
    """The tag with all the whitespace any spelling of it takes after it: a tag written before
    handed-over text must not take that text's leading whitespace as its own."""
    return max((spelling for spelling in spellings if spelling.startswith(tag)), key=len, default=tag)


class ToolHalf:
    """The tool half for one output: reads what the reasoning half hands over, or the whole
    output when there is no reasoning half (``think_blocks_as_text`` then keeps think blocks in
    the content exactly as written; also for servers whose tool parser has no reasoning field).
    ``tools``: definitions or names; ``[]`` accepts no call, so a call the model writes anyway
    stays content; ``None`` accepts any name. ``closed_prefill``: how the prompt closed
    reasoning, when it did (``<think></think>``), so whitespace the output starts with goes
    where the whole parse puts it; in a format without reasoning, what the prompt writes that
    the answer goes on from (Functionary v3.2's ``>>>``)."""

    def __init__(
        self,
        codec: Codec,
        tools: Sequence[Any] | None,
        *,
        think_blocks_as_text: bool = False,
        closed_prefill: str | None = None,
    ) -> None:
        self.codec = codec
        self.format = codec.format
        self.tools = list(tools) if tools is not None else None
        self.think_blocks_as_text = think_blocks_as_text
        self.closed_prefill = closed_prefill
        self.diagnostics: list[Diagnostic] = []
        self._stream: StreamParser | None = None
        self.closed = False

    def feed(self, text: str) -> list[Event]:
        if self._stream is None:
            if not text:
                return []  # the first text says where parsing starts
            self._stream = self._new_stream(text)
        return self._note(self._stream.feed(text))

    def finish(self) -> list[Event]:
        """The output's end: a call left open is settled, held-back text released."""
        if self._stream is None or self.closed:
            return []
        self.closed = True
        return self._note(self._stream.close())

    def read(self, text: str) -> tuple[list[Event], list[ToolCall]]:
        """A whole text (nothing fed before): its content, as one event, and the calls read."""
        if self._stream is not None or self.closed:
            raise ValueError("read() after feed()")
        self.closed = True
        if not text:
            return [], []
        # One parse of the whole text (which takes the one-shot fast path where it can).
        result = self.codec.parse_detailed(text, tools=self.tools, reasoning=False, prefill=self._prefill(text))
        self.diagnostics.extend(result.diagnostics)
        content = result.message.content
        events: list[Event] = [ContentDelta(content)] if isinstance(content, str) and content else []
        return events, list(result.message.tool_calls or [])

    def _new_stream(self, first_text: str) -> StreamParser:
        return self.codec.stream(tools=self.tools, reasoning=False, prefill=self._prefill(first_text))

    def _prefill(self, first_text: str) -> str | None:
        """Where the tool half's parse starts, told by the first text it gets."""
        syntax = self.format.reasoning
        if syntax is None:
            return self.closed_prefill  # (what the prompt writes that the answer goes on from)
        opening = _whole_tag(syntax.open_spellings, syntax.open_tag)
        if not self.think_blocks_as_text and first_text.startswith(_inside_marker(syntax)):
            # Handed over from inside a think block (behind its tag): read from the turn's start.
            return None
        # Anything else comes after reasoning (handed over after the block closed, or after a
        # prompt that closed it), or has no reasoning parser before it: an empty think block
        # puts the parser there, where a think tag is text, as in the whole output's parse.
        return self.closed_prefill or opening + _whole_tag(syntax.close_spellings, syntax.close_tag)

    def _note(self, events: list[Event]) -> list[Event]:
        self.diagnostics.extend(event for event in events if isinstance(event, Diagnostic))
        return events
