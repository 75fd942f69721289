"""Reasoning syntaxes and call syntaxes: the grammar pieces of an assistant's output.

A format is a turn framing plus one ``ReasoningSyntax`` (or none) plus one ``CallSyntax`` (or
none). Each names its grammar piece (a Lark file in ``grammars/``, or text built from the
tags a template writes), the terminals that play each part, and, for calls, the reader class
that turns a call's text into a name and arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chatcodec.formats.framing import terminal
from chatcodec.resources import grammar_text


@dataclass(frozen=True)
class ReasoningSyntax:
    """Reasoning between an opening and a closing tag, spelled as the template writes them."""

    open_tag: str
    close_tag: str
    # Whitespace the template writes after the opening tag and around the closing one.
    open_spellings: tuple[str, ...]
    close_spellings: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.open_tag}…{self.close_tag}"

    def grammar(self) -> str:
        return "\n".join(
            [
                grammar_text("reasoning/think"),
                terminal("THINK_OPEN", self.open_spellings),
                terminal("THINK_CLOSE", self.close_spellings),
            ]
        )

    @classmethod
    def from_tags(cls, open_tag: str, close_tag: str, *, newlines_after_close: int = 2) -> ReasoningSyntax:
        """Tags with the whitespace templates put around them: a newline may follow the opening
        tag and precede the closing one, and up to ``newlines_after_close`` follow it."""
        opens = (open_tag, open_tag + "\n")
        closes = tuple(
            lead + close_tag + "\n" * count for lead in ("", "\n") for count in range(newlines_after_close + 1)
        )
        return cls(open_tag, close_tag, opens, closes)


# Reasoning tags of the field, tried against a template that does not render reasoning itself
# (its generation prompt or its source still shows which tags the model writes).
KNOWN_REASONING_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<seed:think>", "</seed:think>"),
    ("<thinking>", "</thinking>"),
    ("<thought>", "</thought>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("◁think▷", "◁/think▷"),
    ("<|channel>thought", "<channel|>"),
)


@dataclass(frozen=True)
class CallSyntax:
    """How a model writes tool calls: a grammar piece defining ``calls``, the terminals that
    open and close one call, and the reader that reads a call's body."""

    name: str
    grammar_file: str
    reader: str  # a key of chatcodec.parse.calls.READERS
    call_open: frozenset[str]
    call_close: frozenset[str]
    description: str

    def grammar(self) -> str:
        return grammar_text(self.grammar_file)

    def delimiters(self) -> list[str]:
        """The literal spellings of the piece's delimiters (to recognise them in a template)."""
        return re.findall(r'^[A-Z_]+: "(.*)"$', self.grammar(), re.MULTILINE)


HERMES = CallSyntax(
    name="hermes",
    grammar_file="calls/hermes",
    reader="json_object",
    call_open=frozenset({"CALL_OPEN"}),
    call_close=frozenset({"CALL_CLOSE"}),
    description='<tool_call>{"name": …, "arguments": {…}}</tool_call>',
)
DEEPSEEK = CallSyntax(
    name="deepseek",
    grammar_file="calls/deepseek",
    reader="name_then_arguments",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    description="<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…",
)
DEEPSEEK_V3 = CallSyntax(
    name="deepseek_v3",
    grammar_file="calls/deepseek_v3",
    reader="name_then_arguments",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    description="<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{…}\\n```<｜tool▁call▁end｜>",
)
CALL_SYNTAXES: dict[str, CallSyntax] = {syntax.name: syntax for syntax in (HERMES, DEEPSEEK, DEEPSEEK_V3)}
