"""Assistant masks per second: `chatcodec.dataset.assistant_masks` over generated multi-turn
Qwen3 conversations with tool calls (JSON text, as they sit in Arrow), one process, a
byte-level BPE tokenizer (the tokenizer's own time included, as in training pipelines).

    .venv/bin/python bench/masks.py
"""

from __future__ import annotations

import json
import statistics
import time

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import chatcodec
from chatcodec.dataset import assistant_masks

CODEC = chatcodec.load("qwen3")


def conversation(number: int) -> str:
    messages = [{"role": "system", "content": "You are a helpful assistant."}]
    for turn in range(3):
        city = f"City{number}-{turn}"
        messages += [
            {"role": "user", "content": f"What is the weather in {city}? Please answer briefly."},
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "The user wants the weather; I call the tool.",
                "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}],
            },
            {"role": "tool", "content": json.dumps({"city": city, "temperature": 18 + turn})},
            {"role": "assistant", "content": f"It is {18 + turn} °C in {city}."},
        ]
    return json.dumps(messages)


def main() -> None:
    rows = [conversation(number) for number in range(1000)]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    sample = [CODEC.render(json.loads(row), on_special_tokens="ignore") for row in rows[:50]]
    bpe.train_from_iterator(sample, trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    apply = assistant_masks(CODEC, bpe, tools_column=None)
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        out = apply({"messages": rows})
        timings.append(time.perf_counter() - started)
    assert not any(out["mask_error"]), out["mask_error"][:3]
    tokens = sum(len(ids) for ids in out["input_ids"])
    seconds = statistics.median(timings)
    print(f"{len(rows)} conversations (13 messages, 3 calls each), {tokens / len(rows):.0f} tokens each: "
          f"{len(rows) / seconds:.0f} conversations/s, {tokens / seconds / 1000:.0f}k tokens/s (median of 5)")


if __name__ == "__main__":
    main()
