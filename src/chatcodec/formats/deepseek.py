"""DeepSeek (V3.1 style): full-width delimiters, ``NAME<｜tool▁sep｜>ARGS`` tool calls."""

from chatcodec.formats.base import Family

FAMILY = Family(
    name="deepseek",
    grammar_name="deepseek",
    signature=("<｜tool▁call▁begin｜>",),
    call_body="name_then_arguments",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    assistant_start=frozenset({"ASSISTANT"}),
    turn_roles={"USER": "user", "ASSISTANT": "assistant", "TOOL_OUTPUT_BEGIN": "tool"},
    turn_ends=frozenset({"END", "TOOL_OUTPUT_END"}),
    tools_begin=frozenset(),
    tools_end=frozenset(),
    leading_text_role="system",
    headless_assistant_after=frozenset({"tool", "assistant"}),
    prefill_keywords=(("<think>", (("thinking", True),)), ("<think></think>", ()), ("</think>", ())),
)
