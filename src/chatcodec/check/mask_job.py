"""Token ids and assistant masks over JSONL lines (``chatcodec masks``): a ``Job`` any engine runs.

Each valid conversation becomes one output line ``{"input_ids": [...], "assistant_masks": [...]}``
(``chatcodec.dataset.assistant_masks`` decides which tokens are the assistant's); a line that is
not a conversation, or that cannot be rendered and placed, is counted as invalid and written
nowhere but to the failures.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from chatcodec.check.batch import EXIT_INVALID, conversation_parts, load_line
from chatcodec.check.jsonl import InvalidLine, Outcome
from chatcodec.dataset import Batch, assistant_masks

if TYPE_CHECKING:
    from chatcodec.codec import Codec


@dataclass
class MaskSummary:
    """Counts over a masks run; summaries of separate parts add up (``merge``)."""

    conversations: int = 0  # valid ones, with a line in the output
    tokens: int = 0
    assistant_tokens: int = 0
    invalid: int = 0

    def merge(self, other: MaskSummary) -> MaskSummary:
        return MaskSummary(
            self.conversations + other.conversations,
            self.tokens + other.tokens,
            self.assistant_tokens + other.assistant_tokens,
            self.invalid + other.invalid,
        )

    __add__ = merge

    def exit_code(self) -> int:
        return EXIT_INVALID if self.invalid else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "tokens": self.tokens,
            "assistant_tokens": self.assistant_tokens,
            "invalid": self.invalid,
        }

    def table(self) -> str:
        share = f" ({100 * self.assistant_tokens / self.tokens:.1f}%)" if self.tokens else ""
        return "\n".join(
            [
                f"conversations:    {self.conversations}",
                f"tokens:           {self.tokens}",
                f"assistant tokens: {self.assistant_tokens}{share}",
                f"invalid:          {self.invalid}",
            ]
        )


@lru_cache(maxsize=4)
def load_tokenizer(path: str) -> Any:
    """A ``tokenizers.Tokenizer`` from a ``tokenizer.json``, once per process: jobs carry the
    path, not the tokenizer, so that each worker loads it from its own disk."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


@dataclass
class MaskSettings:
    """What every conversation of a masks run is tokenized with; a ``Job`` over JSONL lines."""

    codec: Codec
    tokenizer_file: str
    template_kwargs: dict[str, Any] = field(default_factory=dict)
    end_token: bool = True  # the end token of an assistant turn is the assistant's
    template_think: bool = False  # the empty think blocks the template writes are the assistant's

    def masker(self) -> Callable[[Batch], Batch]:
        return assistant_masks(
            self.codec,
            load_tokenizer(self.tokenizer_file),
            end_token=self.end_token,
            template_think=self.template_think,
            **self.template_kwargs,
        )

    def masks(self, raw: bytes, first: bool) -> tuple[list[int], list[int]]:
        """``input_ids`` and ``assistant_masks`` of one JSONL line; ``InvalidLine`` says why not."""
        messages, tools = conversation_parts(load_line(raw, first))
        try:
            out = self.masker()({"messages": [messages], "tools": [tools]})
        except RecursionError:
            raise InvalidLine("nested too deeply") from None
        if out["mask_error"][0] is not None:
            raise InvalidLine(out["mask_error"][0])
        return out["input_ids"][0], out["assistant_masks"][0]

    # -- the Job protocol --

    def summary(self) -> MaskSummary:
        return MaskSummary()

    def line(self, summary: MaskSummary, raw: bytes, first: bool) -> Outcome | None:
        try:
            ids, mask = self.masks(raw, first)
        except InvalidLine as exc:
            summary.invalid += 1
            return Outcome(error=str(exc))
        summary.conversations += 1
        summary.tokens += len(ids)
        summary.assistant_tokens += sum(mask)
        return Outcome(output=json.dumps({"input_ids": ids, "assistant_masks": mask}, separators=(",", ":")))
