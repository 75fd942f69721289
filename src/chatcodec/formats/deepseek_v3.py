"""DeepSeek V3 / R1 (before V3.1): ``function<｜tool▁sep｜>NAME`` and a fenced JSON block."""

from chatcodec.formats.base import Family

FAMILY = Family(
    name="deepseek_v3",
    grammar_name="deepseek_v3",
    signature=("<｜tool▁call▁begin｜>", "```json"),
    call_body="name_then_arguments",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    assistant_start=frozenset({"ASSISTANT"}),
    turn_roles={"USER": "user", "ASSISTANT": "assistant", "OUTPUT_BEGIN": "tool"},
    turn_ends=frozenset({"END", "OUTPUT_END"}),
    tools_begin=frozenset(),
    tools_end=frozenset(),
    leading_text_role="system",
    headless_assistant_after=frozenset({"tool"}),
)
