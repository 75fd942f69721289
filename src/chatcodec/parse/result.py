"""What a parse of one completion found (shared by the streaming parser and the one-shot
reader, which builds the same result)."""

from __future__ import annotations

from collections.abc import Callable

from chatcodec.events import Diagnostic, FinishReason
from chatcodec.messages import Message
from chatcodec.parse.spans import Span

_new_result = object.__new__


class ParseResult:
    """Everything a parse found: the message, how it ended, what was odd, and where.

    ``spans`` may be read only when first asked for (``read_spans``): a stream fed a whole
    completion gives its events and message at once, and most callers never look at the spans.
    """

    __slots__ = ("message", "finish_reason", "diagnostics", "text", "_spans", "_read_spans")

    def __init__(
        self,
        message: Message,
        finish_reason: FinishReason,
        diagnostics: list[Diagnostic],
        spans: list[Span] | None,
        text: str,
        *,
        read_spans: Callable[[], list[Span]] | None = None,
    ) -> None:
        if spans is None and read_spans is None:
            raise ValueError("ParseResult needs its spans or a way to read them")
        self.message = message
        self.finish_reason = finish_reason
        self.diagnostics = diagnostics
        self.text = text
        self._spans = spans
        self._read_spans = None if spans is not None else read_spans

    @property
    def spans(self) -> list[Span]:
        spans = self._spans
        if spans is None:
            spans = self._spans = self._read_spans()  # type: ignore[misc]
            self._read_spans = None
        return spans

    @spans.setter
    def spans(self, spans: list[Span]) -> None:
        self._spans, self._read_spans = spans, None

    def read_spans_later(self, read_spans: Callable[[], list[Span]]) -> None:
        """Drop the spans held: ``read_spans`` gives them when first asked for."""
        self._spans, self._read_spans = None, read_spans

    def copy(self) -> ParseResult:
        """A result of its own lists (spans not read yet are read when either asks)."""
        # (Built slot by slot: a stream's ``result()`` copies, and ``__init__``'s checks and
        # keywords cost as much again.)
        copy: ParseResult = _new_result(ParseResult)
        copy.message = self.message
        copy.finish_reason = self.finish_reason
        copy.diagnostics = list(self.diagnostics)
        copy.text = self.text
        spans = self._spans
        if spans is None:
            copy._spans, copy._read_spans = None, lambda: list(self.spans)
        else:
            copy._spans, copy._read_spans = list(spans), None
        return copy

    def span_text(self, span: Span) -> str:
        return self.text[span.start : span.end]

    def reassemble(self) -> str:
        """The input, rebuilt from the spans alone (it always equals ``text``)."""
        return "".join(self.text[span.start : span.end] for span in self.spans)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParseResult):
            return NotImplemented
        return (
            self.message == other.message
            and self.finish_reason == other.finish_reason
            and self.diagnostics == other.diagnostics
            and self.text == other.text
            and self.spans == other.spans
        )

    __hash__ = None  # type: ignore[assignment]  # (mutable, as the dataclass it was)

    def __repr__(self) -> str:
        return (
            f"ParseResult(message={self.message!r}, finish_reason={self.finish_reason!r}, "
            f"diagnostics={self.diagnostics!r}, spans={self.spans!r}, text={self.text!r})"
        )
