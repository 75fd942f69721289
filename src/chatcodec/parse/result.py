"""What a parse of one completion found (shared by the streaming parser and the one-shot
reader, which builds the same result)."""

from __future__ import annotations

from dataclasses import dataclass

from chatcodec.events import Diagnostic, FinishReason
from chatcodec.messages import Message
from chatcodec.parse.spans import Span


@dataclass
class ParseResult:
    """Everything a parse found: the message, how it ended, what was odd, and where."""

    message: Message
    finish_reason: FinishReason
    diagnostics: list[Diagnostic]
    spans: list[Span]
    text: str

    def span_text(self, span: Span) -> str:
        return self.text[span.start : span.end]

    def reassemble(self) -> str:
        """The input, rebuilt from the spans alone (it always equals ``text``)."""
        return "".join(self.text[span.start : span.end] for span in self.spans)
