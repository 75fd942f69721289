"""Formats with hand-written framings: DeepSeek's (whose assistant turns after tool results have
no header, which a framing read from headers and footers cannot say), and the Qwen3 and Llama 3
framings the derived ones are checked against."""

from __future__ import annotations

from chatcodec.formats.base import Format
from chatcodec.formats.framing import FramingPiece
from chatcodec.formats.calls import DEEPSEEK, DEEPSEEK_V3, HERMES
from chatcodec.formats.syntax import ReasoningSyntax, opening_spellings
from chatcodec.resources import grammar_text


def _piece(file: str, **roles: object) -> FramingPiece:
    defaults: dict[str, object] = {
        "turn_ends": frozenset({"END"}),
        "message_separators": frozenset(),
        "tools_begin": frozenset(),
        "tools_end": frozenset(),
        "assistant_start": frozenset({"ASSISTANT_START"}),
        "end": frozenset({"END"}),
        "leading_text_role": None,
        "headless_assistant_after": frozenset(),
        "headless_user_after_system": False,
        "tools_alone": frozenset(),
        "tools_wrap_function": False,
        "default_system_terminal": None,
        "prefix_terminal": None,
    }
    defaults.update(roles)
    return FramingPiece(grammar=grammar_text(f"framings/{file}"), **defaults)  # type: ignore[arg-type]


THINK = ReasoningSyntax.from_tags("<think>", "</think>")
# DeepSeek writes no whitespace around its tags; "<think>\n" opens R1's reasoning. A model may
# still write whitespace before the opening tag (R1 writes "\n<think>" after a prompt that
# opened the block: the tag again, not reasoning); none is taken around the closing tag.
DEEPSEEK_THINK = ReasoningSyntax("<think>", "</think>", opening_spellings("<think>"), ("</think>",))

QWEN3 = Format(
    name="qwen3",
    framing=_piece(
        "qwen3",
        turn_roles={
            "SYSTEM_START": "system",
            "USER_START": "user",
            "TOOL_TURN_START": "tool",
            "ASSISTANT_START": "assistant",
        },
        turn_ends=frozenset({"END", "TOOL_TURN_END", "TOOLS_END"}),
        message_separators=frozenset({"TOOL_RESPONSE_NEXT"}),
        tools_begin=frozenset({"TOOLS_BEGIN"}),
        tools_end=frozenset({"TOOLS_END"}),
        tools_alone=frozenset(
            {
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
            }
        ),
    ),
    reasoning=THINK,
    calls=HERMES,
    prefill_keywords=(("<think>\n\n</think>\n\n", (("enable_thinking", False),)),),
)

LLAMA3_HERMES = Format(
    name="llama3_hermes",
    framing=_piece(
        "llama3_hermes",
        turn_roles={
            "SYSTEM_START": "system",
            "USER_START": "user",
            "TOOL_TURN_START": "tool",
            "ASSISTANT_START": "assistant",
        },
        turn_ends=frozenset({"END", "TOOL_TURN_END"}),
        message_separators=frozenset({"TOOL_RESPONSE_NEXT"}),
        tools_begin=frozenset({"TOOLS_BEGIN"}),
        tools_end=frozenset({"TOOLS_END"}),
        prefix_terminal="BOS",
    ),
    reasoning=None,
    calls=HERMES,
    system_turn_always=True,
)

DEEPSEEK_FORMAT = Format(
    name="deepseek",
    framing=_piece(
        "deepseek",
        turn_roles={"USER": "user", "ASSISTANT": "assistant", "TOOL_OUTPUT_BEGIN": "tool"},
        turn_ends=frozenset({"END", "TOOL_OUTPUT_END"}),
        assistant_start=frozenset({"ASSISTANT"}),
        leading_text_role="system",
        headless_assistant_after=frozenset({"tool", "assistant"}),
        prefix_terminal="BOS",
    ),
    reasoning=DEEPSEEK_THINK,
    calls=DEEPSEEK,
    unprompted=True,
    prefill_keywords=(("<think>", (("thinking", True),)), ("<think></think>", ()), ("</think>", ())),
)

DEEPSEEK_V3_FORMAT = Format(
    name="deepseek_v3",
    framing=_piece(
        "deepseek_v3",
        turn_roles={"USER": "user", "ASSISTANT": "assistant", "OUTPUT_BEGIN": "tool"},
        turn_ends=frozenset({"END", "OUTPUT_END"}),
        assistant_start=frozenset({"ASSISTANT"}),
        leading_text_role="system",
        headless_assistant_after=frozenset({"tool"}),
        prefix_terminal="BOS",
    ),
    reasoning=DEEPSEEK_THINK,
    calls=DEEPSEEK_V3,
    unprompted=True,
)

NAMED: tuple[Format, ...] = (QWEN3, LLAMA3_HERMES, DEEPSEEK_FORMAT, DEEPSEEK_V3_FORMAT)
# Literals that identify the templates whose framing is written by hand (all must appear), most
# specific first: DeepSeek V3's fenced calls also contain V3.1's call delimiter.
SIGNATURES: tuple[tuple[Format, tuple[str, ...]], ...] = (
    (DEEPSEEK_V3_FORMAT, ("<｜tool▁call▁begin｜>", "```json")),
    (DEEPSEEK_FORMAT, ("<｜tool▁call▁begin｜>",)),
)
