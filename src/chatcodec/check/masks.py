"""Which characters (and tokens) of a rendered conversation the assistant wrote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatcodec.parse.transcript import MessageSpan


@dataclass
class RenderedConversation:
    """Rendered text plus, for every input message, where it lies (``messages[i]`` is message i)."""

    text: str
    messages: list[MessageSpan]

    def assistant_ranges(self) -> list[tuple[int, int]]:
        """Character ranges the assistant wrote: each assistant turn after its header, up to
        and including its end token (what a model is trained to produce)."""
        return [(span.body_start, span.end) for span in self.messages if span.role == "assistant" and span.end > span.body_start]

    def assistant_char_mask(self) -> list[bool]:
        mask = [False] * len(self.text)
        for start, end in self.assistant_ranges():
            mask[start:end] = [True] * (end - start)
        return mask

    def token_mask(self, tokenizer: Any) -> list[int]:
        """1 for each token whose first character the assistant wrote, else 0.

        ``tokenizer`` is a ``tokenizers.Tokenizer`` or a transformers fast tokenizer; only its
        character offsets are used. The text is encoded without added special tokens.
        """
        offsets = token_offsets(tokenizer, self.text)
        ranges = self.assistant_ranges()
        return [1 if any(a <= start < b for a, b in ranges) and end > start else 0 for start, end in offsets]


def token_offsets(tokenizer: Any, text: str) -> Sequence[tuple[int, int]]:
    if hasattr(tokenizer, "encode") and hasattr(tokenizer, "get_vocab_size"):
        encoding = tokenizer.encode(text, add_special_tokens=False)
        return [tuple(offset) for offset in encoding.offsets]  # type: ignore[misc]
    if callable(tokenizer):
        encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
        return [tuple(offset) for offset in encoded["offset_mapping"]]
    raise TypeError("token_mask needs a tokenizers.Tokenizer or a transformers fast tokenizer (with offsets)")
