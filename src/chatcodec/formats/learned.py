"""Call syntaxes learned from a template's own rendering, where no known syntax reads it.

Most call syntaxes a new model brings are a known shape with tags of its own:

- a call's JSON object (``{"name": …, "arguments": {…}}``) between an opening and a closing
  tag, or a list of them, or either after an opening tag to the end of the answer (LongCat's
  ``<longcat_tool_call>…</longcat_tool_call>`` is Hermes' shape);
- the name, then the arguments' JSON object, between tags (Functionary's ``<function=NAME>{…}``);
- the name and each parameter's name and value in tags (Qwen3-Coder's ``<function=NAME>`` and
  ``<parameter=KEY>``, GLM's ``<arg_key>``/``<arg_value>``: LongCat-Flash-Thinking's
  ``<longcat_arg_key>``).

The template writes the probe call; its name, its argument's name and value (or its JSON
object) are found in the text, and the tags are what stands around them. The caller keeps a
syntax only if it reads the template's calls back exactly, as for every known one.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import partial
from collections.abc import Mapping

from chatcodec.formats.calls import CallSyntax, around, json_list_between, spelled, xml_syntax
from chatcodec.formats.framing import WHITESPACE

_DECODER = json.JSONDecoder()
# Closing tags one after another, whitespace between them (``</function>\n</tool_call>``).
_CLOSING_TAGS = re.compile(r"</[^<>\s]{1,58}>(?:\s*</[^<>\s]{1,58}>)*")
_LONGEST_TAG = 60
_CLOSER = {"<": ">", "[": "]"}
_ONE_TAG = re.compile(r"<[^<>\s]{1,58}>|\[[^\[\]\s]{1,58}\]")


def learned_json_syntax(rendered: str, tool: str, arguments: Mapping[str, object], footer: str) -> CallSyntax | None:
    """The syntax of a rendered answer holding one call of ``tool`` with ``arguments`` as a
    JSON object (alone or in a list) after a tag, and before another tag or the turn's
    ``footer``; None where the render is not of that shape."""
    found = _call_json(rendered, tool, arguments)
    if found is None:
        return None
    start, end = found
    listed = False
    before = rendered[:start].rstrip(WHITESPACE)
    if before.endswith("["):
        # A list of calls: the list is what stands between the tags.
        try:
            _, list_end = _DECODER.raw_decode(rendered, len(before) - 1)
        except ValueError:
            return None
        before, end, listed = before[:-1].rstrip(WHITESPACE), list_end, True
    opening = _last_tag(before)
    if opening is None:
        return None
    closing = _closing_after(rendered[end:], footer.strip(WHITESPACE))
    return _between(opening, closing, listed) if closing else _after_tag(opening, listed)


def _call_json(text: str, tool: str, arguments: Mapping[str, object]) -> tuple[int, int] | None:
    """Where the call's JSON object stands: its name and its arguments (or parameters)."""
    at = text.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            value, end = None, at + 1
        if (
            isinstance(value, dict)
            and value.get("name") == tool
            and arguments in (value.get("arguments"), value.get("parameters"))
        ):
            return at, end
        at = text.find("{", at + 1)
    return None


def _tag(text: str) -> bool:
    """A tag, not a word: short, no whitespace, in angle or square brackets."""
    return (
        0 < len(text) <= _LONGEST_TAG
        and not any(char in text for char in WHITESPACE)
        and text[0] in "<[" and text[-1] in ">]"
    )


def _last_tag(text: str) -> str | None:
    """The tag the text ends with (after the reasoning block or answer text before it)."""
    if not text:
        return None
    last = text.split()[-1]
    # (Tags written together, ``<|action_start|><|plugin|>``, are one opening; a reasoning
    # block's closing tag right before them is not part of it.)
    while last.startswith("</") and ">" in last[:-1]:
        last = last[last.index(">") + 1 :]
    return last if _tag(last) and not last.startswith("</") else None


def _first_tag(text: str, turn_end: str) -> str | None:
    """The tag the text begins with, up to the turn's end where that follows it at once."""
    first = text.split()[0] if text.strip(WHITESPACE) else ""
    if turn_end and turn_end in first[1:]:
        first = first[: first.index(turn_end, 1)]
    return first if _tag(first) else None


def _description(opening: str, closing: str, listed: bool) -> str:
    call = '{"name": …, "arguments": {…}}'
    return f"{opening}{'[' + call + ', …]' if listed else call}{closing}"


def _between(opening: str, closing: str, listed: bool) -> CallSyntax:
    description = _description(opening, closing, listed) + " (learned from the template)"
    if listed:
        return json_list_between("json_list_in_tags", opening, closing, description)
    return CallSyntax(
        name="json_in_tags",
        piece="object_or_list_in_tags",
        reader="json_object_or_list",
        description=description,
        spellings=spelled(
            ("CALL_OPEN", around(opening, before="\n", after="\n")),
            ("CALL_CLOSE", around(closing, before="\n", after="\n")),
        ),
        markers=(opening,),
    )


