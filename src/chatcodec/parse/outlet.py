"""Where an assistant turn's reading goes: events, diagnostics and spans."""

from __future__ import annotations

from typing import Any

from chatcodec.errors import ParseError
from chatcodec.events import Diagnostic, Event
from chatcodec.parse.spans import Span


class Outlet:
    """The events, diagnostics and spans of one assistant turn, as the assembler and the calls'
    bookkeeping (``ToolCalls``) write them.

    It is an object of its own so that what the assembler holds never refers back to the
    assembler: the calls' bookkeeping writes here, not through the assembler's methods. A
    parser that is dropped is then freed at once, with everything it read, instead of waiting
    for the cyclic garbage collector (a server drops one parser per request).
    """

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.events: list[Event] = []
        self.diagnostics: list[Diagnostic] = []
        self.spans: list[Span] = []

    # (Class attributes until first set: one outlet is built per request.)
    # The last span, while a run of text may still grow it: [kind, start, end, index].
    open_span: list[Any] | None = None
    # Positions in the input less ``base`` are positions in the completion (the prompt's
    # prefill comes first).
    base = 0
    silent = False  # reading a prefill: nothing is reported
    # False when nobody reads the events (a whole completion parsed at once): a call's
    # argument deltas are then let go as soon as the call ends.
    keep_events = True

    # While set, the events from this index on are held back (a call inside a reasoning block,
    # until the block's end says whether it was a call): ``take_events`` gives those before it.
    held_from: int | None = None

    def take_events(self) -> list[Event]:
        events = self.events
        held = self.held_from
        if held is not None:
            self.events = events[held:]
            self.held_from = 0
            return events[:held]
        self.events = []
        return events

    def emit(self, event: Event) -> None:
        if not self.silent and self.keep_events:
            self.events.append(event)

    def diagnose(self, kind: str, position: int, message: str) -> None:
        if self.silent:
            return
        # (A block the prompt opened is reported where the completion begins.)
        position = max(position - self.base, 0)
        diagnostic = Diagnostic(kind, position, message)
        if self.strict and self.held_from is None:
            raise ParseError(message, kind=kind, position=position)
        self.diagnostics.append(diagnostic)
        self.events.append(diagnostic)

    def span(self, kind: str, start: int, end: int, name: str | None = None, index: int | None = None) -> None:
        if self.silent or end <= start:
            return
        start = max(start - self.base, 0)
        end -= self.base
        if end <= start:
            return
        # The span being extended is kept mutable; a run of deltas grows it in place.
        current = self.open_span
        if name is None and current is not None and current[0] == kind and current[3] == index and current[2] == start:
            current[2] = end
            return
        if current is not None:
            self.spans.append(Span(current[0], current[1], current[2], None, current[3]))
            self.open_span = None
        if name is None:
            self.open_span = [kind, start, end, index]
        else:
            self.spans.append(Span(kind, start, end, name, index))
