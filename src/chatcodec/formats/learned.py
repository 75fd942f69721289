"""A call syntax learned from a template's own rendering, where no known syntax reads it.

Most call syntaxes a new model brings are a known shape with tags of its own: a call's JSON
object (``{"name": …, "arguments": {…}}``) between an opening and a closing tag, or a list of
them, or either after an opening tag to the end of the answer (LongCat's
``<longcat_tool_call>…</longcat_tool_call>`` is Hermes' shape). The template writes the probe
call; the JSON object of that call is found in the text, and the tags are what stands right
before and after it. The caller keeps such a syntax only if it reads the template's calls back
exactly, as for every known one.
"""

from __future__ import annotations

import json

from chatcodec.formats.calls import CallSyntax, around, json_list_between, spelled
from chatcodec.formats.framing import WHITESPACE

_DECODER = json.JSONDecoder()
_LONGEST_TAG = 60


def learned_json_syntax(rendered: str, tool: str, arguments: dict[str, object], footer: str) -> CallSyntax | None:
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
    rest = rendered[end:].lstrip(WHITESPACE)
    turn_end = footer.strip(WHITESPACE)
    closing = _first_tag(rest, turn_end)
    if not rest or (turn_end and rest.startswith(turn_end)) or closing is None:
        return _after_tag(opening, listed)
    return _between(opening, closing, listed)


def _call_json(text: str, tool: str, arguments: dict[str, object]) -> tuple[int, int] | None:
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
