"""Building one assistant message from the engine's pieces of a ``completion`` rule."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any, Literal

from chatcodec.errors import ParseError
from chatcodec.parse.engine import CUT, STRAY, Piece
from chatcodec.parse.json_scan import JsonWalk, ValueScanner
from chatcodec.events import (
    ContentDelta,
    Diagnostic,
    Event,
    FINISHED,
    FinishReason,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
)
from chatcodec.formats.base import Format
from chatcodec.messages import Message, assembled_call, assembled_message
from chatcodec.parse.outlet import Outlet
from chatcodec.parse.readers import READERS, CallReader, Schemas
from chatcodec.parse.spans import Span
from chatcodec.parse.toolcalls import ToolCallBlock, ToolCalls

ReaderState = Literal["content", "reasoning", "tool_call", "undecided", "ended"]


class _Hold:
    """A call written inside a reasoning block, held until the block's end: where it began,
    the text read since, and the state to go back to if the block is closed after it (then
    the call was text the model thought, not a call it made)."""

    __slots__ = (
        "after_call",
        "call_opened",
        "calls_at",
        "content_at",
        "diagnostics_at",
        "open_span",
        "raw",
        "reasoning_at",
        "reported",
        "spans_at",
        "start",
        "stray_reported",
    )

    def __init__(self, assembler: AssistantAssembler, start: int) -> None:
        out = assembler._out
        assembler.compact()  # (the message's text so far, as whole blocks to go back to)
        self.start = start
        self.raw: list[str] = []
        self.call_opened = False  # (a section opener alone is held too, until its first call)
        self.diagnostics_at = len(out.diagnostics)
        self.spans_at = len(out.spans)
        self.open_span = list(out.open_span) if out.open_span is not None else None
        self.content_at = len(assembler._content_blocks)
        self.reasoning_at = len(assembler._reasoning_blocks)
        self.calls_at = len(assembler._calls)
        # Where the reasoning resumed after the first call read in the block: events (after
        # the hold's first), spans and reasoning blocks from there (``_resumed_reasoning_is_content``).
        self.after_call: tuple[int, int, int] | None = None
        self.reported = assembler._call_in_reasoning_reported
        self.stray_reported = assembler._stray_reported


class AssistantAssembler:
    """Builds one assistant message from the engine's pieces of the ``completion`` rule.

    Shared by ``StreamParser`` (a completion) and the transcript reader (each assistant turn
    of a rendered conversation), so both read assistant turns with the same code.
    """

    def __init__(
        self,
        family: Format,
        *,
        tools: Iterable[str] | None = None,
        schemas: Schemas | None = None,
        strict: bool = False,
        base: int = 0,
        invent_ids: bool = True,
    ) -> None:
        self.family = family
        # Events, diagnostics and spans: written by the calls' bookkeeping too (see ``Outlet``).
        out = self._out = Outlet(strict)
        if base:
            out.base = base
        # Text arrives in many small pieces; ``compact`` joins them into blocks, so that a long
        # stream of tiny deltas keeps about its characters, not a list entry per delta.
        self._content: list[str] = []
        self._content_blocks: list[str] = []
        self._reasoning: list[str] = []
        self._reasoning_blocks: list[str] = []
        # LEADING text: reasoning if a reasoning close tag follows it, else content.
        self._undecided: list[Piece] = []
        self._tool_calls = ToolCalls(
            frozenset(tools) if tools is not None else None,
            out.emit,
            out.diagnose,
            out.span,
            self._content.append,
            self._reasoning.append,
            invent_ids=invent_ids,
            new_id=family.new_call_id,
        )
        self._calls = self._tool_calls.calls
        traits = family.call_traits
        if traits.reader is not None:
            self._reader = READERS[traits.reader](self._tool_calls, schemas, **traits.reader_options)
        self._closes_at_end = traits.closes_at_end
        self._trailers = traits.trailers
        self._stop_closes = traits.close_is_stop_token
        # Each part of the answer is a message of its own (gpt-oss).
        self._messages = family.calls is not None and family.calls.preamble
        self._addressed = traits.addressed
        self._stray_blank: list[Piece] = []  # whitespace where the format has no place for text

    # The rest of the state starts the same for every parser: class attributes until first
    # set (a server builds a parser per request).
    _reader: CallReader | None = None
    _in_reasoning = False
    _ended = False
    _call: ToolCallBlock | None = None
    _finish: FinishReason | None = None
    _stray_reported = False
    _stray_run_start = 0
    # A call opened inside a reasoning block the model never closed: the reasoning goes on
    # after the call, until its closing tag.
    _resume_reasoning = False
    _resumed_empty = False
    _call_in_reasoning_reported = False
    # A section opener (``<｜tool▁calls▁begin｜>``) waits for its first call: followed by
    # anything else, it was text. "real" once a call opened in it, "text" if it was text.
    _section_hold: list[Piece] | None = None
    # A message's header addressed to a tool (Muse's `` to=NAME<|message|>``) waits for the
    # section of calls it opens: followed by anything else, it was text.
    _header_hold: list[Piece] | None = None
    # Where a message may begin (the answer's start, or after the last one's end): a
    # header anywhere else is text, and so is the message it seems to open, until the next
    # message's boundary.
    # (The lengths of the content and the reasoning where the last message began, None
    # after any other delimiter: a message begins there if no text but whitespace followed.)
    _message_start: tuple[int, int] | None = (0, 0)
    _after_section = False  # the last delimiter closed a section of calls
    _hold: _Hold | None = None  # a call inside a reasoning block, until the block's end
    _in_quoted_message = False
    _cut: Piece | None = None  # the delimiter the text ended inside
    # (call, terminal, member) whose value text the reader takes as written, as last asked
    _as_written: tuple[ToolCallBlock, str, str] | None = None
    _section_state: str | None = None
    # After ``handle_text`` added visible text: where the next such text goes (the
    # message's list, the event it makes, the open span to grow by its length), else None.
    lane: tuple[Callable[[str], None], Callable[[str], Event], list[Any]] | None = None
    # After ``handle_json_text`` took a delta that went on with a call's arguments as
    # written, inside a value the walk scans: the call and the value's scanner. Text that
    # does not end the value goes on with the arguments the same way
    # (``go_on_in_arguments``), else None.
    arguments_lane: tuple[ToolCallBlock, ValueScanner] | None = None

    @property
    def outlet(self) -> Outlet:
        """Where the events, diagnostics and spans go (a prefill's record covers it too)."""
        return self._out

    def parts(self) -> list[object]:
        """The objects holding the rest of its state: the calls read, and the syntax's reader."""
        return [self._tool_calls] if self._reader is None else [self._tool_calls, self._reader]

    def start_after_prefill(self, base: int) -> None:
        """Forget what the prompt's prefill produced; positions now count from ``base``.

        The state the prefill leaves stays: inside reasoning, or inside a tool call the prompt
        opened (a server forcing a call). Such a call is announced to the completion's reader
        with its name and the arguments written so far, as the first events.
        """
        self._out.events.clear()
        self._content.clear()
        self._content_blocks.clear()
        self._reasoning.clear()
        self._reasoning_blocks.clear()
        self._out.spans.clear()
        self._out.open_span = None
        self._out.base = base
        self._calls.clear()  # calls the prompt wrote whole are the prompt's, not the completion's
        call = self._call
        if call is not None:
            call.hidden = sum(len(part) for part in call.raw)
            if self._reader is not None:
                self._reader.prompt_ended(call)
            call.spans = [(kind, max(start, base), end, name) for kind, start, end, name in call.spans if end > base]
            if call.children:
                call = self._keep_open_element(call)
            if call is not None and self._resume_reasoning and self._hold is None:
                # A call the prompt opened inside a reasoning block: held, as one the
                # completion opens there, until the block's end or the text's says whether it
                # was a call (``</think>`` next: it was text the model thought, the prompt's).
                self._hold_from(base, "", call=True)
            if call is not None and call.index is not None:
                call.index = 0
                self._calls.append(call)
                self._out.events.append(ToolCallStart(0, call.id or "", call.name or ""))
                if call.arguments_parts:
                    self._out.events.append(ToolCallArgumentsDelta(0, "".join(call.arguments_parts)))

    def _straddling_delimiter(self, piece: Piece, in_prompt: int) -> None:
        """A delimiter that begins in the prompt and ends in the completion: its first
        ``in_prompt`` characters join the text of the call it goes on with or opens as the
        prompt's, never the completion's (if the call is kept as text)."""
        before = self._call
        if before is not None:
            before.hidden += in_prompt
        self._handle(piece)
        if self._call is not None and self._call is not before:
            self._call.hidden = in_prompt

    @staticmethod
    def _keep_open_element(block: ToolCallBlock) -> ToolCallBlock | None:
        """A list of calls the prompt opened: the elements it wrote whole are the prompt's and
        leave the list; the one it ends inside, if any, is the completion's first call."""
        walk = block.walk
        spans = walk.element_spans if walk is not None else []
        still_open = len(spans) == len(block.children) and spans[-1][1] < 0
        kept = block.children[-1:] if still_open else []
        block.children[:] = kept
        block.state["prompt_elements"] = True
        if walk is not None:
            del walk.element_spans[: len(walk.element_spans) - len(kept)]
        return kept[0] if kept else None

    @property
    def tool_names(self) -> frozenset[str] | None:
        """The tools' names calls are taken for (None: any name)."""
        return self._tool_calls.tool_names

    def reuse_ids(self, ids: list[str]) -> None:
        """The first calls were announced with these ids already (see ``ToolCalls.reuse_ids``)."""
        self._tool_calls.reuse_ids(ids)

    @property
    def open_call(self) -> ToolCallBlock | None:
        """The tool call being read, if the text so far ends inside one."""
        return self._call

    @property
    def in_reasoning(self) -> bool:
        return self._in_reasoning

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def state(self) -> ReaderState:
        """Where the text read so far leaves off (for a UI showing what is being written)."""
        if self._ended or self._finish is not None:
            return "ended"
        if self._call is not None:
            return "tool_call"
        if self._in_reasoning:
            return "reasoning"
        if self._undecided:
            return "undecided"
        return "content"

    def handle(self, pieces: Iterable[Piece]) -> list[Event]:
        out = self._out
        for piece in pieces:
            if piece.start < out.base and not out.silent:
                # Held back at the end of the prompt, completed by the completion: a delimiter
                # keeps its effect, text keeps only the completion's characters, but in a call
                # the prompt opened, whose name and arguments join the two.
                if not piece.delimiter and self._call is None:
                    cut = out.base - piece.start
                    if cut >= len(piece.text):
                        continue
                    piece = Piece(piece.kind, piece.text[cut:], out.base, run_start=piece.run_start, json=piece.json)
                else:
                    # (A tag in an XML value the engine held until the completion told whether
                    # it ends the value may lie in the prompt whole.)
                    if self._hold is not None:
                        self._hold.raw.append(piece.text[out.base - piece.start :])  # (the completion's part)
                    self._straddling_delimiter(piece, min(len(piece.text), out.base - piece.start))
                    continue
            hold = self._hold
            if hold is not None:
                # (A hold begins at the completion's start at the earliest: every piece here
                # is the completion's.)
                hold.raw.append(piece.text)
                self._handle(piece)
                continue
            kind = piece.kind
            if self._section_hold is not None or self._header_hold is not None or self._in_quoted_message:
                self._handle(piece)
            elif (
                kind == "CONTENT"
                and piece.stray_delimiter is None
                and not out.silent
                and not self._in_reasoning
                and self._section_state != "real"
            ):
                # The hot path of streaming: a delta of visible text.
                text = piece.text
                self._content.append(text)
                out.span("content", piece.start, piece.start + len(text))
                out.events.append(ContentDelta(text))
            elif kind == "REASONING" and piece.stray_delimiter is None and not out.silent:
                text = piece.text
                self._reasoning.append(text)
                out.span("reasoning", piece.start, piece.start + len(text))
                out.events.append(ReasoningDelta(text))
            else:
                self._handle(piece)
        return out.take_events()

    def handle_text(self, kind: str, text: str, start: int) -> list[Event]:
        """``handle`` of one piece of free text that continues a run (``Engine.continue_text``):
        visible text goes straight to the message, anything else takes the general way."""
        out = self._out
        self.lane = None
        if (
            start < out.base
            or out.silent
            or self._section_hold is not None
            or self._header_hold is not None
            or self._in_quoted_message
            or self._hold is not None
        ):
            return self.handle((Piece(kind, text, start),))
        event: Callable[[str], Event]
        if kind == "CONTENT" and not self._in_reasoning and self._section_state != "real":
            add, event, span_kind = self._content.append, ContentDelta, "content"
        elif kind == "REASONING":
            add, event, span_kind = self._reasoning.append, ReasoningDelta, "reasoning"
        else:
            return self.handle((Piece(kind, text, start),))
        add(text)
        delta = event(text)
        # The open span usually just grows: the same kind, ending where this text starts.
        current = out.open_span
        begin = start - out.base
        if current is not None and current[2] == begin and current[0] == span_kind and current[3] is None:
            current[2] = begin + len(text)
        else:
            out.span(span_kind, start, start + len(text))
            current = out.open_span
        if current is not None:
            # The next delta that continues this run may do the same without asking.
            self.lane = (add, event, current)
        if out.events:
            out.events.append(delta)
            return out.take_events()
        return [delta]

    def handle_json_text(self, kind: str, text: str, start: int, walk: JsonWalk, key: str | None) -> list[Event]:
        """``handle`` of text that continues a JSON body (``Engine.continue_text``). ``key``: the
        member whose value all of it went on with (the walk recorded no event for it), else
        None (the walk recorded what it found). A delta inside a call's arguments goes straight
        to them, as written; anything else takes the general way."""
        out = self._out
        self.arguments_lane = None
        call = self._call
        if key is None or call is None or out.silent or start < out.base or self._hold is not None:
            if key is not None:
                walk.hand_back(key, text)
            return self.handle((Piece(kind, text, start, json=walk),))
        # What the reader said of the last such delta holds until the member or the call
        # changes (only the value's end, which is no such delta, changes its answer; a member
        # written again under the same key comes after that end).
        approved = self._as_written
        if approved is None or approved[0] is not call or approved[1] != kind or approved[2] != key or call.arguments_done:
            reader = self._reader
            if reader is None or self._section_hold is not None or not reader.arguments_as_written(call, kind, key, walk):
                walk.hand_back(key, text)
                return self.handle((Piece(kind, text, start, json=walk),))
            self._as_written = (call, kind, key)
        call.walk = walk
        call.add_text(text, start)
        if call.index is None or not out.keep_events:
            self._tool_calls.arguments_text(call, text)
            return out.take_events()
        call.arguments_parts.append(text)
        delta = ToolCallArgumentsDelta(call.index, text)
        value = walk.scanned_value()
        if value is not None:
            self.arguments_lane = (call, value)
        if out.events:
            out.events.append(delta)
            return out.take_events()
        return [delta]

    def go_on_in_arguments(self, call: ToolCallBlock, text: str) -> ToolCallArgumentsDelta:
        """``handle_json_text`` of ``text`` right after the delta that set ``arguments_lane`` to
        ``call``, where the caller has scanned ``text`` and it did not end the value (or it
        went on with a string: no quote or backslash): the walk only moves on, and the text
        is the arguments' as written."""
        walk = call.walk
        length = len(text)
        # (what ``JsonWalk.continue_value`` does with such text, written out)
        walk.examined += length  # type: ignore[union-attr]
        walk.pos = end = walk.pos + length  # type: ignore[union-attr]
        call.raw.append(text)
        spans = call.spans
        spans[-1] = ("tool_call", spans[-1][1], end, None)  # (the delta before grew this span)
        call.arguments_parts.append(text)
        return ToolCallArgumentsDelta(call.index, text)  # type: ignore[arg-type]

    def compact(self) -> None:
        """Join the text pieces gathered so far (called every BLOCK deltas, so linear)."""
        if self._content:
            self._content_blocks.append("".join(self._content))
            self._content.clear()
        if self._reasoning:
            self._reasoning_blocks.append("".join(self._reasoning))
            self._reasoning.clear()

    def finish(self, *, cut_short: bool = False) -> list[Event]:
        """The text ended: settle an open tool call, decide the finish reason.

        ``cut_short``: the grammar says the text ended inside a block it requires closing.
        """
        if self._finish is not None:
            return []
        if self._hold is not None:
            # The reasoning block never ended: the call inside it was a call.
            if self._call is None:
                self._resumed_reasoning_is_content()
            self._release_hold(as_reasoning=None)
        self._decide_leading(as_reasoning=False)
        self._flush_stray_blank()
        if self._header_hold is not None and self._release_header():
            cut_short = True
        if self._section_hold is not None and self._call is None:
            # The text ends right after a section's opening tag: cut short, and the tag is text.
            cut_short = True
            self._release_section(as_text=True, unclosed=True)
        if self._resumed_empty:
            self._in_reasoning = False  # the text ended with the call: nothing resumed
        reason: FinishReason
        if self._call is not None:
            call = self._call
            self._call = None
            whole: bool | None = None
            if call.walk is not None:
                whole = call.walk.finished
            elif self._reader is not None:
                whole = self._reader.ends_whole(call)
            closes_at_end = self._closes_at_end or (self._reader is not None and self._reader.ends_with_the_text(call))
            complete = closes_at_end and whole is not False
            if not self._closes_at_end and self._ends_with_the_turn(call):
                complete = whole = True
            elif (
                self._stop_closes
                and call.walk is not None
                and call.walk.complete
                and not any(text.strip() for _, text in call.after_value)
            ):
                complete = whole = True  # its closing tag was the stop token the server took
            # A body that stopped being JSON before the text ended (``I used {x}`` after a
            # Llama call) was not cut short: it is text, or a malformed call, and the text is
            # whole.
            broken = self._closes_at_end and call.walk is not None and call.walk.error is not None
            if not complete and not broken:
                self._out.diagnose("unclosed_tool_call", call.start, "the text ends inside a tool call")
            self._close_call(call, closed=complete or broken)
            if (complete or broken) and self._calls:
                reason = "tool_calls"
            elif (complete and whole) or broken:
                reason = "stop"  # whole JSON that is no call (``{"a": 1}``): content, not cut short
            else:
                reason = "length"
        elif (self._in_reasoning or cut_short) and not self._ended:
            reason = "length"
        elif self._calls:
            reason = "tool_calls"
        else:
            reason = "stop"
        cut = self._cut
        if cut is not None:
            self._out.span("unparsed", cut.start, cut.end)
            self._out.diagnose(
                "unclosed_delimiter", cut.start, f"the text ends inside a delimiter ({cut.text!r}); kept as an unparsed span"
            )
            reason = "length"
        self._finish = reason
        self._out.events.append(FINISHED[reason])
        return self._out.take_events()

    def _take_trailer(self, call: ToolCallBlock) -> None:
        """The token a model writes after a call where the syntax has no closing tag (Llama 4's
        ``<|python_end|>``) is a delimiter, not text after the call."""
        start = call.after_value[0][0]
        written = "".join(text for _, text in call.after_value)
        lead = len(written) - len(written.lstrip())
        for trailer in self._trailers:
            if written.startswith(trailer, lead):
                call.as_delimiter(start + lead, start + lead + len(trailer), "CALL_END")
                return

    def _ends_with_the_turn(self, call: ToolCallBlock) -> bool:
        """Does a named call whose body is whole end with the turn's end token where its
        closing tag belongs (``…}<turn|>``, ``…}\n<|im_end|>``)? The model ended the call
        with its turn: the token is the call's end, and the call is whole."""
        # (Text after the body, where the body is no JSON, comes only once the body ended: a
        # Gemma call's closing brace, an XML parameter's closing tag.)
        if call.index is None or not call.after_value or (call.walk is not None and not call.walk.finished):
            return False
        written = "".join(text for _, text in call.after_value)
        last_start, last_text = call.after_value[-1]
        text_end = last_start + len(last_text)
        grammar = self.family.grammar
        # What may come between the body and the end: whitespace, or the start of the closing
        # tag (Qwen3-Coder's ``</function>`` with no ``</tool_call>``).
        closings = {
            spelling.strip(): kind
            for kind in sorted(self.family.call_close)
            for spelling in grammar.spellings_of(kind)
            if spelling.strip()
        }
        for kind in sorted(self.family.end):
            for spelling in grammar.spellings_of(kind):
                if not written.endswith(spelling):
                    continue
                at = text_end - len(spelling)
                before = written[: -len(spelling)]
                between = before.strip()
                closing_kind = next((k for closing, k in closings.items() if closing.startswith(between)), None)
                if between and closing_kind is None:
                    continue
                if between:
                    # The closing tag's start, up to the end token, is that tag.
                    cut = at - len(before) + len(before.rstrip()) - len(between)
                    call.as_delimiter(cut, at, closing_kind or "CALL_CLOSE")
                call.as_delimiter(at, text_end, kind)
                self._out.diagnose(
                    "noncanonical", at, f"tool call {call.index} ends with the turn's end {spelling!r}, not its closing tag"
                )
                return True
        return False

    @property
    def finish_reason(self) -> FinishReason | None:
        return self._finish

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._out.diagnostics)

    @property
    def spans_end(self) -> int:
        """Where the spans so far end (0 before the first): what was read, less held-back text."""
        if self._out.open_span is not None:
            return int(self._out.open_span[2])
        return self._out.spans[-1].end if self._out.spans else 0

    @property
    def spans(self) -> list[Span]:
        spans = list(self._out.spans)
        if self._out.open_span is not None:
            kind, start, end, index = self._out.open_span
            spans.append(Span(kind, start, end, None, index))
        return spans

    @property
    def message(self) -> Message:
        """The assistant message as read so far."""
        content = "".join([*self._content_blocks, *self._content])
        reasoning = "".join([*self._reasoning_blocks, *self._reasoning])
        tool_calls = [
            assembled_call(call.id, call.name or "", "".join(call.arguments_parts) or "{}")
            for call in self._calls
            if call.index is not None
        ]
        return assembled_message(content if content or not tool_calls else None, reasoning or None, tool_calls or None)

    # -- pieces -> events --------------------------------------------------------------------

    @property
    def holds_a_call(self) -> bool:
        return self._hold is not None and self._hold.call_opened

    def _begin_hold(self, piece: Piece, *, call: bool = False) -> None:
        """A call (``call``) or its section opens inside a reasoning block: what follows is
        held until the block's end, or the text's, says whether it was a call."""
        out = self._out
        hold = self._hold
        if hold is not None:
            hold.call_opened = hold.call_opened or call
            return
        if out.silent:
            return
        # (An opening the prompt began, which the engine held until the completion went on
        # from it, is held from the completion's start: the prompt's part is the prompt's.)
        start = max(piece.start, out.base)
        self._hold_from(start, piece.text[start - piece.start :], call=call)

    def _hold_from(self, start: int, text: str, *, call: bool) -> None:
        """Hold what is read from ``start`` on, ``text`` first (see ``_begin_hold``)."""
        self._hold = hold = _Hold(self, start)
        hold.call_opened = call
        hold.raw.append(text)
        self._out.held_from = len(self._out.events)
        self.lane = None
        self.arguments_lane = None

    def _release_hold(self, *, as_reasoning: int | None) -> None:
        """End the hold: give what it held (``as_reasoning`` None), or, where the reasoning
        block ended at ``as_reasoning``, go back to where the call began and make all the text
        since, up to there, reasoning."""
        hold, self._hold = self._hold, None
        assert hold is not None
        out = self._out
        held = out.held_from or 0
        out.held_from = None
        if as_reasoning is None:
            if out.strict and len(out.diagnostics) > hold.diagnostics_at:
                first = out.diagnostics[hold.diagnostics_at]
                raise ParseError(first.message, kind=first.kind, position=first.position)
            return
        text = "".join(hold.raw)
        text = text[: as_reasoning - hold.start]  # (the closing tag's piece was kept too)
        del out.events[held:]
        del out.diagnostics[hold.diagnostics_at :]
        del out.spans[hold.spans_at :]
        out.open_span = hold.open_span
        self.compact()
        del self._content_blocks[hold.content_at :]
        del self._reasoning_blocks[hold.reasoning_at :]
        del self._calls[hold.calls_at :]
        self._call = None
        self._section_hold = None
        self._section_state = None
        self._stray_blank = []
        self._resume_reasoning = self._resumed_empty = False
        self._call_in_reasoning_reported = hold.reported
        self._stray_reported = hold.stray_reported
        self._tool_calls.stray_as_reasoning = False
        self._as_written = None
        self._in_reasoning = True
        self._add_text(Piece("REASONING", text, hold.start), as_reasoning=True)
        if not hold.reported:
            self._call_in_reasoning_reported = True
            out.diagnose(
                "tool_call_in_reasoning", hold.start, "a tool call written inside a reasoning block that is closed after it; kept as reasoning"
            )

    def _resumed_reasoning_is_content(self) -> None:
        """A reasoning block with a call in it that the answer never closes: the block ended at
        its first call (as vLLM's and llama.cpp's parsers read it), and the text read as
        reasoning resumed after that call is the answer's content. (Only where no closing tag
        follows: a block closed after its calls keeps them as the text the model thought.)"""
        hold = self._hold
        if hold is None or hold.after_call is None or not self._in_reasoning:
            return
        out = self._out
        events_at, spans_at, blocks_at = hold.after_call
        self.compact()
        moved = "".join(self._reasoning_blocks[blocks_at:])
        del self._reasoning_blocks[blocks_at:]
        if moved:
            self._content_blocks.append(moved)
        for at in range((out.held_from or 0) + events_at, len(out.events)):
            event = out.events[at]
            if isinstance(event, ReasoningDelta):
                out.events[at] = ContentDelta(event.text)
        for at in range(spans_at, len(out.spans)):
            if out.spans[at].kind == "reasoning":
                out.spans[at] = out.spans[at]._replace(kind="content")
        if out.open_span is not None and out.open_span[0] == "reasoning" and len(out.spans) >= spans_at:
            out.open_span[0] = "content"
        self._in_reasoning = False

    def _decide_leading(self, *, as_reasoning: bool) -> None:
        """Text read before it could be told apart is now known to be reasoning or content."""
        pieces, self._undecided = self._undecided, []
        base = self._out.base
        for piece in pieces:
            if piece.start < base and not self._out.silent:
                # (Held since the prefill: only the completion's characters are its text.)
                cut = base - piece.start
                if cut >= len(piece.text):
                    continue
                piece = Piece(piece.kind, piece.text[cut:], base, run_start=piece.run_start, json=piece.json)
            elif piece.stray_delimiter is not None and not self._out.silent:
                self._stray(piece)  # (``Intro<think>r</think>``: whichever the text becomes)
            self._add_text(piece, as_reasoning=as_reasoning)

    def _open_call(self, piece: Piece) -> None:
        call = ToolCallBlock(start=piece.start, raw=[piece.text])
        call.spans.append(("delimiter", piece.start, piece.end, piece.kind))
        self._call = call
        if self._reader is not None:
            self._reader.open(call)

    def _close_call(self, call: ToolCallBlock, *, closed: bool) -> None:
        call.cut_short = not closed
        if self._reader is not None:
            self._reader.close(call)
        if self._trailers and call.after_value:
            self._take_trailer(call)
        if self._section_hold is not None:
            # The section's first call: the section is real if it named a function, else its
            # tags are text like the call (every character stays in the message).
            named = call.index is not None or any(child.index is not None for child in call.children)
            # (A call to a tool the request does not offer is said to be one, by its own
            # diagnostic: the section's tags need none of their own.)
            unknown = call.rejected is not None or any(child.rejected is not None for child in call.children)
            self._release_section(as_text=not named, said=unknown)
        self._tool_calls.stray_as_reasoning = self._resume_reasoning
        reasoning_before = len(self._reasoning)
        after_call = None
        if self._resume_reasoning and self._hold is not None and self._hold.after_call is None:
            # Where the reasoning resumes, should the block turn out to end at this call: before
            # the call's own stray text (``{…} and more`` inside it), which follows its body.
            self.compact()
            out = self._out
            # (Events counted from where the hold began: a stream's reader takes those before.)
            events = len(out.events) - (out.held_from or 0)
            after_call = (events, len(out.spans) + (out.open_span is not None), len(self._reasoning_blocks))
        self._tool_calls.finish(call, closed=closed)
        if self._resume_reasoning:
            self._resume_reasoning = False
            self._in_reasoning = True
            hold = self._hold
            if hold is not None and after_call is not None and self._calls[hold.calls_at :]:
                hold.after_call = after_call
            # Empty until reasoning text follows the call (text in the call that is no part of
            # it is such text).
            self._resumed_empty = not "".join(self._reasoning[reasoning_before:]).strip()

    def _text(self, piece: Piece) -> None:
        """Text where the format has a place for it: reasoning inside an open reasoning block,
        content otherwise."""
        if self._in_reasoning and piece.text.strip():
            self._resumed_empty = False
        self._add_text(piece, as_reasoning=self._in_reasoning)

    def _stray(self, piece: Piece) -> None:
        """A delimiter the grammar does not take where it stands: text, said to be stray."""
        self._out.diagnose(
            "stray_delimiter", piece.start, f"{piece.text!r} ({piece.stray_delimiter}) is not allowed here; kept as text"
        )

    def _add_text(self, piece: Piece, *, as_reasoning: bool) -> None:
        if as_reasoning:
            self._reasoning.append(piece.text)
            self._out.span("reasoning", piece.start, piece.end)
            self._out.emit(ReasoningDelta(piece.text))
        else:
            self._content.append(piece.text)
            self._out.span("content", piece.start, piece.end)
            self._out.emit(ContentDelta(piece.text))

    def _release_section(self, *, as_text: bool, unclosed: bool = False, said: bool = False) -> None:
        """Settle a held section opener: a real section's delimiter, or text (``said``: with no
        diagnostic of its own, its call's says why)."""
        held, self._section_hold = self._section_hold, None
        if not held:
            return
        opener = held[0]
        if as_text:
            self._section_state = "text"
            if unclosed:
                self._out.diagnose("unclosed_tool_call", opener.start, "the text ends inside a tool-call section")
            elif not said:
                self._out.diagnose("malformed_tool_call", opener.start, f"{opener.text!r} opens no tool call; kept as text")
            # (Inside a reasoning block, where the call opened, the tags are reasoning.)
            for piece in held:
                self._add_text(piece, as_reasoning=self._in_reasoning or self._resume_reasoning)
            return
        self._section_state = "real"
        self._out.span("delimiter", opener.start, opener.end, opener.kind)
        for piece in held[1:]:
            self._stray_text(piece)

    def _settle_header(self) -> None:
        """A held message header opens a section of calls: its parts are delimiters."""
        held, self._header_hold = self._header_hold or [], None
        recipient = [part for part in held if part.kind == "RECIPIENT"]
        for part in held:
            if part.kind == "CONTENT":
                self._text(part)
            elif part.kind != "RECIPIENT":
                self._out.span("delimiter", part.start, part.end, part.kind)
            elif part is recipient[0]:
                # (One span, however the name arrived.)
                self._out.span("delimiter", part.start, recipient[-1].end, part.kind)

    def _release_header(self, before: Piece | None = None) -> bool:
        """Settle a held message header that no section of calls followed: it is text where it
        stands. True where the text ended inside it (a tool's name, cut short)."""
        held, self._header_hold = self._header_hold, None
        if not held:
            return False
        recipient = "".join(part.text for part in held if part.kind == "RECIPIENT")
        addressed = any(part.kind == "ADDRESS_END" for part in held)
        name_like = bool(recipient) and not any(c in recipient for c in " \t\n\r")
        cut_short = False
        if addressed and before is None:
            # (Only whitespace is held after "<|message|>".)
            cut_short = True
            self._out.diagnose("unclosed_tool_call", held[0].start, "the text ends after a message's header")
        elif addressed:
            self._out.diagnose("malformed_tool_call", held[0].start, f"a message to {recipient.strip()!r} holds no tool call; kept as text")
        elif before is None and (name_like or not recipient):
            cut_short = True
            self._out.diagnose("unclosed_tool_call", held[0].start, "the text ends inside a message's header")
        # (Otherwise " to=" in prose: text, as written.)
        for part in held:
            self._add_text(part, as_reasoning=self._in_reasoning)
        return cut_short

    def _flush_stray_blank(self) -> None:
        blank, self._stray_blank = self._stray_blank, []
        for piece in blank:
            self._stray_text(piece)

    def _stray_text(self, piece: Piece) -> None:
        """Text where the format has no place for it, kept where it stands: inside a call's
        block that a reasoning block opened around, that is the reasoning's (which becomes the
        answer's content, in the order written, if the block is never closed)."""
        if self._resume_reasoning:
            self._add_text(piece, as_reasoning=True)
        else:
            self._text(piece)

    def _handle(self, piece: Piece) -> None:
        family = self.family
        call = self._call
        if piece.kind == CUT:
            # The text ends inside a delimiter (a server's token limit inside a header): it
            # is neither text nor a delimiter, and the answer was cut short. (Its span comes
            # last, when the text ends: what is held before it is settled first.)
            self._cut = piece
            return
        if self._stray_blank and (piece.delimiter or piece.run_start):
            self._flush_stray_blank()
        if piece.kind == "LEADING":
            self._undecided.append(piece)
            return
        if self._header_hold is not None:
            # Held so far: " to=", the name, then "<|message|>" and whitespace.
            last = self._header_hold[-1].kind
            addressed = last not in ("ADDRESS", "RECIPIENT")
            if not addressed and (piece.kind == "RECIPIENT" or (piece.delimiter and piece.kind == "ADDRESS_END")):
                self._header_hold.append(piece)
                return
            if not piece.delimiter and not piece.text.strip() and last != "ADDRESS":
                self._header_hold.append(piece)  # whitespace before the section
                return
            if piece.delimiter and piece.kind in family.section_open and last != "ADDRESS":
                self._settle_header()
            else:
                self._release_header(before=piece)
        if self._section_hold is not None and call is None:
            if piece.delimiter and piece.kind in family.call_open:
                # The section is real if this call names a function: decided when it closes
                # (``_close_call``), so that a section of calls that are all text is text too.
                self._section_state = "real"
            elif not piece.delimiter and not piece.text.strip():
                self._section_hold.append(piece)  # whitespace before the first call
                return
            else:
                self._release_section(as_text=True)
        if self._in_quoted_message:
            if piece.delimiter and (piece.kind in family.reasoning_close or piece.kind in family.end):
                self._in_quoted_message = False
            else:
                if piece.delimiter and piece.kind != "ADDRESS_END":
                    self._out.diagnose(
                        "stray_delimiter", piece.start, f"{piece.text!r} ({piece.kind}) is no part of a message here; kept as text"
                    )
                self._add_text(piece, as_reasoning=self._in_reasoning)
                return
        if piece.delimiter and piece.kind == "ADDRESS" and call is None:
            start = self._message_start
            since = (self._content[start[0] :], self._reasoning[start[1] :]) if start is not None else ()
            if start is None or any(text.strip() for texts in since for text in texts):
                # A header in the middle of a message's text (quoted, or " to=" in prose).
                self._in_quoted_message = True
                self._add_text(piece, as_reasoning=self._in_reasoning)
                return
            self._header_hold = [piece]
            return
        if piece.delimiter and self._addressed:
            boundary = piece.kind in family.reasoning_close or piece.kind == "LEAD"
            if piece.kind in family.assistant_start:
                # The next message's header ends a reasoning message, or a message to a tool,
                # whose end token is left out (after the answer's text, it is text).
                boundary = self._in_reasoning or self._after_section
            self._message_start = (len(self._content), len(self._reasoning)) if boundary else None
            self._after_section = piece.kind in family.section_close
            if piece.kind in family.assistant_start and not boundary:
                # A header in the middle of a message's text: text, and so is the message it
                # seems to open.
                self._out.diagnose("stray_delimiter", piece.start, f"{piece.text!r} is no part of a message here; kept as text")
                self._in_quoted_message = True
                self._add_text(piece, as_reasoning=self._in_reasoning)
                return
        if piece.delimiter and self._undecided:
            self._decide_leading(as_reasoning=piece.kind in family.reasoning_close)
        if piece.delimiter:
            kind = piece.kind
            if self._hold is not None and kind in family.reasoning_close:
                # The reasoning block the call was written in ends here: it was text the
                # model thought (as every peer reads a call inside a closed block). A section
                # opener that opened no call was read as text already: that reading stands.
                self._release_hold(as_reasoning=piece.start if self._hold.call_opened else None)
                call = self._call
            if call is not None:
                if kind in family.call_close and kind in family.call_open:
                    # It ends one call and opens the next: it belongs to the next.
                    if self._reader is not None:
                        self._reader.ended_by(call, piece)
                    self._call = None
                    self._close_call(call, closed=True)
                    self._open_call(piece)
                    return
                if kind in family.call_open or kind in family.section_close:
                    # The next call opens, or the section closes, before this one's closing tag
                    # (where the grammar takes it): this one ends here, short of its tag.
                    self._call = None
                    call.error = call.error or "the call ends before its closing tag"
                    self._close_call(call, closed=True)
                    self._handle(piece)
                    return
                call.raw.append(piece.text)
                call.spans.append(("delimiter", piece.start, piece.end, kind))
                if kind in family.end and self._messages:
                    # (gpt-oss: the grammar reads a message's end where the call's closing tag
                    # belongs as the call's end; the turn goes on.)
                    self._out.diagnose("noncanonical", piece.start, f"a tool call ends with {piece.text!r}, not its closing tag")
                    self._call = None
                    self._close_call(call, closed=True)
                elif kind in family.call_close:
                    # (An empty element's ``/>``, also noncanonical, its reader reports.)
                    if kind == "CALL_CLOSE" and family.calls is not None and piece.text.strip() in family.calls.noncanonical:
                        self._out.diagnose("noncanonical", piece.start, f"a tool call ends with {piece.text.strip()!r}, not the format's own closing tags")
                    self._call = None
                    self._close_call(call, closed=True)
                elif kind in family.end or (
                    self._closes_at_end and kind in family.reasoning_close and self._resume_reasoning
                ):
                    # A call with no closing delimiter ends with the answer; so does one whose
                    # name the answer's end token cuts (where the grammar reads it there: no
                    # name holds one), which its reader finds malformed, and the text whole.
                    call.raw.pop()
                    call.spans.pop()
                    self._call = None
                    self._close_call(call, closed=True)
                    self._handle(piece)
                elif self._reader is not None:
                    self._reader.delimiter(call, piece)
                return
            if kind in family.section_open:
                if self._in_reasoning:
                    self._begin_hold(piece)
                self._section_hold = [piece]
                if self._tool_calls.before_start is None:
                    self._tool_calls.before_start = _section_settler(self)
                if family.calls is not None and piece.text.strip() in family.calls.noncanonical:
                    self._out.diagnose("noncanonical", piece.start, f"{piece.text!r} is not the format's own spelling")
                return
            if kind in family.section_close and self._section_state is None and not self._calls:
                # It closes no section, and no call was read before it (a quoted opening tag
                # began a call that was text): it is text too.
                self._out.diagnose(
                    "stray_delimiter", piece.start, f"{piece.text!r} closes no section of tool calls; kept as text"
                )
                self._section_state = "text"
            if kind in family.section_close and self._section_state == "text":
                self._section_state = None
                self._text(piece)  # closes a section that was text
                return
            if kind in family.section_close:
                self._section_state = None
            if kind in family.call_open:
                if self._in_reasoning and piece.text in family.openers_after_reasoning:
                    self._in_reasoning = False  # the opening ends the reasoning first
                if self._in_reasoning:
                    self._begin_hold(piece, call=True)
                    self._in_reasoning = False
                    self._resume_reasoning = True
                    if not self._call_in_reasoning_reported:
                        self._call_in_reasoning_reported = True
                        self._out.diagnose(
                            "tool_call_in_reasoning", piece.start, "a tool call starts inside an unclosed reasoning block"
                        )
                # (In a section whose first call was text, the tags are text too, but a call
                # after it is still inside the section the model wrote.)
                if family.calls is not None and family.calls.in_section and self._section_state is None:
                    self._out.diagnose("noncanonical", piece.start, "a tool call outside the format's section of calls")
                elif family.calls is not None and piece.text.strip() in family.calls.noncanonical:
                    self._out.diagnose("noncanonical", piece.start, f"{piece.text!r} is not the format's own spelling")
                self._open_call(piece)
                return
            self._out.span("delimiter", piece.start, piece.end, kind)
            if kind in family.reasoning_open:
                self._in_reasoning = True
            elif kind in family.reasoning_close:
                self._in_reasoning = False
            elif kind in family.end:
                self._resumed_reasoning_is_content()  # (where a call in an open block was read)
                if self._in_reasoning:
                    self._in_reasoning = False
                    self._out.diagnose("unclosed_reasoning", piece.start, "the message ends inside a reasoning block")
                self._ended = True
            elif self._in_reasoning and kind == family.framing.answer_open_terminal:
                # (The grammar reads the answer's opening tag inside an open block as its end.)
                self._in_reasoning = False
                self._out.diagnose("noncanonical", piece.start, "the answer opens before the reasoning block is closed")
            elif self._in_reasoning and kind in family.assistant_start:
                # (gpt-oss: the next message's header, where the grammar takes it, ends a
                # reasoning message whose end token is left out.)
                self._in_reasoning = False
                self._out.diagnose("noncanonical", piece.start, "a message begins before the reasoning message's end")
            elif self._addressed and kind in family.assistant_start and self._message_start is not None:
                # (Muse Glimmer: likewise after a message to a tool.)
                self._out.diagnose("noncanonical", piece.start, "a message begins before the last message's end")
            return
        if piece.stray_delimiter is not None and piece.kind in ("CONTENT", "REASONING"):
            self._stray(piece)
        if piece.kind == "REASONING":
            self._reasoning.append(piece.text)
            self._out.span("reasoning", piece.start, piece.end)
            self._out.emit(ReasoningDelta(piece.text))
        elif piece.kind == "CONTENT" and not (call is None and self._section_state == "real" and self.family.section_close):
            self._text(piece)
        elif call is not None:
            call.add_text(piece.text, piece.start)
            if self._reader is not None:
                self._reader.text(call, piece)
        elif not self._ended:
            # Text where the grammar has no place for it, before the answer ended (or between
            # the calls of a section, where the grammar takes it only to keep it): kept in the
            # message, where it stands.
            if piece.run_start:
                self._stray_run_start = piece.start
            if not self._stray_reported and not piece.text.strip():
                # Whitespace waits: if text follows in the same run, the run's diagnostic
                # comes before it, however the run was cut into pieces.
                self._stray_blank.append(piece)
                return
            if piece.text.strip() and not self._stray_reported:
                self._stray_reported = True
                self._out.diagnose(
                    "unexpected_text", self._stray_run_start, "text where the format has no place for it; kept as text"
                )
            self._flush_stray_blank()
            self._stray_text(piece)
        else:
            self._out.span("unparsed", piece.start, piece.end)
            if piece.run_start:
                self._stray_run_start = piece.start
            if piece.kind == STRAY and piece.text.strip() and not self._stray_reported:
                # Reported once, where the run of such text begins (whatever the chunking).
                self._stray_reported = True
                where = "after the end of the message" if self._ended else "where the format has no place for text"
                self._out.diagnose("unexpected_text", self._stray_run_start, f"text {where}; kept as an unparsed span")


def _section_settler(assembler: AssistantAssembler) -> Callable[[], None]:
    """What a parser's calls do before a call's start is given: a call in a held section that
    names a function makes the section real, and the whitespace held with its opener comes
    before the call's start, as it was written. (Through a weak reference: the parser holds
    the calls, and nothing it holds may refer back to it, so that a dropped parser is freed at
    once.)"""
    reference = weakref.ref(assembler)

    def settle() -> None:
        held = reference()
        if held is not None and held._section_hold is not None:
            held._release_section(as_text=False)

    return settle