def _after_tag(opening: str, listed: bool) -> CallSyntax:
    if listed:
        return CallSyntax(
            name="json_list_after_tag",
            piece="list_after_tag",
            reader="json_list",
            description=_description(opening, "", True) + " (learned from the template)",
            closes_at_end=True,
            spellings=spelled(("CALL_OPEN", around(opening, before="\n", after="\n"))),
            markers=(opening,),
        )
    return CallSyntax(
        name="json_after_tag",
        piece="object_after_tag",
        reader="json_object",
        description=_description(opening, "", False) + " (learned from the template)",
        call_close=frozenset({"CALL_OPEN"}),  # (the next call's tag ends a call)
        closes_at_end=True,
        spellings=spelled(("CALL_OPEN", around(opening, before="\n", after="\n"))),
        markers=(opening,),
    )


def learned_named_syntaxes(
    rendered: str, tool: str, key: str, value: str, footer: str, *, two: str | None = None, second: str = ""
) -> list[CallSyntax]:
    """Syntaxes that write the call's name in the open, then either the arguments' JSON object
    or each parameter in tags: those the render of one call (``tool`` with ``key`` set to the
    string ``value``) may be written in, to be tried in order. ``two``, a render of that call
    and a call of ``second`` after it, tells a section around the calls from each call's tags."""
    name_at = rendered.find(tool)
    if name_at < 0:
        return []
    opening = _opening_before(rendered[:name_at])
    if opening is None:
        return []
    after_name = rendered[name_at + len(tool) :]
    turn_end = footer.strip(WHITESPACE)
    found = [_json_after_name(opening, after_name, json.dumps({key: value}), turn_end)]
    found += _parameter_tags(opening, after_name, key, value, turn_end, (two, tool, second))
    return [syntax for syntax in found if syntax is not None]


def _json_after_name(opening: str, after_name: str, arguments: str, turn_end: str) -> CallSyntax | None:
    """The name, a separator, then the arguments' JSON object (``arguments`` as written)."""
    separator_end = after_name.find("{")
    if separator_end < 0 or not after_name.startswith(arguments, separator_end):
        return None
    separator = after_name[:separator_end].strip(" ")
    if not (separator.strip(WHITESPACE) or "\n" in separator):
        return None
    return _name_then_json(opening, separator, _closing_after(after_name[separator_end + len(arguments) :], turn_end))


def _parameter_tags(
    opening: str, after_name: str, key: str, value: str, turn_end: str, two_calls: tuple[str | None, str, str]
) -> list[CallSyntax]:
    """The name's end, then the parameter in tags (``<parameter=KEY>VALUE</parameter>``), and
    the call's closing; in a section of its own too, where a render of two calls shows one."""
    key_at = after_name.find(key)
    value_at = after_name.find(value, key_at + len(key)) if key_at >= 0 else -1
    param_at = after_name.rfind("<", 0, key_at) if value_at >= 0 else -1
    if param_at < 0:
        return []
    name_end, param_open = after_name[:param_at].strip(WHITESPACE), after_name[param_at:key_at]
    param_name_end = after_name[key_at + len(key) : value_at]
    tail = after_name[value_at + len(value) :].lstrip(WHITESPACE)
    one_tag = _ONE_TAG.match(tail)
    if one_tag is None or not param_name_end.strip(WHITESPACE) or len(param_open) > _LONGEST_TAG:
        return []
    param_close = one_tag.group()
    call_close = _closing_after(tail[len(param_close) :], turn_end)
    if not call_close:
        return []
    parts = (name_end, param_open, param_name_end, param_close)
    two, tool, second = two_calls
    split = _section(opening, call_close, two, tool, value, param_close, second)
    sectioned = [_parameters(split[0], *parts, split[1], section=split[2])] if split is not None and name_end else []
    return [*sectioned, _parameters(opening, *parts, call_close)]


def _tokens(text: str) -> list[str]:
    """The tags of an opening or closing, in order (``<function_calls>\n<invoke name="`` is
    two), the whitespace between them left out."""
    return [token.strip(WHITESPACE) for token in re.split(r"(?=[<\[])", text) if token.strip(WHITESPACE)]


def _section(
    opening: str, closing: str, two: str | None, tool: str, value: str, param_close: str, second: str
) -> tuple[str, str, tuple[str, str]] | None:
    """Where the calls of a turn stand in a section (``<function_calls>`` around the
    ``<invoke>`` of each): the call's own opening and closing, and the section's, read off a
    render of two calls (what stands between them is a call's closing and the next one's
    opening, without the section's tags)."""
    if two is None or not second:
        return None
    first_end = two.find(param_close, two.find(value, two.find(tool))) if tool in two else -1
    second_at = two.find(second, first_end) if first_end >= 0 else -1
    if second_at < 0:
        return None
    between = _tokens(two[first_end + len(param_close) : second_at])
    opens, closes = _tokens(opening), _tokens(closing)
    shared = 0
    while shared < min(len(opens), len(between)) and opens[-1 - shared] == between[-1 - shared]:
        shared += 1
    call_open, section_open = opens[len(opens) - shared :], opens[: len(opens) - shared]
    call_close = between[: len(between) - shared]
    if not (shared and section_open and call_close) or closes[: len(call_close)] != call_close or len(closes) == len(call_close):
        return None
    section_close = closes[len(call_close) :]
    return "\n".join(call_open), "\n".join(call_close), ("\n".join(section_open), "\n".join(section_close))


