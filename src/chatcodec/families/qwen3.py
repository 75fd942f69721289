"""Qwen3: ChatML turns, ``<think>`` reasoning, ``<tool_call>`` JSON objects (Hermes style)."""

from chatcodec.families.base import Family

FAMILY = Family(
    name="qwen3",
    grammar_name="qwen3",
    signature=("<|im_start|>", "<tool_call>"),
    call_body="object",
)
