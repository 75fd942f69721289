"""A turn framing: how a template writes each role's turn around the message text.

A ``Framing`` holds the delimiters a template writes (role headers and footers, the end token,
the text before the first turn, the tools block) as plain strings, usually read from the
template itself (``chatcodec.formats.probe``). ``grammar_piece`` turns it into the Lark rules of
a whole conversation (``transcript``); the reasoning and call pieces supply ``completion``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from chatcodec.errors import GrammarError

SystemPlacement = Literal["turn", "leading", "merged", "none"]
WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class ToolsBlock:
    """The block a template writes for the tool definitions: ``begin`` (its spellings, e.g. with
    and without the blank line that follows a system prompt), one definition per tool (JSON),
    ``separator`` between two definitions, and ``end``."""

    begin: str
    separator: str
    end: str
    # Each definition is the tool itself (``{"type": "function", ...}``), only its function, or
    # (None) a form of the template's own, which cannot be read back.
    wraps_function: bool | None = False
    # ``begin`` as written when there is no system message (the turn then holds the block
    # alone, or after a default system prompt); None when it is the same.
    begin_alone: str | None = None
    # Where the block sits: in the system turn after the system prompt, before it, or inside
    # its footer; at the start of the first user turn; as a turn of its own; or in the text
    # before the first turn (``begin`` and ``end`` then hold that text around the tools).
    placement: Literal["after", "before", "footer", "prefix", "user", "turn"] = "after"
    # How a definition is written: JSON, or a Python literal (``tool | string`` in Jinja).
    notation: Literal["json", "python"] = "json"
    # ``end`` as written when there is no system message, when it differs.
    end_alone: str | None = None


@dataclass(frozen=True)
class Framing:
    """Where a template writes what, around the text of each message.

    Headers and footers are the exact text before and after a message's text; a role whose
    header is empty continues the turn before it (Mistral's assistant answers right after
    ``[/INST]``). ``end`` are the spellings that end an assistant's turn (the template's footer,
    and what a model writes: the end token without the newline the template adds after it).
    """

    name: str
    headers: dict[str, str]
    footers: dict[str, str]
    end: tuple[str, ...]
    prefix: str = ""
    # Written instead of a system turn when there is no system message ("" when nothing is).
    default_system: str = ""
    system: SystemPlacement = "turn"
    # Between two tool results the template merges into one turn ("" when it does not merge).
    tool_separator: str = ""
    # The assistant's header after a tool result, when the template writes another one there
    # (DeepSeek V3.2's ``</think>`` where the answer continues without a header).
    assistant_after_tool: str | None = None
    # The tool turn's header is followed by the call's id and then this (Mistral's
    # ``[TOOL_RESULTS]a1b2c3d4e[TOOL_CONTENT]``); "" when the header holds no id.
    tool_id_close: str = ""
    # The tool turn's footer names the call it answers: this, then the call's id, then the
    # footer (Mistral Nemo's ``, "call_id": "`` before ``"}[/TOOL_RESULTS]``); "" when it
    # does not.
    tool_id_open: str = ""
    # The tool turn's header is followed by the tool's name and then this (harmony's
    # ``<|start|>functions.NAME to=assistant...``); "" when the header holds no name.
    tool_name_close: str = ""
    # ``tool_name_close`` holds the result's number, "1" for the first (Kimi K3's
    # `` index="1"<|sep|>``): each number ``numbered`` gives is a spelling of it.
    tool_name_numbered: bool = False
    # The template writes each tool result as a JSON string: its text between the quotes is
    # escaped.
    tool_content_json: bool = False
    generation_prompt: str = ""
    # The template writes the generation prompt after every conversation, asked for or not
    # (ERNIE 4.5 Thinking, Nemotron Mini): a rendered answer ends with it, where no model
    # writes it. The framing is read as if it were written only when asked for.
    prompt_written_unasked: bool = False
    # What the generation prompt writes after the assistant header, under which template keywords.
    prefills: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    tools_block: ToolsBlock | None = None
    # Delimiters the template spells otherwise when there are tools: (spelling, with tools).
    tools_variants: tuple[tuple[str, str], ...] = ()
    # The system prompt opens the first user turn, whose text follows the system footer with
    # no user header (Llama 2's ``[INST] <<SYS>>...<</SYS>>`` then the user's text).
    system_opens_user: bool = False
    # Whitespace the template writes between the generation prompt and the answer (Llama 2's
    # space after ``[/INST]``), and text that opens the visible answer
    # (``<|START_RESPONSE|>``, ``<|channel|>final<|message|>``): the model writes them.
    lead: str = ""
    answer_open: str = ""
    # Text that closes the visible answer, where the model is asked to write one (Granite
    # 3.3's ``</response>``, after its ``<response>``).
    answer_close: str = ""
    # The template renders each role from "system", "user", "assistant", "tool" it frames.
    notes: tuple[str, ...] = field(default=())

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.headers)


def numbered(spelling: str) -> tuple[str, ...]:
    """A delimiter that holds a call's or a result's number, written "1" in ``spelling``, with
    each number up to 64 (the most spellings a delimiter may have)."""
    return tuple(spelling.replace("1", str(number)) for number in range(1, 65))


# What a model writes beside the answer's opening a template renders: gpt-oss constrains its
# final channel to JSON when asked for structured output, and may begin with a header it then
# supersedes (llama.cpp's "commentary to=assistant" cases).
ANSWER_OPEN_VARIANTS: dict[str, tuple[str, ...]] = {
    "<|channel|>final<|message|>": (
        "<|channel|>final <|constrain|>json<|message|>",
        "<|channel|>final<|constrain|>json<|message|>",
        "<|channel|>commentary to=assistant<|channel|>final<|message|>",
        "<|start|><|channel|>final<|message|>",
        # The prompt's header written again (the model began a message of its own).
        "<|start|>assistant<|channel|>final<|message|>",
    ),
    # Functionary v3.2's answer, its ``>>>`` written again after the prompt's.
    ">>>all\n": (">>>>>>all\n",),
    # Functionary v2.2's text to the user in a message of its own, after a call.
    "<|recipient|>all\n<|content|>": ("\n<|from|>assistant\n<|recipient|>all\n<|content|>",),
}

# Optional parts whose terminal carries no role: two of them spelled alike can be one terminal.
SHAREABLE = ("TOOL_SEPARATOR", "LEAD", "ANSWER_OPEN")

# Terminal names, one per part of a turn; parts spelled alike share the first name listed.
_NAMES = {
    ("assistant", "footer"): "END",
    ("system", "header"): "SYSTEM_START",
    ("system", "footer"): "SYSTEM_END",
    ("user", "header"): "USER_START",
    ("user", "footer"): "USER_END",
    ("assistant", "header"): "ASSISTANT_START",
    ("tool", "header"): "TOOL_TURN_START",
    ("tool", "footer"): "TOOL_TURN_END",
}


@dataclass(frozen=True)
class FramingPiece:
    """A framing as a grammar piece: Lark text defining ``transcript`` and the roles of its
    terminals (what the transcript reader needs to assign text to messages)."""

    grammar: str
    turn_roles: dict[str, str]
    turn_ends: frozenset[str]
    message_separators: frozenset[str]
    tools_begin: frozenset[str]
    tools_end: frozenset[str]
    assistant_start: frozenset[str]
    end: frozenset[str]
    leading_text_role: str | None
    headless_assistant_after: frozenset[str]
    # The first user turn follows the system turn with no header.
    headless_user_after_system: bool
    # Spellings of the tools block's opening that mean "no system message" (the template wrote
    # the system turn for the tools alone).
    tools_alone: frozenset[str]
    # Each rendered tool definition is only the tool's ``function`` object (None: a form of
    # the template's own, not JSON).
    tools_wrap_function: bool | None
    default_system_terminal: str | None
    prefix_terminal: str | None
    lead_terminal: str | None = None
    answer_open_terminal: str | None = None
    answer_close_terminal: str | None = None
    # How each rendered tool definition is written: "json" or "python" (a Python literal).
    tools_notation: str = "json"
    # The definitions are not delimited: each is followed by this, and the turn's text by the
    # last one (they are read off the start of the text).
    tools_in_text: str = ""
    # Tool results are written as JSON strings (their text is unescaped when read).
    tool_content_json: bool = False
    # Footers made of whitespace alone, per role: no delimiter, so at the end of a text they
    # stay in the last message's content until the reader gives them back.
    loose_footers: dict[str, str] = field(default_factory=dict)


def spellings(text: str, *, trailing_optional: bool = False, leading_optional: bool = False) -> tuple[str, ...]:
    """``text`` and, where asked, the same without its trailing or leading whitespace."""
    out = {text}
    if trailing_optional and text.rstrip(WHITESPACE):
        out.add(text.rstrip(WHITESPACE))
    if leading_optional and text.lstrip(WHITESPACE):
        out |= {s.lstrip(WHITESPACE) for s in set(out)}
    return tuple(sorted(out, key=lambda s: (len(s), s)))


def terminal(name: str, options: tuple[str, ...] | list[str]) -> str:
    """A Lark terminal definition spelling each option literally."""
    literal = " | ".join(_lark_string(option) for option in sorted(set(options), key=lambda s: (-len(s), s)))
    return f"{name}: {literal}"


def _lark_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def grammar_piece(framing: Framing, reserved: frozenset[str] = frozenset()) -> FramingPiece:
    """The ``transcript`` rule and terminals of a framing (``completion`` comes from elsewhere).

    ``reserved`` are spellings other pieces use (reasoning tags, call delimiters). The lexer
    needs every spelling to name one terminal, so an optional part of the framing that would
    share a spelling with a more important one is left out.
    """
    headers = dict(framing.headers)
    footers = dict(framing.footers)
    lead = framing.lead
    if headers.get("assistant") and not headers["assistant"].strip(WHITESPACE):
        # Whitespace alone before an answer is no header: the answer follows the previous
        # turn's end (Llama 2's " " after "[/INST]").
        lead = lead or headers["assistant"]
        headers["assistant"] = ""
    # A footer made of whitespace alone is not a delimiter (content may hold the same text):
    # it becomes an optional part of the header that follows.
    loose = {role: footer for role, footer in footers.items() if footer and not footer.strip(WHITESPACE)}
    for role in loose:
        footers[role] = ""
    header_options: dict[str, set[str]] = {}
    for role, written in headers.items():
        if not written:
            continue
        options = {written}
        for gap in set(loose.values()):
            options.add(gap + written)
        if role == "assistant" and framing.assistant_after_tool:
            options.add(framing.assistant_after_tool)
        if role == "assistant" and framing.generation_prompt and written.startswith(framing.generation_prompt):
            # The prompt stops inside the header (``assistant:`` before the space the turn has).
            options |= {option[: len(option) - len(written) + len(framing.generation_prompt)] for option in set(options)}
        header_options[role] = options
    footer_options: dict[str, set[str]] = {}
    for role, written in footers.items():
        if written:
            footer_options[role] = set(spellings(written, trailing_optional=True))
    if framing.end:
        footer_options["assistant"] = set(framing.end) | footer_options.get("assistant", set())

    # Parts spelled alike are one terminal; the first name in _NAMES wins.
    names: dict[tuple[str, str], str] = {}
    by_spelling: dict[frozenset[str], str] = {}
    definitions: dict[str, set[str]] = {}
    for (role, part), name in _NAMES.items():
        found = (header_options if part == "header" else footer_options).get(role)
        if not found:
            continue
        options = found
        if not options:
            continue
        key = frozenset(options)
        if key in by_spelling:
            names[(role, part)] = by_spelling[key]
            continue
        by_spelling[key] = name
        names[(role, part)] = name
        definitions[name] = set(options)
    _merge_overlaps(names, definitions)
    for plain_spelling, with_tools in framing.tools_variants:
        for options in definitions.values():
            if plain_spelling in options:
                options.add(with_tools)
    claimed = set(reserved).union(*definitions.values()) if definitions else set(reserved)

    def optional(name: str, options: set[str]) -> str | None:
        """Add an optional part unless one of its spellings is taken; a part spelled exactly
        like another optional part with no role of its own shares that part's terminal."""
        options = {option for option in options if option}
        if not options:
            return None
        for other in SHAREABLE:
            if definitions.get(other) == options:
                return other
        if options & claimed:
            return None
        definitions[name] = options
        claimed.update(options)
        return name

    variants = dict(framing.tools_variants)
    prefix_terminal = (
        optional("PREFIX", {framing.prefix, variants.get(framing.prefix, framing.prefix)}) if framing.prefix else None
    )
    default_system_terminal = (
        optional("DEFAULT_SYSTEM", {framing.default_system, variants.get(framing.default_system, framing.default_system)})
        if framing.default_system
        else None
    )
    block = framing.tools_block
    tool_separator_terminal = None
    tools_end_terminal = "TOOLS_END"
    definitions_in_text = ""
    if block is not None:
        begins = {block.begin} | ({block.begin_alone} if block.begin_alone else set())
        ends = {block.end} | ({block.end_alone} if block.end_alone else set())
        separator_ok = not block.separator or block.separator not in begins | ends
        in_text_ok = block.placement == "user" or (block.placement == "after" and names.get(("system", "footer")))
        if block.separator and ends == {block.separator} and in_text_ok and begins.isdisjoint(claimed):
            # Each definition ends like the last (Llama 3.1's blank line after each, then the
            # user's text): only the opening is a delimiter, the definitions are read off the
            # start of the turn's text.
            optional("TOOLS_BEGIN", begins)
            definitions_in_text = block.separator
        elif (
            block.placement == "turn"
            and separator_ok
            and begins.isdisjoint(claimed)
            and (shared_end := next((n for n, o in definitions.items() if ends <= o and n.endswith("END")), None))
        ):
            # A turn of its own that ends like the others (Granite's ``<|end_of_text|>``).
            optional("TOOLS_BEGIN", begins)
            tools_end_terminal = shared_end
            if block.separator:
                tool_separator_terminal = optional("TOOL_SEPARATOR", {block.separator})
                if tool_separator_terminal is None:
                    block = None
        elif not (separator_ok and begins.isdisjoint(claimed) and ends.isdisjoint(claimed | begins)):
            block = None
        else:
            optional("TOOLS_BEGIN", begins)
            optional("TOOLS_END", ends)
            if block.separator:
                tool_separator_terminal = optional("TOOL_SEPARATOR", {block.separator})
                if tool_separator_terminal is None:
                    block = None
    tool_separator = framing.tool_separator if "tool" in headers else ""
    tool_next = optional("TOOL_RESPONSE_NEXT", {tool_separator}) if tool_separator else None
    id_close_terminal = (
        optional("TOOL_ID_END", {framing.tool_id_close}) if framing.tool_id_close and "tool" in headers else None
    )
    id_open_terminal = (
        optional("TOOL_ID_OPEN", {framing.tool_id_open})
        if framing.tool_id_open and "tool" in headers and not tool_next and not id_close_terminal
        else None
    )
    name_close_terminal = None
    if framing.tool_name_close and "tool" in headers and not framing.tool_name_numbered:
        name_close_terminal = optional("TOOL_NAME_END", {framing.tool_name_close})
    elif framing.tool_name_close and "tool" in headers:
        # Numbered like the calls it answers (Kimi K3's `` index="1"<|sep|>`` after a call's
        # name and after a result's tool): the call syntax's spelling too, which the grammar
        # lets the two share (they are never taken in the same place).
        numbers = set(numbered(framing.tool_name_close))
        if not numbers & (claimed - reserved):
            definitions["TOOL_NAME_END"] = numbers
            claimed.update(numbers)
            name_close_terminal = "TOOL_NAME_END"
    lead_terminal = optional("LEAD", {lead}) if lead else None
    # (After a reasoning message that ends in the next message's header, the answer's opening
    # comes with the lead the template writes before it: Muse's `` to=user<|message|>``.)
    answer_open_terminal = (
        optional(
            "ANSWER_OPEN",
            {
                framing.answer_open,
                *ANSWER_OPEN_VARIANTS.get(framing.answer_open, ()),
                *((lead + framing.answer_open,) if lead else ()),
                # (Tags a prompt asks for are written on a line of their own too.)
                *((framing.answer_open + "\n",) if framing.answer_close else ()),
            },
        )
        if framing.answer_open
        else None
    )
    # (A blank line after it too: ERNIE 4.5 writes one between the answer and its calls.)
    answer_close_terminal = (
        optional("ANSWER_CLOSE", {before + framing.answer_close + after for before in ("", "\n") for after in ("", "\n", "\n\n")})
        if framing.answer_close
        else None
    )

    rules: list[str] = []
    if block is not None and block.placement == "prefix":
        top = [f"({prefix_terminal} | tools)?" if prefix_terminal else "tools?"]
    else:
        top = [f"{prefix_terminal}?"] if prefix_terminal else []
    in_footer = block is not None and block.placement == "footer"
    if default_system_terminal:
        top.append(f"{default_system_terminal}?")
    leading_text_role = None
    turns = []
    turn_roles: dict[str, str] = {}
    turn_ends: set[str] = set()
    assistant_start: set[str] = set()
    headless_after: set[str] = set()
    headless_user_after_system = False
    message_separators: set[str] = set()
    if block is not None and definitions_in_text:
        # In the user's turn the definitions run into the user's text; at the end of the
        # system turn they are all the text up to its footer.
        rules.append("tools: TOOLS_BEGIN" + (" TOOL_DEFINITIONS?" if block.placement == "after" else ""))
    elif block is not None:
        separator = f" ({tool_separator_terminal} TOOL_DEFINITION?)*" if tool_separator_terminal else ""
        rules.append(f"tools: TOOLS_BEGIN TOOL_DEFINITION?{separator} {tools_end_terminal}")

    def body(role: str) -> str:
        if block is not None and role == "system" and block.placement in ("before", "after"):
            return "tools? CONTENT?" if block.placement == "before" else "(CONTENT | CONTENT? tools)?"
        if block is not None and role == "user" and block.placement == "user":
            return "tools? CONTENT?"
        return "CONTENT?"

    assistant_header = names.get(("assistant", "header"))
    for role in ("system", "user", "tool", "assistant"):
        if role not in headers:
            continue
        if role == "system" and framing.system != "turn":
            if framing.system == "leading":
                leading_text_role = "system"
                system_footer = names.get(("system", "footer"))
                leading = body("system")
                if system_footer:
                    top.append(f"({leading} {system_footer})?")
                    turn_ends.add(system_footer)
                else:
                    top.append(leading)
            continue
        header = names.get((role, "header"))
        footer = names.get((role, "footer"))
        if role == "assistant":
            if header:
                turns.append("assistant_turn")
                rules.append(f"assistant_turn: {header} completion")
                turn_roles[header] = "assistant"
                assistant_start.add(header)
            continue
        if header is None:
            continue
        rule = f"{role}_turn: {header} {body(role)}"
        if role == "system" and framing.system_opens_user and names.get(("user", "footer")):
            rest = f"CONTENT? {names[('user', 'footer')]}" + (" completion" if not assistant_header else "")
            rules.append(f"user_rest: {rest}")
            if footer:
                rule += f" {footer}"
                turn_ends.add(footer)
            rule += " user_rest?"
            headless_user_after_system = True
            turns.append("system_turn")
            rules.append(rule)
            turn_roles[header] = role
            continue
        if role == "tool" and id_close_terminal:
            rule = f"{role}_turn: {header} TOOL_CALL_ID? {id_close_terminal} {body(role)}"
        elif role == "tool" and name_close_terminal:
            rule = f"{role}_turn: {header} TOOL_RESPONSE_NAME? {name_close_terminal} {body(role)}"
        if role == "tool" and tool_next:
            message_separators.add(tool_next)
            rule += f" ({tool_next} CONTENT?)*"
        if role == "tool" and id_open_terminal:
            rule += f" {id_open_terminal} TOOL_CALL_ID?"
        if footer and role == "system" and in_footer:
            rule += f" ({footer} | tools)"  # the block ends the turn, its footer in its end
            turn_ends.add(footer)
        elif footer:
            rule += f" {footer}"
            turn_ends.add(footer)
        if not assistant_header and role in ("user", "tool"):
            # No assistant header: the assistant's answer follows this turn's end directly.
            rule += " completion"
            headless_after.add(role)
            if footer:
                assistant_start.add(footer)
        turns.append(f"{role}_turn")
        rules.append(rule)
        turn_roles[header] = role
    end_name = names.get(("assistant", "footer"))
    if end_name:
        turn_ends.add(end_name)
    if not turns:
        raise GrammarError(f"framing {framing.name!r} has no turn with a header")
    if block is not None and block.placement == "turn":
        turns.append("tools")  # a turn of its own, where the template puts it
    transcript = "transcript: " + " ".join([*top, "turn*"])
    lines = [transcript, "?turn: " + " | ".join(turns), *rules]
    lines += [terminal(name, sorted(options)) for name, options in definitions.items()]
    declared = ["CONTENT"] + (["TOOL_DEFINITION"] if block is not None and not definitions_in_text else [])
    declared += ["TOOL_DEFINITIONS"] if block is not None and definitions_in_text and block.placement == "after" else []
    declared += ["TOOL_CALL_ID"] if id_close_terminal or id_open_terminal else []
    declared += ["TOOL_RESPONSE_NAME"] if name_close_terminal and not id_close_terminal else []
    lines.append("%declare " + " ".join(declared))
    return FramingPiece(
        grammar="\n".join(lines) + "\n",
        turn_roles=turn_roles,
        turn_ends=frozenset(turn_ends),
        message_separators=frozenset(message_separators),
        tools_begin=frozenset({"TOOLS_BEGIN"}) if block is not None else frozenset(),
        tools_end=frozenset({"TOOLS_END"}) if block is not None else frozenset(),
        assistant_start=frozenset(assistant_start),
        end=frozenset({end_name}) if end_name else frozenset(),
        leading_text_role=leading_text_role,
        headless_assistant_after=frozenset(headless_after),
        headless_user_after_system=headless_user_after_system,
        tools_alone=frozenset({block.begin_alone}) if block is not None and block.begin_alone else frozenset(),
        tools_wrap_function=block.wraps_function if block is not None else False,
        tools_notation=block.notation if block is not None else "json",
        tools_in_text=definitions_in_text,
        tool_content_json=framing.tool_content_json and "tool" in headers,
        default_system_terminal=default_system_terminal,
        prefix_terminal=prefix_terminal,
        lead_terminal=lead_terminal,
        answer_open_terminal=answer_open_terminal,
        answer_close_terminal=answer_close_terminal,
        loose_footers=loose,
    )


def _merge_overlaps(names: dict[tuple[str, str], str], definitions: dict[str, set[str]]) -> None:
    """Two parts that share a spelling cannot be told apart by the lexer: they become one
    terminal with the spellings of both (footers of two roles that differ only in whitespace)."""
    changed = True
    while changed:
        changed = False
        items = list(definitions.items())
        for i, (a, spell_a) in enumerate(items):
            for b, spell_b in items[i + 1 :]:
                if spell_a & spell_b:
                    definitions[a] = spell_a | spell_b
                    del definitions[b]
                    for key, name in names.items():
                        if name == b:
                            names[key] = a
                    changed = True
                    break
            if changed:
                break


def describe(text: str) -> str:
    """A delimiter as a short readable literal."""
    return repr(text) if len(text) <= 60 else repr(text[:40]) + f"… ({len(text)} characters)"


_NEWLINES = re.compile(r"\n+")
