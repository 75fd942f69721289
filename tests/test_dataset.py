"""Assistant masks through the real `datasets.map(batched=True)`, with a real tokenizer."""

from __future__ import annotations

import json
from typing import Any

import datasets
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

import chatcodec
from chatcodec.dataset import assistant_masks, assistant_ranges, conversations_as_json

QWEN3 = chatcodec.load("qwen3")
CONVERSATIONS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "content": "18 C"},
            {"role": "assistant", "content": "It is 18 C."},
        ]
    },
    {
        "messages": [
            {"role": "user", "content": "Time in CET?"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {"tz": "CET"}}}]},
            {"role": "tool", "content": "12:00"},
            {"role": "assistant", "content": "Noon.", "reasoning_content": "Easy."},
        ]
    },
]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = [QWEN3.render(row["messages"], on_special_tokens="ignore") for row in CONVERSATIONS] * 20
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False))
    return bpe


def test_masks_through_datasets_map(tokenizer: Tokenizer) -> None:
    data = datasets.Dataset.from_dict(conversations_as_json(CONVERSATIONS))
    mapped = data.map(assistant_masks(QWEN3, tokenizer), batched=True, batch_size=2, remove_columns=["messages"])
    assert mapped.column_names == ["input_ids", "assistant_masks", "mask_error"]
    for row, conversation in zip(mapped, CONVERSATIONS):
        assert row["mask_error"] is None
        ids, mask = row["input_ids"], row["assistant_masks"]
        assert len(ids) == len(mask) and 0 < sum(mask) < len(mask)
        # The tokens the mask selects decode to the assistant's turns and nothing else.
        text = QWEN3.render(conversation["messages"], on_special_tokens="ignore")
        offsets = tokenizer.encode(text, add_special_tokens=False).offsets
        chosen = "".join(text[a:b] for (a, b), m in zip(offsets, mask) if m)
        assert "Weather in Paris?" not in chosen and "Time in CET?" not in chosen and "18 C\n" not in chosen
        assert '"name": "get_' in chosen and chosen.count("<|im_end|>") == 2
    assert "It is 18 C." in "".join(
        QWEN3.render(CONVERSATIONS[0]["messages"], on_special_tokens="ignore")[a:b]
        for a, b in assistant_ranges(QWEN3.render_with_spans(CONVERSATIONS[0]["messages"]))
    )


def test_what_counts_can_be_chosen() -> None:
    rendered = QWEN3.render_with_spans(CONVERSATIONS[0]["messages"])
    text = rendered.text
    with_end = "".join(text[a:b] for a, b in assistant_ranges(rendered))
    without_end = "".join(text[a:b] for a, b in assistant_ranges(rendered, end_token=False))
    assert with_end.count("<|im_end|>") == 2 and "<|im_end|>" not in without_end
    # The empty think block Qwen3 writes into the last answer is the template's, not the model's.
    assert "<think>" in text[rendered.messages[3].body_start : rendered.messages[3].end]
    assert "<think>" not in with_end
    assert "<think>" in "".join(text[a:b] for a, b in assistant_ranges(rendered, template_think=True))


def test_arrow_merges_struct_keys_and_json_text_does_not() -> None:
    # Why conversations stay JSON text: loaded as structs, each row's arguments get the keys of
    # every row ({"city": "Paris"} comes back with "tz": None).
    structs = datasets.Dataset.from_list(CONVERSATIONS)
    arguments = structs[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert arguments == {"city": "Paris", "tz": None}
    as_text = datasets.Dataset.from_dict(conversations_as_json(CONVERSATIONS))
    assert json.loads(as_text[0]["messages"])[1]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}


def test_a_bad_row_is_reported_not_raised(tokenizer: Tokenizer) -> None:
    batch = {"messages": [json.dumps([{"role": "robot", "content": "x"}]), json.dumps(CONVERSATIONS[0]["messages"])]}
    out = assistant_masks(QWEN3, tokenizer)(batch)
    assert out["input_ids"][0] == [] and "unknown role 'robot'" in out["mask_error"][0]
    assert out["mask_error"][1] is None and out["input_ids"][1]
