"""What chatcodec found in a template, as data (``chatcodec inspect``, ``Codec.describe``)."""

from __future__ import annotations

from typing import Any

from chatcodec.formats.base import Format
from chatcodec.formats.derived import capabilities
from chatcodec.formats.probe import Probes, Render


def describe(template_name: str, found: Format, render: Render, template_source: str) -> dict[str, Any]:
    """The framing's delimiters, the reasoning and call syntax, and what the template can do."""
    source = found.source
    framing: dict[str, Any]
    if source is None:
        framing = {"read_from_template": False, "grammar_piece": f"grammars/framings/{found.name}.lark"}
    else:
        roles = {
            role: {"header": source.headers.get(role, ""), "footer": source.footers.get(role, "")}
            for role in ("system", "user", "assistant", "tool")
            if role in source.headers
        }
        block = source.tools_block
        framing = {
            "read_from_template": True,
            "prefix": source.prefix,
            "default_system": source.default_system,
            "system": source.system,
            "system_opens_user": source.system_opens_user,
            "roles": roles,
            "end": list(source.end),
            "tool_results_merged_with": source.tool_separator or None,
            "generation_prompt": source.generation_prompt,
            "generation_prompt_written_unasked": source.prompt_written_unasked,
            "prefills": [{"text": text, "keywords": dict(keywords)} for text, keywords in source.prefills],
            "answer_lead": source.lead,
            "answer_open": source.answer_open,
            "tools_block": None
            if block is None
            else {
                "placement": block.placement,
                "begin": block.begin,
                "begin_without_system_prompt": block.begin_alone,
                "separator": block.separator,
                "end": block.end,
                "end_without_system_prompt": block.end_alone,
                "notation": block.notation if block.wraps_function is not None else None,
                "definitions": "function only"
                if block.wraps_function
                else "whole tool"
                if block.wraps_function is False
                else "the template's own form",
            },
        }
    grammar = found.grammar
    delimiters = {
        terminal: grammar.spellings_of(terminal) for terminal in sorted(grammar.delimiters, key=_terminal_order)
    }
    reasoning = found.reasoning
    calls = found.calls
    capable = capabilities(Probes(render, template_source), found)
    return {
        "template": template_name,
        "format": found.name,
        "framing": framing,
        "delimiters": delimiters,
        "reasoning": None if reasoning is None else {"open": reasoning.open_tag, "close": reasoning.close_tag},
        "calls": None if calls is None else {"syntax": calls.name, "written": calls.description},
        "calls_not_parsed": found.calls_note if calls is None else None,
        "starts_inside_reasoning_without_prompt": found.unprompted,
        "capabilities": capable,
    }


def _terminal_order(name: str) -> tuple[int, str]:
    order = ("PREFIX", "DEFAULT_SYSTEM", "SYSTEM", "USER", "TOOL_TURN", "ASSISTANT", "END", "THINK", "CALL", "TOOLS")
    for index, start in enumerate(order):
        if name.startswith(start):
            return index, name
    return len(order), name


def as_text(description: dict[str, Any]) -> str:
    """The description for people: one fact a line."""
    lines = [f"template: {description['template']}"]
    if description.get("template_variables"):
        names = ", ".join(description["template_variables"])
        lines.append(f"needs variables of its own: {names} (pass them to render; read here as empty strings)")
    framing = description["framing"]
    if framing["read_from_template"]:
        lines.append("framing: read from the template's output")
        if framing["prefix"]:
            lines.append(f"  before the first turn: {_show(framing['prefix'])}")
        if framing["default_system"]:
            lines.append(f"  without a system message: {_show(framing['default_system'])}")
        placement = {
            "turn": "its own turn",
            "leading": "text before the first turn",
            "merged": "merged into the first user turn",
            "none": "not written",
        }[framing["system"]]
        lines.append(f"  system prompt: {placement}")
        for role, parts in framing["roles"].items():
            footer = f", footer {_show(parts['footer'])}" if parts["footer"] else ""
            lines.append(f"  {role}: header {_show(parts['header'])}{footer}")
        if framing["end"]:
            lines.append("  end of an answer: " + " or ".join(_show(end) for end in framing["end"]))
        unasked = " (written after every conversation, asked for or not)" if framing.get("generation_prompt_written_unasked") else ""
        lines.append(f"  generation prompt: {_show(framing['generation_prompt'])}{unasked}")
        for prefill in framing["prefills"]:
            if prefill["text"] or prefill["keywords"]:
                keywords = ", ".join(f"{k}={v!r}" for k, v in prefill["keywords"].items()) or "by default"
                lines.append(f"  prefill {_show(prefill['text'])} ({keywords})")
        block = framing["tools_block"]
        if block is not None:
            lines.append(f"  tools block ({block['placement']}): begins {_show(block['begin'])}, ends {_show(block['end'])}")
    else:
        lines.append(f"framing: hand-written ({framing['grammar_piece']})")
    reasoning = description["reasoning"]
    lines.append(f"reasoning: {reasoning['open']} … {reasoning['close']}" if reasoning else "reasoning: none")
    calls = description["calls"]
    if calls:
        lines.append(f"calls: {calls['syntax']}  {calls['written']}")
    else:
        lines.append(f"calls: not parsed ({description['calls_not_parsed']})")
    lines.append("capabilities:")
    for key, value in description["capabilities"].items():
        lines.append(f"  {key.replace('_', ' ')}: {_yes_no(value)}")
    return "\n".join(lines) + "\n"


def _show(text: str) -> str:
    return repr(text) if len(text) <= 70 else repr(text[:50]) + f"… ({len(text)} characters)"


def _yes_no(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)
