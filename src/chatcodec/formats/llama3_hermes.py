"""Llama 3 headers with Hermes-style ``<tool_call>`` JSON blocks; no reasoning."""

from chatcodec.formats.base import Family

FAMILY = Family(
    name="llama3_hermes",
    grammar_name="llama3_hermes",
    signature=("<|start_header_id|>", "<tool_call>"),
    call_body="object",
    reasoning_open=frozenset(),
    reasoning_close=frozenset(),
    turn_roles={
        "SYSTEM_START": "system",
        "USER_START": "user",
        "TOOL_TURN_START": "tool",
        "ASSISTANT_START": "assistant",
    },
    turn_ends=frozenset({"END", "TOOL_TURN_END"}),
    message_separators=frozenset({"TOOL_RESPONSE_NEXT"}),
    system_turn_always=True,
)
