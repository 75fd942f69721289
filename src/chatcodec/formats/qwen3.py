"""Qwen3: ChatML turns, ``<think>`` reasoning, ``<tool_call>`` JSON objects (Hermes style)."""

from chatcodec.formats.base import Family

FAMILY = Family(
    name="qwen3",
    grammar_name="qwen3",
    signature=("<|im_start|>", "<tool_call>"),
    # Qwen3-Coder writes XML parameters (<function=...>) inside <tool_call>, not JSON.
    excludes=("<function=",),
    call_body="object",
    turn_roles={
        "SYSTEM_START": "system",
        "USER_START": "user",
        "TOOL_TURN_START": "tool",
        "ASSISTANT_START": "assistant",
    },
    turn_ends=frozenset({"END", "TOOL_TURN_END", "TOOLS_END"}),
    message_separators=frozenset({"TOOL_RESPONSE_NEXT"}),
    system_before_tools_marker="\n\n",
    prefill_keywords=(("<think>\n\n</think>\n\n", (("enable_thinking", False),)),),
)