def _opening_before(text: str) -> str | None:
    """The opening a name follows: the tags the text ends with (``<tool_call>\n<function=``,
    ``<longcat_tool_call>``), after any closing tag (a reasoning block's) before them."""
    opening_lines: list[str] = []
    for line in reversed([line.strip(WHITESPACE) for line in text.split("\n") if line.strip(WHITESPACE)]):
        closed = max(line.rfind("</"), line.rfind("[/"))
        if closed >= 0:
            end = _CLOSER[line[closed]]
            line = line[line.find(end, closed) + 1 :] if end in line[closed:] else ""
        if not line or line[0].isalnum() or (" " in line and not (line[0] == "<" and line.count(" ") <= 3)):
            break  # (text: a tag's attributes are the only spaces an opening holds)
        opening_lines.insert(0, line)
        if closed >= 0:
            break  # (the opening starts after the closing tag)
    opening = "\n".join(opening_lines)
    return opening if 0 < len(opening) <= _LONGEST_TAG * 2 else None


def _closing_after(text: str, turn_end: str) -> str:
    """The closing tags right after a call's last part (``</function>\n</tool_call>``), or
    its one closing token (``[/CALL]``); "" where the turn's end follows at once."""
    text = text.lstrip(WHITESPACE)
    closing = _CLOSING_TAGS.match(text)
    if closing is not None:
        # (Up to the turn's end, which may be a closing tag too: Laguna's ``</assistant>``.)
        return closing.group().split(turn_end)[0].rstrip(WHITESPACE) if turn_end else closing.group()
    first = _first_tag(text, turn_end)
    return "" if first is None or (turn_end and first.startswith(turn_end)) else first


def _name_then_json(opening: str, separator: str, closing: str) -> CallSyntax:
    separators = around(separator, after="\n") if separator.strip(WHITESPACE) else (separator,)
    spellings = (("CALL_BEGIN", around(opening, before="\n")), ("CALL_SEP", separators))
    syntax = partial(
        CallSyntax,
        name="name_then_json",
        reader="name_then_arguments",
        description=f"{opening}NAME{separator}{{…}}{closing} (learned from the template)".replace("\n", "\\n"),
        call_open=frozenset({"CALL_BEGIN"}),
        markers=(opening,),
    )
    if closing:
        closings = ("CALL_END", around(closing, before="\n", after="\n"))
        return syntax(piece="name_arguments_plain", call_close=frozenset({"CALL_END"}), spellings=spelled(*spellings, closings))
    # The arguments run to the next call's opening or the answer's end (Mistral's
    # ``[TOOL_CALLS]NAME[ARGS]{…}``, Functionary v3.2's ``>>>NAME\n{…}``).
    return syntax(piece="name_json_to_end", call_close=frozenset({"CALL_BEGIN"}), closes_at_end=True, spellings=spelled(*spellings))


def _parameters(
    opening: str,
    name_end: str,
    param_open: str,
    param_name_end: str,
    param_close: str,
    call_close: str,
    *,
    section: tuple[str, str] | None = None,
) -> CallSyntax:
    def lines(text: str) -> tuple[str, ...]:
        return around(text, before="\n", after="\n")

    written = f"{opening}NAME{name_end}{param_open}KEY{param_name_end}VALUE{param_close}{call_close}"
    if section is not None:
        written = f"{section[0]}{written}…{section[1]}"
        syntax = xml_syntax(
            "xml_parameters_section",
            f"{written} (learned from the template)".replace("\n", "\\n"),
            calls_begin=lines(section[0]),
            calls_end=lines(section[1]),
            call_open=around(opening, before="\n"),
            name_end=lines(name_end),
            param_open=lines(param_open),
            param_name_end=lines(param_name_end.strip(WHITESPACE)),
            param_close=lines(param_close),
            call_close=lines(call_close),
            markers=(opening, param_open),
        )
        return replace(syntax, in_section=True)
    return xml_syntax(
        "xml_parameters",
        f"{written} (learned from the template)".replace("\n", "\\n"),
        call_open=around(opening, before="\n"),
        name_end=lines(name_end) if name_end else (),
        param_open=lines(param_open),
        param_name_end=lines(param_name_end.strip(WHITESPACE)),
        param_close=lines(param_close),
        call_close=lines(call_close),
        markers=(opening, param_open),
    )
