"""Special tokens inside the caller's text: where injected turns and calls come from.

A template writes its special tokens (``<|im_start|>``, ``<|eot_id|>``, ``[INST]``) around the
caller's messages; a tokenizer then reads them as tokens wherever they occur. Text that spells
one (in a message, a tool definition, a template variable) becomes a turn marker the user or a
web page wrote. This module finds them before the model sees them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import jinja2
import jinja2.nodes

from chatcodec.errors import InvalidMessageError

OnSpecialTokens = Literal["report", "error", "ignore"]

# The shapes special tokens come in: <|im_start|>, <｜User｜>, [INST], <|turn>, <channel|>.
TOKEN_SHAPE = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?[A-Z][A-Z_]{1,30}\]|<\|[^|<>\s]{1,40}>|<[^|<>\s]{1,40}\|>"
)


class SpecialTokenWarning(UserWarning):
    """The caller's text spells a special token of the template (``on_special_tokens="report"``)."""


class SpecialTokenError(InvalidMessageError):
    """The caller's text spells a special token of the template (``on_special_tokens="error"``)."""


@dataclass(frozen=True)
class SpecialTokenFinding:
    """``token`` found at ``position`` of the caller's field ``field`` (``messages[1].content``)."""

    field: str
    token: str
    position: int

    def __str__(self) -> str:
        return f"{self.field} holds {self.token!r} (at character {self.position})"


MAX_LEADS = 16  # first characters looked for one by one; with more, the regex alone


@dataclass(frozen=True)
class TokenPattern:
    """The special tokens of a template, as one regex, and the characters they begin with."""

    regex: re.Pattern[str]
    leads: tuple[str, ...]

    def search(self, text: str) -> re.Match[str] | None:
        """The first token in ``text``. The regex is started at the first character a token
        begins with: ``re`` scans for an alternation (or a class) at about 10 ns a character,
        ``str.find`` of one character at a small fraction of that, and most text holds none."""
        if len(self.leads) > MAX_LEADS:
            return self.regex.search(text)
        start = len(text)
        for lead in self.leads:
            at = text.find(lead, 0, start)
            if at >= 0:
                start = at
        return self.regex.search(text, start) if start < len(text) else None


@lru_cache(maxsize=256)
def template_tokens(source: str, special_tokens: tuple[str, ...]) -> TokenPattern | None:
    """A pattern of the special tokens a template writes (the token-shaped text in its string
    literals) and its tokenizer's special tokens; None when there are none."""
    tokens = {token for token in special_tokens if token.strip()}
    try:
        tree = jinja2.Environment().parse(source)
    except (jinja2.TemplateSyntaxError, RecursionError):
        tree = None
    if tree is not None:
        for node in tree.find_all((jinja2.nodes.Const, jinja2.nodes.TemplateData)):
            value = node.value if isinstance(node, jinja2.nodes.Const) else getattr(node, "data", None)
            if isinstance(value, str):
                tokens.update(TOKEN_SHAPE.findall(value))
    if not tokens:
        return None
    regex = re.compile("|".join(re.escape(token) for token in sorted(tokens, key=len, reverse=True)))
    return TokenPattern(regex, tuple(sorted({token[0] for token in tokens})))


def find_special_tokens(
    pattern: TokenPattern | None,
    messages: Iterable[Mapping[str, Any]],
    tools: Iterable[Any] | None = None,
    variables: Mapping[str, Any] | None = None,
) -> list[SpecialTokenFinding]:
    """Every special token spelled inside the caller's messages, tools and variables."""
    if pattern is None:
        return []
    messages = list(messages)
    tools = list(tools) if tools is not None else None
    roots: list[tuple[Any, str]] = [(message, f"messages[{i}]") for i, message in enumerate(messages)]
    roots += [(tool, f"tools[{i}]") for i, tool in enumerate(tools or [])]
    roots += [(value, f"variables.{name}") for name, value in (variables or {}).items()]
    # The usual answer is "none": one search over all the strings joined says so at C speed;
    # only a hit walks the fields again to name them.
    if pattern.search("\x00".join(_strings([value for value, _ in roots]))) is None:
        return []
    found: list[SpecialTokenFinding] = []
    pending = roots[::-1]
    seen: set[int] = set()
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            found += [SpecialTokenFinding(where, match.group(), match.start()) for match in pattern.regex.finditer(value)]
        elif isinstance(value, Mapping | list | tuple) and _first_visit(value, seen):
            if isinstance(value, Mapping):
                pending += [(item, f"{where}.{key}") for key, item in reversed(list(value.items()))]
            else:
                pending += [(item, f"{where}[{i}]") for i, item in reversed(list(enumerate(value)))]
    return found


_SCALARS = (int, float, bool, type(None))


def _first_visit(container: object, seen: set[int]) -> bool:
    # A value that contains itself is walked once.
    if id(container) in seen:
        return False
    seen.add(id(container))
    return True


QUICK_WALK_NODES = 100_000  # values the walk without bookkeeping visits before it gives up


def _strings(roots: list[Any]) -> list[str]:
    """Every string value in ``roots`` (through mappings, lists and tuples)."""
    # Plain dicts and lists of strings, walked without remembering what was seen: a container
    # met twice is walked twice (harmless), one that contains itself runs out the count and
    # the careful walk below takes over.
    strings: list[str] = []
    pending = list(roots)
    pop, extend, add = pending.pop, pending.extend, strings.append
    left = QUICK_WALK_NODES
    while pending:
        value = pop()
        kind = type(value)
        if kind is str:
            add(value)
        elif kind is dict:
            extend(value.values())
        elif kind is list:
            extend(value)
        elif kind not in _SCALARS:
            return _strings_once(roots)  # another kind of container: the careful walk
        left -= 1
        if left < 0:
            return _strings_once(roots)
    return strings


def _strings_once(roots: list[Any]) -> list[str]:
    """Every string value in ``roots`` (through mappings, lists and tuples), each container once."""
    strings: list[str] = []
    pending = list(roots)
    seen: set[int] = set()
    while pending:
        value = pending.pop()
        kind = type(value)
        if kind is str:
            strings.append(value)
        elif kind is dict:
            if id(value) not in seen:
                seen.add(id(value))
                pending.extend(value.values())
        elif kind is list:
            if id(value) not in seen:
                seen.add(id(value))
                pending.extend(value)
        elif kind in _SCALARS:
            continue
        elif isinstance(value, str):
            strings.append(value)
        elif isinstance(value, Mapping | list | tuple) and _first_visit(value, seen):
            pending.extend(value.values() if isinstance(value, Mapping) else value)
    return strings


def describe_findings(findings: list[SpecialTokenFinding], template: str) -> str:
    shown = "; ".join(str(finding) for finding in findings[:3])
    more = f" and {len(findings) - 3} more" if len(findings) > 3 else ""
    return (
        f"{shown}{more}: special tokens of template {template!r}, which a tokenizer reads as turn markers "
        "(on_special_tokens='ignore' allows them, 'error' refuses them)"
    )
