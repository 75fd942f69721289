"""Training data: token ids and assistant masks for any template chatcodec parses.

``assistant_masks(codec, tokenizer)`` is a batched function for ``datasets.map(batched=True)``:
it renders each conversation with the model's template, finds the assistant's text by reading
the rendered text back (no ``{% generation %}`` tags needed), and tokenizes it, giving the
``input_ids`` and ``assistant_masks`` columns TRL's ``SFTTrainer`` takes pre-tokenized.

Conversations should be kept as JSON text in the dataset: Arrow gives every row of a column the
union of the keys its structs have anywhere, so tool-call arguments loaded as structs come back
with other rows' keys set to null (``{"city": "Paris"}`` becomes ``{"city": "Paris", "tz":
null}``). The function reads JSON text, and lists of message dicts too.

``roundtrip_reports(codec)`` is the same kind of function for checking a dataset: it adds what
each conversation loses through the template, and ``BatchSummary.from_columns`` counts it.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from chatcodec.check.masks import RenderedConversation, token_offsets
from chatcodec.codec import Codec
from chatcodec.errors import ChatCodecError

Batch = dict[str, list[Any]]


def assistant_masks(
    codec: Codec,
    tokenizer: Any,
    *,
    messages_column: str = "messages",
    tools_column: str | None = "tools",
    end_token: bool = True,
    template_think: bool = False,
    **template_kwargs: Any,
) -> Callable[[Batch], Batch]:
    """A batched function: a batch with a ``messages`` column (JSON text or message lists, and
    an optional ``tools`` column) to ``input_ids`` and ``assistant_masks``.

    What counts as the assistant's: each assistant turn after its header, with its end token
    (``end_token=False`` leaves the end token out), without the empty think blocks the template
    writes into turns that had no reasoning (``template_think=True`` counts them). A row that
    cannot be rendered or placed gets empty lists and its reason in ``mask_error``.
    """

    def apply(batch: Batch) -> Batch:
        out: Batch = {"input_ids": [], "assistant_masks": [], "mask_error": []}
        tools_values = batch.get(tools_column) if tools_column else None
        for row, raw in enumerate(batch[messages_column]):
            try:
                messages, tools = _conversation(raw, tools_values[row] if tools_values is not None else None)
                rendered = codec.render_with_spans(
                    messages, tools=tools or None, on_special_tokens="ignore", **template_kwargs
                )
            except (ChatCodecError, ValueError) as exc:
                out["input_ids"].append([])
                out["assistant_masks"].append([])
                out["mask_error"].append(str(exc))
                continue
            ids, mask = _tokens_and_mask(tokenizer, rendered, end_token=end_token, template_think=template_think)
            out["input_ids"].append(ids)
            out["assistant_masks"].append(mask)
            out["mask_error"].append(None)
        return out

    return apply


def assistant_ranges(rendered: RenderedConversation, *, end_token: bool = True, template_think: bool = False) -> list[tuple[int, int]]:
    """The character ranges the assistant wrote, as ``assistant_masks`` counts them."""
    ranges: list[tuple[int, int]] = []
    for span in rendered.messages:
        if span.role != "assistant" or span.end <= span.body_start:
            continue
        cut: list[tuple[int, int]] = []
        has_reasoning = any(part.kind == "reasoning" for part in span.parts)
        for part in span.parts:
            if part.kind != "delimiter" or part.start < span.body_start:
                continue
            if not end_token and part.end == span.end and part.name is not None and part.name.startswith("END"):
                cut.append((part.start, part.end))
            elif not template_think and not has_reasoning and part.name in ("THINK_OPEN", "THINK_CLOSE"):
                cut.append((part.start, part.end))
        ranges += _subtract((span.body_start, span.end), cut)
    return ranges


def _subtract(whole: tuple[int, int], cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    start = whole[0]
    for a, b in sorted(cuts):
        if a > start:
            out.append((start, a))
        start = max(start, b)
    if start < whole[1]:
        out.append((start, whole[1]))
    return out


def _tokens_and_mask(
    tokenizer: Any, rendered: RenderedConversation, *, end_token: bool, template_think: bool
) -> tuple[list[int], list[int]]:
    ranges = assistant_ranges(rendered, end_token=end_token, template_think=template_think)
    starts = [a for a, _ in ranges]
    ids = _token_ids(tokenizer, rendered.text)
    mask = []
    for start, end in token_offsets(tokenizer, rendered.text):
        at = bisect_right(starts, start) - 1
        mask.append(1 if at >= 0 and start < ranges[at][1] and end > start else 0)
    return ids, mask


def _token_ids(tokenizer: Any, text: str) -> list[int]:
    if hasattr(tokenizer, "encode") and hasattr(tokenizer, "get_vocab_size"):
        return list(tokenizer.encode(text, add_special_tokens=False).ids)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def roundtrip_reports(
    codec: Codec,
    *,
    messages_column: str = "messages",
    tools_column: str | None = "tools",
    add_generation_prompt: bool = False,
    check_prefixes: bool = False,
    **template_kwargs: Any,
) -> Callable[[Batch], Batch]:
    """A batched function: a batch with a ``messages`` column (as for ``assistant_masks``) to
    ``loss_kinds`` (the kind of each loss ``codec.roundtrip`` reports, none when lossless) and
    ``roundtrip_error`` (why a row could not be checked, else None).
    ``chatcodec.check.batch.BatchSummary.from_columns`` counts them as ``chatcodec roundtrip
    --jsonl`` does."""

    def apply(batch: Batch) -> Batch:
        out: Batch = {"loss_kinds": [], "roundtrip_error": []}
        tools_values = batch.get(tools_column) if tools_column else None
        for row, raw in enumerate(batch[messages_column]):
            try:
                messages, tools = _conversation(raw, tools_values[row] if tools_values is not None else None)
                report = codec.roundtrip(
                    messages,
                    tools=tools or None,
                    add_generation_prompt=add_generation_prompt,
                    check_prefixes=check_prefixes,
                    **template_kwargs,
                )
            except (ChatCodecError, ValueError) as exc:
                out["loss_kinds"].append([])
                out["roundtrip_error"].append(str(exc))
                continue
            out["loss_kinds"].append([loss.kind for loss in report.losses])
            out["roundtrip_error"].append(None)
        return out

    return apply


def _conversation(value: Any, tools: Any) -> tuple[Any, Any]:
    """The messages and tools of one row. A row may hold a whole JSONL line, ``{"messages":
    [...], "tools": [...]}`` (what ``ray.data.read_text`` gives); a tools column wins over it."""
    loaded = _loaded(value)
    tools = _loaded(tools) if tools is not None else None
    if isinstance(loaded, dict) and "messages" in loaded:
        own = loaded.get("tools")
        return loaded["messages"], tools if tools is not None else (None if own is None else _loaded(own))
    return loaded, tools


def _loaded(value: Any) -> Any:
    """JSON text (as conversations should be stored in Arrow) or the value itself."""
    if isinstance(value, (str, bytes)):
        return json.loads(value)
    return value


def conversations_as_json(rows: Sequence[dict[str, Any]], column: str = "messages") -> dict[str, list[str]]:
    """``{column: [JSON text, ...]}`` for ``datasets.Dataset.from_dict``: conversations kept as
    text, so that Arrow does not merge the keys of tool-call arguments across rows."""
    return {column: [json.dumps(row[column], ensure_ascii=False) for row in rows]}
