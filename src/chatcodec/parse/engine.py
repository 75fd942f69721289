"""The incremental engine: text in, pieces out, driven by a family grammar's LALR states.

The engine never re-reads text it has passed. Each ``feed`` searches only the new text (plus a
held-back tail shorter than the longest delimiter) with the compiled matcher of the current
parser state, so a delimiter counts only where the grammar accepts it. Free text is handed on
as it arrives; the parser is told once per run of free text (its state does not depend on the
run's length), and once per delimiter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass

from chatcodec.check.special_tokens import TOKEN_SHAPE
from chatcodec.errors import GrammarError
from chatcodec.parse.grammar import JSON_READ, JSON_SHAPES, FamilyGrammar, StateInfo
from chatcodec.parse.json_scan import JsonWalk
from chatcodec.parse.lexer import Found
from chatcodec.parse.value_ends import CANDIDATES, NO_CALL, VALUE, CallSoFar, ValueEnds

STRAY = "STRAY"  # free text where the grammar accepts none (e.g. after the end token)
# The text ended inside a delimiter: a special token, then the start of what must follow it
# (gpt-oss's ``<|channel|>fin`` of ``<|channel|>final<|message|>``). No text, and no delimiter.
CUT = "CUT"
# A delta this short in which a character a delimiter may start with stands is asked whether a
# delimiter or the beginning of one is really there (``Engine.begins_nothing``: on long text,
# that search may cost what reading it the general way does).
SHORT_DELTA = 64
SINK_BATCH = 32  # pieces handed to a sink at a time


@dataclass(slots=True)
class Piece:
    """A stretch of the input: a delimiter, or part of a run of free text.

    ``kind`` is the terminal name (``STRAY`` for text the grammar has no place for).
    ``stray_delimiter`` names the delimiter this text spells, when it spells one the grammar
    does not accept here. ``json`` is the walk of the JSON body the piece belongs to: readers
    take the members it found from it, so the body is scanned once.
    """

    kind: str
    text: str
    start: int
    delimiter: bool = False
    run_start: bool = False
    stray_delimiter: str | None = None
    json: JsonWalk | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.text)


class Engine:
    """Sans-I/O incremental lexer + LALR parser for one grammar start symbol."""

    def __init__(self, grammar: FamilyGrammar, start: str) -> None:
        if start not in grammar.starts:
            raise GrammarError(f"grammar {grammar.name!r} has no start symbol {start!r}")
        self.grammar = grammar
        self._start = start
        self._stepper = grammar.stepper(start)
        self._stack = self._stepper.initial  # the LALR state stack, stepped through a cache
        if start == "transcript":
            self._turn_ends = grammar.turn_end_tokens

    # The rest starts the same for every engine: class attributes until first set (a server
    # builds a parser per request).
    _buffer = ""
    _pos = 0  # index in _buffer of the first unconsumed character
    # Delimiters that end a JSON body even inside its strings (see ``FamilyGrammar``): a
    # rendered conversation's turn ends.
    _turn_ends: frozenset[str] = frozenset()
    # The absolute input position of _buffer[0]. After ``continue_text``, a taker of the
    # same run's next text that reads it as ``continue_text`` would (a stream's lane) moves
    # it on by the text's length.
    offset = 0
    # The terminal of the run of free text the input is inside, if any, and the walk of
    # its JSON, when the run is a JSON body (read by the stream; written here only).
    run: str | None = None
    json_body: JsonWalk | None = None
    # After ``continue_text`` in a JSON body: the member whose value all of the text went
    # on with, which the walk recorded no event for (the taker hands the text on); None
    # when the walk recorded what it found.
    value_text_of: str | None = None
    _run_fresh = False
    _state_info: StateInfo | None = None
    # The current state's search for characters a delimiter may start with (cached with
    # the state's info; read by the stream's lane for visible text, after ``continue_text``).
    delimiter_start: Callable[[str], re.Match[str] | None] | None = None
    # ... and its ``holds_no_delimiter`` (see ``begins_nothing``).
    _holds_no_delimiter: Callable[[str, int], bool] | None = None
    closed = False
    # Given, it takes the pieces of a long text in batches while the text is read.
    sink: Callable[[list[Piece]], None] | None = None
    # Reasoning blocks and the calls written in them (see ``watch_reasoning``): the terminals
    # that open and close a block, open and close a call; whether a block is open; the parser
    # before the opening of a call written in one, until the call closes.
    _watched: tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], frozenset[str]] | None = None
    _in_reasoning = False
    _before_call: tuple[int, ...] | None = None
    _after_call_open = False  # the last delimiter opened a call
    # Given (XML parameters), it tells whether a tag spelled in a value ends it; the engine
    # follows the call it is in for it, and holds the text from such a tag until it tells.
    value_ends: ValueEnds | None = None
    call_so_far: CallSoFar = NO_CALL
    _judging = False  # the text from ``_pos`` on is held until ``value_ends`` tells
    holds_a_call_opening = False  # ... and it begins with a call's opening tag

    def watch_reasoning(
        self,
        opens: frozenset[str],
        closes: frozenset[str],
        call_opens: frozenset[str],
        call_closes: frozenset[str],
        ends: frozenset[str] = frozenset(),
    ) -> None:
        """Read a reasoning block's closing tag written inside a call the block holds as the
        block's end: the call was never one (its text is the block's, as the assembler reads
        a call inside a block closed after it), where the grammar would have it as text of
        the call and read the answer after it as more of the call (``<think>I could write
        <tool_call> here.</think>Answer.``). ``ends``: other delimiters after which no block
        is open (the turn's end, the next message's header)."""
        if opens and closes and call_opens:
            self._watched = (opens, closes, call_opens, call_closes, ends)

    @property
    def position(self) -> int:
        """Absolute position of the first character not yet handed out."""
        return self.offset + self._pos

    def accepts_end(self) -> bool:
        """Could the text end here (no block the grammar requires closing is open)?"""
        return self._stepper.accepts_end(self._stack)

    def continue_text(self, text: str, begins: bool | None = None) -> int:
        """Take ``text`` whole as the continuation of the current run of free text, if it is one
        (a JSON body's walk scans it).

        Returns where it starts in the input (see ``value_text_of``), or -1 (nothing taken:
        ``feed`` it) when a delimiter could start in it (outside a JSON string: inside one,
        every spelling is text), text is held back, or the run just began. The common streaming
        delta then costs one regex search and no ``Piece``. ``begins``: whether a delimiter
        could start in ``text``, where the caller asked the state's searches already (a
        stream's lane, in the same state), else None.
        """
        if (
            self.run is None
            or self._run_fresh
            or self._pos != len(self._buffer)
            or self.closed
            or not text
        ):
            return -1
        if begins is None:
            search = self.delimiter_start
            if search is None:
                matcher = self._info().matcher
                search = self.delimiter_start = matcher.first_chars.search
                self._holds_no_delimiter = matcher.holds_no_delimiter
            first = search(text)
            begins = first is not None and not self.begins_nothing(text, first)
        start = self.offset + self._pos
        if begins and (self.json_body is None or not self.json_body.holds_in_string(start, text)):
            return -1
        end = start + len(text)
        if self.json_body is not None:
            self.value_text_of = self.json_body.continue_value(text, start, end)
        if self.value_ends is not None:
            self.call_so_far = ValueEnds.after_text(self.call_so_far, self.run, text)
        self.offset = end
        self._buffer = ""
        self._pos = 0
        return start

    def begins_nothing(self, text: str, first: re.Match[str]) -> bool:
        """Is ``text``, short, in which ``delimiter_start`` found ``first``, text all through
        (no spelling in it, none beginning at its end)? Asked by ``continue_text`` and by the
        stream's lanes, after ``continue_text`` (which caches the state's searches)."""
        return len(text) <= SHORT_DELTA and self._holds_no_delimiter(text, first.start())  # type: ignore[misc]

    def feed(self, text: str, begins: bool | None = None) -> list[Piece]:
        """The pieces ``text`` completes. ``begins``: True where the caller found already that
        a delimiter could start in it (see ``continue_text``)."""
        if self.closed:
            raise ValueError("feed() after close()")
        if not text:
            return []
        run = self.run
        if (
            run is not None
            and not begins
            and self._pos == len(self._buffer)
            and self._info().matcher.first_chars.search(text) is None
        ):
            # The common streaming case: nothing is held back and no delimiter can even start
            # in this delta, so all of it continues the current run.
            start = self.offset + self._pos
            if self.json_body is not None:
                self.json_body.scan(text, start, start + len(text))
            if self.value_ends is not None:
                self.call_so_far = ValueEnds.after_text(self.call_so_far, run, text)
            self.offset = start + len(text)
            self._buffer = ""
            self._pos = 0
            piece = Piece(run, text, start, run_start=self._run_fresh, json=self.json_body)
            self._run_fresh = False
            return [piece]
        # Only the held-back tail (shorter than the longest delimiter) is kept from before.
        self._buffer = self._buffer[self._pos :] + text
        self.offset += self._pos
        self._pos = 0
        out: list[Piece] = []
        self._process(out, final=False)
        return out

    def settle(self) -> list[Piece]:
        """Resolve held-back text as if no more text followed, without closing."""
        out: list[Piece] = []
        self._process(out, final=True)
        return out

    def close(self) -> list[Piece]:
        cut = self._cut_delimiter()
        if cut is None:
            out = self.settle()
        else:
            # What the text holds before the cut is read as the end of the text; the cut
            # delimiter is a piece of its own.
            buffer = self._buffer
            self._buffer = buffer[: self._pos]
            out = self.settle()
            out.append(Piece(CUT, buffer[self._pos :], self.offset + self._pos))
            self._buffer, self._pos = buffer, len(buffer)
        self.run = None
        self.closed = True
        return out

    def _cut_delimiter(self) -> str | None:
        """The text held back when the text ends, where it is a delimiter cut short: a whole
        special token (no model writes one as text) that begins a longer spelling the state
        accepts. None for anything else (``<tool_ca`` is text, a model writes ``<tool_call>``
        as one token). A completion's only: a rendered conversation ends where the renderer
        stopped."""
        held = self._buffer[self._pos :]
        if not held or self._judging or self._start == "transcript":
            return None
        matcher = self._info().matcher
        if TOKEN_SHAPE.match(held) is None and not _whole_tag_alone_in(held, matcher.accepted):
            return None
        body = self.json_body
        if body is not None and body.holds_in_string(self.offset + self._pos, held):
            return None  # (inside a JSON string, a spelling is text)
        if held in matcher.accepted:
            return None  # a whole delimiter (``<|end|>``) that a longer one begins with
        return held if matcher.begins_accepted(held) else None

    # -- internals ---------------------------------------------------------------------------

    def _info(self) -> StateInfo:
        """The current parser state's lexing info (cached until the parser moves)."""
        info = self._state_info
        if info is None:
            info = self.grammar.state_info(self._start, self._stack[-1])
            self._state_info = info
        return info

    def _process(self, out: list[Piece], final: bool) -> None:
        buffer = self._buffer
        end = len(buffer)
        pos = self._pos
        sink = self.sink
        while pos < end:
            if sink is not None and len(out) >= SINK_BATCH:
                sink(out[:])
                out.clear()
            info = self._info()
            if self.run is None:
                at = info.matcher.match_at(buffer, pos, end, final)
                if at is True:
                    break  # could still become a delimiter: wait for more text
                if isinstance(at, Found) and not at.stray and self._valid_here(at.terminal):
                    # (A tag right where a value begins, ``<arg_value></arg_value>x``, is asked about too.)
                    verdict = self._verdict(at, buffer, final, info.free_text == VALUE)
                    if verdict is None:
                        break
                    if not verdict:
                        self._start_run(info.free_text, pos)  # (the search below finds it again)
                        continue
                    pos = self._delimiter(out, buffer, at)
                    continue
                self._start_run(info.free_text, pos)
                continue
            found = self._search(info, buffer, pos, end, final)
            if isinstance(found, int):
                if found > pos:
                    self._text(out, buffer[pos:found], pos)
                body = self.json_body
                if (
                    found < end
                    and body is not None
                    and body.holds_in_string(self.offset + found, buffer[found:end])
                    and not any(token.startswith(buffer[found:end]) for token in self._turn_ends)
                ):
                    # Held back as the beginning of a delimiter, but it goes on with a JSON
                    # string, where every spelling is text: a delta that ends with a space
                    # (which begins " {" in Llama's JSON calls) leaves nothing held, and the
                    # next one may go on the short way.
                    self._text(out, buffer[found:end], found)
                    found = end
                pos = found
                break
            if found.stray or not self._valid_here(found.terminal):
                if self._before_call is not None and self._block_ends_in_call(found.terminal):
                    if found.start > pos:
                        self._text(out, buffer[pos : found.start], pos)
                    self.run = None
                    self.json_body = None
                    pos = self._delimiter(out, buffer, found)
                    continue
                if found.start > pos:
                    self._text(out, buffer[pos : found.start], pos)
                piece = self._text(out, buffer[found.start : found.end], found.start)
                piece.stray_delimiter = found.terminal
                pos = found.end
                continue
            verdict = self._verdict(found, buffer, final, self.run == VALUE)
            if verdict is not True:
                if found.start > pos:
                    self._text(out, buffer[pos : found.start], pos)
                if verdict is None:
                    pos = found.start
                    break
                # Text after all: a call's opening tag that opens none, or a tag a value spells.
                piece = self._text(out, buffer[found.start : found.end], found.start)
                if found.terminal == "CALL_OPEN":
                    piece.stray_delimiter = found.terminal
                pos = found.end
                continue
            if found.start > pos:
                self._text(out, buffer[pos : found.start], pos)
            self.run = None
            self.json_body = None
            pos = self._delimiter(out, buffer, found)
        self._pos = pos

    def _verdict(self, found: Found, buffer: str, final: bool, in_value: bool) -> bool | None:
        """Is a delimiter the grammar takes here one (see ``value_ends``)? False: it is text;
        None: the text does not tell yet, and it is held."""
        judge = self.value_ends
        if judge is None:
            return True
        terminal = found.terminal
        if terminal == "CALL_OPEN":
            verdict = judge.opens_call(buffer, found.end, final)
            self.holds_a_call_opening = verdict is None
        elif in_value and terminal in CANDIDATES and self.call_so_far.where == "value":
            verdict = judge.ends_value(self.call_so_far, terminal, buffer, found.start, found.end, final, self.offset)
        else:
            return True
        self._judging = verdict is None
        return verdict

    def _search(self, info: StateInfo, buffer: str, pos: int, end: int, final: bool) -> Found | int:
        body = self.json_body
        if body is None:
            return info.matcher.search(buffer, pos, end, final)
        safe = self.grammar.json_safe_delimiters
        while True:
            if safe and body.error is None:
                # What the walk has read is JSON (a value the C decoder read whole, or the body
                # up to its end), and no delimiter can begin inside JSON but within a string:
                # the search starts after it.
                pos = max(pos, min(end, body.json_end - self.offset))
            found = info.matcher.search(buffer, pos, end, final)
            if isinstance(found, int):
                return found
            if self._turn_ends and buffer[found.start : found.end] in self._turn_ends:
                return found
            if not body.inside(buffer, self.offset, self.offset + found.start, safe, buffer[found.start : found.end]):
                return found
            covered = body.read_whole_until(self.offset + found.start) - self.offset
            if covered > found.start + 1:
                # A value read whole holds this delimiter, and every other one that starts and
                # ends inside it: look again only where one could reach past its end.
                pos = max(found.start + 1, covered - info.matcher.longest + 1)
                continue
            # A delimiter spelled inside a JSON string literal is text.
            pos = found.start + 1

    def _start_run(self, terminal: str | None, index: int) -> None:
        self._run_fresh = True
        if terminal is None:
            self.run = STRAY
            return
        self._step(terminal)
        self.run = terminal
        shape = JSON_SHAPES.get(terminal)
        if shape is not None:
            self.json_body = JsonWalk(self.offset + index, shape, record=terminal in JSON_READ)

    def _text(self, out: list[Piece], text: str, index: int) -> Piece:
        start = self.offset + index
        body = self.json_body
        if body is not None:
            # The body is scanned through every character handed out, so a reader of this
            # piece finds all its members in the walk.
            body.scan(text, start, start + len(text))
        piece = Piece(self.run or STRAY, text, start, run_start=self._run_fresh, json=body)
        self._run_fresh = False
        out.append(piece)
        if self.value_ends is not None:
            self.call_so_far = ValueEnds.after_text(self.call_so_far, self.run, text)
        return piece

    def _delimiter(self, out: list[Piece], buffer: str, found: Found) -> int:
        text = buffer[found.start : found.end]
        if self._watched is not None:
            self._watch(found.terminal)
        if self.value_ends is not None:
            self.call_so_far = ValueEnds.after_delimiter(self.call_so_far, found.terminal)
        self._step(found.terminal)
        out.append(Piece(found.terminal, text, self.offset + found.start, delimiter=True, run_start=True))
        return found.end

    def _watch(self, terminal: str) -> None:
        """Follow reasoning blocks and the calls opened in them (see ``watch_reasoning``)."""
        opens, closes, call_opens, call_closes, ends = self._watched  # type: ignore[misc]
        after_call_open, self._after_call_open = self._after_call_open, terminal in call_opens
        if terminal in call_opens:
            if self._in_reasoning and self._before_call is None:
                self._before_call = self._stack
        elif terminal in call_closes:
            self._before_call = None
        elif terminal in opens:
            # (Right after a call's opening, the block's opening tag is the call's separator:
            # gpt-oss's ``to=functions.f<|channel|>analysis<|message|>{…}``.)
            self._in_reasoning = self._in_reasoning or not after_call_open
        elif terminal in closes or terminal in ends:
            self._in_reasoning = False
            self._before_call = None

    def _block_ends_in_call(self, terminal: str) -> bool:
        """Is ``terminal``, found inside a call opened in a reasoning block, the block's end?
        Then the parser goes back to before the call's opening (its text is the block's), where
        the grammar takes the closing tag."""
        if terminal not in self._watched[1]:  # type: ignore[index]
            return False
        here, self._stack = self._stack, self._before_call  # type: ignore[assignment]
        if self._valid_here(terminal):
            self._before_call = None
            return True
        self._stack = here
        return False

    def _valid_here(self, terminal: str) -> bool:
        """Is a delimiter the state offers really valid after everything before it?

        LALR merges the lookaheads of look-alike states, so a state may offer a terminal that
        a reduction then rejects: the step (remembered per stack) says.
        """
        return self._stepper.accepts(self._stack, terminal)

    def _step(self, terminal: str) -> None:
        self._state_info = None
        self.delimiter_start = self._holds_no_delimiter = None
        after = self._stepper.step(self._stack, terminal)
        if after is None:  # pragma: no cover - a grammar bug, not bad input
            raise GrammarError(f"grammar {self.grammar.name!r} rejected {terminal} it offered")
        self._stack = after


# A tag written whole (``<tool_call>``): a model writes it as one token.
# A whole tag, after whitespace: a model writes one as a token, so text cut right after it was
# cut inside the delimiter it begins.
WHOLE_TAG = re.compile(r"[ \t\r\n]*<[^<>\s]{1,40}>")


def _whole_tag_alone_in(held: str, accepted: Container[str]) -> bool:
    """Whether the held text begins with a whole tag that is no delimiter alone but only the
    start of one (Qwen3-Coder's ``<tool_call>``, which its calls' opening goes on from with
    ``<function=``): text cut there was cut inside the delimiter."""
    tag = WHOLE_TAG.match(held)
    return tag is not None and held[: tag.end()] not in accepted
