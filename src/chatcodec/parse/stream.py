"""The streaming parser of one assistant completion.

``StreamParser`` is sans-I/O: ``feed(text) -> events``, ``close() -> events``. It hands the
engine's pieces to an ``AssistantAssembler``. Parsing a whole completion is one ``feed`` and a
``close`` on the same object, so streaming and one-shot parsing share every line of code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chatcodec.parse.assistant import AssistantAssembler, ReaderState
from chatcodec.parse.engine import STRAY, Engine, Piece
from chatcodec.events import FINISHED, Diagnostic, Event, FinishReason
from chatcodec.formats.base import Format
from chatcodec.messages import Message
from chatcodec.parse.first_feed import MIN_WHOLE_FEED, read_first_feed
from chatcodec.parse.prefilled import start_after_prefill
from chatcodec.parse.prompt import prefill_state
from chatcodec.parse.result import ParseResult
from chatcodec.parse.json_scan import STRING_SPECIAL, ValueScanner
from chatcodec.parse.spans import Span
from chatcodec.parse.toolcalls import ToolCallBlock
from chatcodec.parse.value_ends import value_ends_for

_BUILT = frozenset({"_engine", "_assembler", "_pending"})  # what ``StreamParser._build`` sets
BLOCK = 4096  # deltas between two joins of the text gathered so far
LAST_OF_BLOCK = BLOCK - 1  # (the delta that completes a block takes the general way)
# The short way for a delta of visible text: see ``AssistantAssembler.lane``.
_STRING_SPECIAL = STRING_SPECIAL.search
_Lane = tuple[Callable[[str], None], Callable[[str], Event], list[Any]]


class StreamParser:
    """Reads one assistant completion for a family, incrementally: ``feed(text) -> events``,
    ``close() -> events``; ``message`` is the message so far."""

    def __init__(
        self,
        family: Format,
        *,
        prefill: str = "",
        tools: Iterable[str] | None = None,
        schemas: dict[str, dict[str, Any]] | None = None,
        strict: bool = False,
        start: str = "completion",
    ) -> None:
        self.family = family
        self._tool_names = frozenset(tools) if tools is not None else None
        # The engine and the assembler are built when first needed (``__getattr__``): a
        # parser fed a whole completion in its first delta reads it the one-shot way, and
        # needs them only if more text comes.
        self._setup = (prefill, schemas, strict, start)
        self._chunks: list[str] = []
        self._chunk_blocks: list[str] = []  # every BLOCK chunks, joined
        if start == "completion":
            self._whole_prefill = prefill  # (a first delta holding a whole text: see ``first_feed``)

    # Built by ``_build``, on first use.
    _engine: Engine
    _assembler: AssistantAssembler
    _pending: list[Event]

    def __getattr__(self, name: str) -> Any:
        # (Called only for what is not set: before ``_build``, the engine and the assembler.)
        if name in _BUILT and "_setup" in self.__dict__:
            self._build()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build(self) -> None:
        self._built = True
        prefill, schemas, strict, start = self._setup
        family = self.family
        engine = self._engine = Engine(family.grammar, start)
        engine.watch_reasoning(
            family.reasoning_open, family.reasoning_close, family.call_open, family.call_close, family.reasoning_ends
        )
        engine.value_ends = value_ends_for(family.grammar, schemas)
        assembler = self._assembler = AssistantAssembler(family, tools=self._tool_names, schemas=schemas, strict=strict)
        # A long text yields many pieces: they are handed to the assembler as they are read, so
        # the JSON the engine decoded for each call is let go once the call is read. (The
        # engine's sink is no method of this parser: nothing the parser holds refers back to
        # it, so a dropped parser is freed at once.)
        pending: list[Event] = []
        self._pending = pending
        handle = assembler.handle

        def take_pieces(pieces: list[Piece]) -> None:
            pending.extend(handle(pieces))

        engine.sink = take_pieces
        if prefill:
            # The prompt's own opening of the assistant turn (``<think>``, a prefill): it sets
            # the state but is not part of the completion.
            start_after_prefill(family, start, prefill, engine, assembler)

    # (Class attributes until first set: a server builds a parser per request.)
    _built = False  # (the entry points build at once: a miss in ``__getattr__`` costs more)
    _closed = False
    _whole_prefill: str | None = None  # None: every delta is read by the engine
    # The one-shot result of a first delta read the one-shot way, until the engine reads it.
    _read_whole: ParseResult | None = None
    _held_events: tuple[Event, ...] = ()  # (what that delta's held-back tail gives at ``close()``)
    _lane: _Lane | None = None
    _arguments_lane: tuple[ToolCallBlock, ValueScanner] | None = None

    def feed(self, text: str) -> list[Event]:
        # Whether a delimiter could start in ``text``, once a lane below has asked (the general
        # way then does not ask again).
        begins: bool | None = None
        lane = self._lane
        if lane is not None and text:
            engine = self._engine
            try:
                first = engine.delimiter_start(text)  # type: ignore[misc]
            except TypeError:
                if isinstance(text, str):
                    raise
                raise _not_text(text) from None
            # A delta of visible text in a run of it, with no delimiter and not ending with the
            # beginning of one (``Engine.continue_text``): straight into the message (what the
            # general way below does with it).
            begins = first is not None and not engine.begins_nothing(text, first)
            if not begins and len(self._chunks) < LAST_OF_BLOCK:
                chunks = self._chunks
                chunks.append(text)
                lane[0](text)
                length = len(text)
                lane[2][2] += length
                engine.offset += length
                return [lane[1](text)]
        arguments = self._arguments_lane
        if arguments is not None and text and len(self._chunks) < LAST_OF_BLOCK:
            # A delta inside a call's arguments, after one that went on with them as written
            # (see ``AssistantAssembler.arguments_lane``): the same again, if it does not end
            # the value the walk scans.
            call, value = arguments
            try:
                if value.in_string and not value.escaped and _STRING_SPECIAL(text) is None:
                    pass  # more of a string (every delimiter spelled in it is text)
                else:
                    engine = self._engine
                    first = engine.delimiter_start(text)  # type: ignore[misc]
                    begins = first is not None and not engine.begins_nothing(text, first)
                    if begins or not value.goes_on_with(text):
                        arguments = None
            except TypeError:
                if isinstance(text, str):
                    raise
                raise _not_text(text) from None
            if arguments is not None:
                self._chunks.append(text)
                self._engine.offset += len(text)
                return [self._assembler.go_on_in_arguments(call, text)]
        if self._closed:
            raise ValueError("feed() after close()")
        if not isinstance(text, str):  # (the lanes above find out as they read it)
            raise _not_text(text)
        chunks = self._chunks
        if self._read_whole is not None:
            if not text:
                return []
            self._read_by_engine()
        elif len(text) >= MIN_WHOLE_FEED and self._whole_prefill is not None and not chunks and not self._chunk_blocks:
            events = self._read_first_feed(text)
            if events is not None:
                return events
        if not self._built:
            self._build()
        chunks.append(text)
        if len(chunks) >= BLOCK:
            self._chunk_blocks.append("".join(chunks))
            chunks.clear()
            self._assembler.compact()
        engine = self._engine
        start = engine.continue_text(text, begins)
        if start >= 0:
            body = engine.json_body
            if body is not None:
                # (Inside a JSON body there is no text lane: ``_lane`` is None already.)
                events = self._assembler.handle_json_text(
                    engine.run or STRAY, text, start, body, engine.value_text_of
                )
                self._arguments_lane = self._assembler.arguments_lane
                return events
            # In a run of visible text, the next delta may take the lane the assembler leaves.
            events = self._assembler.handle_text(engine.run or STRAY, text, start)
            self._lane = self._assembler.lane
            self._arguments_lane = None
            return events
        self._lane = None
        self._arguments_lane = None
        pieces = engine.feed(text, begins)
        if self._pending:
            events = self._pending + self._assembler.handle(pieces)
            self._pending.clear()
            return events
        return self._assembler.handle(pieces)

    def _read_first_feed(self, text: str) -> list[Event] | None:
        """The events of a first delta that holds a whole text, read the one-shot way; None
        where the engine reads it."""
        prefill = self._whole_prefill
        self._whole_prefill = None  # (tried once)
        read = read_first_feed(self.family, prefill or "", self._tool_names, text)
        if read is None:
            return None
        self._read_whole, events, held = read
        self._held_events = tuple(held)
        self._chunks.append(text)
        return events

    def _read_by_engine(self) -> None:
        """More text, or a question only the engine answers, after a first delta read the
        one-shot way: the engine reads that delta now (its events were given already)."""
        read, self._read_whole = self._read_whole, None
        if read is not None and read.message.tool_calls:
            self._assembler.reuse_ids([call.id or "" for call in read.message.tool_calls])
        text = self._chunks.pop()
        events = self.feed(text)
        del events  # (the same as the one-shot way gave)
        self._pending.clear()

    def _settled(self) -> ParseResult | None:
        """The one-shot result, after ``close()``, of a text read the one-shot way; else None
        (and the engine has read everything fed)."""
        read = self._read_whole
        if read is not None and not self._closed:
            self._read_by_engine()
            return None
        return read

    def close(self) -> list[Event]:
        if self._closed:
            return []
        if self._read_whole is not None:
            self._closed = True
            return [*self._held_events, FINISHED[self._read_whole.finish_reason]]
        self._closed = True
        self._lane = None
        self._arguments_lane = None
        events = self._assembler.handle(self._engine.close())
        if self._pending:
            events = self._pending + events
            self._pending.clear()
        return events + self._assembler.finish(cut_short=not self._engine.accepts_end())

    @property
    def finish_reason(self) -> FinishReason | None:
        read = self._settled()
        return self._assembler.finish_reason if read is None else read.finish_reason

    @property
    def state(self) -> ReaderState:
        """``content``, ``reasoning``, ``tool_call`` (inside a call block), ``undecided``
        (leading text not yet known to be reasoning or content) or ``ended``.

        Before any text, the state the prompt or prefill leaves, as ``Codec.prompt_state``
        reads it; from then on, where the delimiters read so far leave it (one whose end the
        engine still holds back, ``<|im_end|>`` that may go on with ``\n``, counts once it
        is settled)."""
        if self._settled() is not None:
            return "ended"
        prefill = self._setup[0]
        if prefill and not self._closed and not self._chunk_blocks and not any(self._chunks):
            # (The engine still holds a prefill's last delimiter, ``<think>`` until it knows
            # whether ``\n`` follows: the prompt says what it opens.)
            left = prefill_state(self.family, prefill)
            if left.prefill:
                return left.state
        return self._assembler.state

    @property
    def holds_a_call(self) -> bool:
        """Is a call written inside a reasoning block being held until the block's end, or the
        text's, says whether it was a call (its events come then)? Or a call's opening tag,
        until its name shows it opens one?"""
        return self._settled() is None and (self._assembler.holds_a_call or self._engine.holds_a_call_opening)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        read = self._settled()
        return self._assembler.diagnostics if read is None else read.diagnostics

    @property
    def spans_end(self) -> int:
        """Where the spans of the text read so far end, without building them (0 before the
        first span): the text read, less what the engine holds back."""
        read = self._settled()
        return self._assembler.spans_end if read is None else len(read.text)

    @property
    def spans(self) -> list[Span]:
        """The spans of the text read so far (the last may still grow; text the engine holds
        back, such as a possible delimiter's first characters, is in none yet). A copy: read it
        when needed, not after every delta."""
        read = self._settled()
        return self._assembler.spans if read is None else list(read.spans)

    @property
    def message(self) -> Message:
        """The assistant message as read so far (complete after ``close()``)."""
        read = self._settled()
        return self._assembler.message if read is None else read.message

    def parse_whole(self, text: str) -> ParseResult:
        """``feed(text)``, ``close()`` and ``result()``, without keeping the events nobody reads
        (a call's argument deltas are let go when the call ends)."""
        if not self._built:
            self._build()
        self._assembler.outlet.keep_events = False
        self._whole_prefill = None  # (the one-shot way declined this text already)
        self.feed(text)
        self.close()
        return self.result()

    def result(self) -> ParseResult:
        read = self._settled()
        if read is not None:
            return read.copy()
        reason = self._assembler.finish_reason
        if reason is None:
            raise ValueError("result() before close()")
        return ParseResult(
            message=self.message,
            finish_reason=reason,
            diagnostics=self._assembler.diagnostics,
            spans=self._assembler.spans,
            text="".join([*self._chunk_blocks, *self._chunks]),
        )


def _not_text(text: object) -> TypeError:
    return TypeError(f"feed() takes a str, not {type(text).__name__}")
