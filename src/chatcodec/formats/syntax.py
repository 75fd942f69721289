"""Reasoning syntaxes: the reasoning part of an assistant's output.

A format is a turn framing plus one ``ReasoningSyntax`` (or none) plus one ``CallSyntax``
(``chatcodec.formats.calls``, or none). A reasoning syntax is the grammar piece
``grammars/reasoning/think.lark`` with the tags a template writes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

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

    def with_openings(self, openings: tuple[str, ...]) -> ReasoningSyntax:
        """The same tags, also opened by each of ``openings`` (written as is)."""
        extra = tuple(spelling for spelling in openings if spelling not in self.open_spellings)
        return replace(self, open_spellings=self.open_spellings + extra)

    def with_closings(self, closings: tuple[str, ...]) -> ReasoningSyntax:
        """The same tags, also closed by each of ``closings`` (written as is, with no whitespace
        around: shorter spellings the template never writes but models do)."""
        extra = tuple(spelling for spelling in closings if spelling not in self.close_spellings)
        return replace(self, close_spellings=self.close_spellings + extra)

    @classmethod
    def from_phrases(cls, opening: tuple[str, ...], closing: tuple[str, ...]) -> ReasoningSyntax:
        """Reasoning opened and closed by phrases, each written one of several ways (the first
        is the one the template names)."""
        spellings = [cls.from_tags(open_tag, close_tag) for open_tag, close_tag in zip(opening, closing)]
        return cls(
            opening[0],
            closing[0],
            tuple(spelling for syntax in spellings for spelling in syntax.open_spellings),
            tuple(spelling for syntax in spellings for spelling in syntax.close_spellings),
        )

    @classmethod
    def from_tags(cls, open_tag: str, close_tag: str, *, newlines_after_close: int = 2) -> ReasoningSyntax:
        """Tags with the whitespace templates and models put around them: a newline may follow
        the opening tag (and whitespace precede it) and precede the closing one, and up to
        ``newlines_after_close`` follow it."""
        opens = opening_spellings(open_tag)
        closes = tuple(
            lead + close_tag + "\n" * count for lead in ("", "\n") for count in range(newlines_after_close + 1)
        )
        return cls(open_tag, close_tag, opens, closes)


# Whitespace a model writes before its opening tag: up to three spaces and newlines. (A longer
# run is kept as content: the spellings are literals, and each one more is looked for.)
_LEADING_WHITESPACE: tuple[str, ...] = ("",) + tuple(
    "".join(chars) for length in (1, 2, 3) for chars in itertools.product(" \n", repeat=length)
)


def opening_spellings(open_tag: str) -> tuple[str, ...]:
    """An opening tag as models write it: a newline may follow it, and whitespace precede it
    ("\n<think>", "\n\n\n<think>"; a prompt that opened the block may see it written again)."""
    return tuple(lead + open_tag + tail for lead in _LEADING_WHITESPACE for tail in ("", "\n"))

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
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
)

# What a model writes beside the opening tag a template renders: gpt-oss may begin with a
# header it then supersedes (llama.cpp's "commentary to=assistant before reasoning" case), the
# next ``<|channel|>`` being the one that counts.
OPENING_VARIANTS: dict[str, tuple[str, ...]] = {
    # Gemma 4's channel token with its name left out (vLLM's tests read it so): the token only
    # ever opens a channel, and the thought channel is the one a model's answer has.
    "<|channel>thought": ("<|channel>",),
    "<|channel|>analysis<|message|>": (
        "<|channel|>commentary to=assistant<|channel|>analysis<|message|>",
        # A message's header with its role left out (the prompt wrote ``<|start|>assistant``).
        "<|start|><|channel|>analysis<|message|>",
        # The prompt's header written again (the model began a message of its own).
        "<|start|>assistant<|channel|>analysis<|message|>",
    ),
}

# Reasoning tags a model writes that its template never does, told by a line of the template
# (the model's name in its default system prompt). MiniMax-M1 thinks in <think>…</think> before
# every answer, as vLLM's MiniMax parsers read it; its template shows no reasoning at all.
MODEL_REASONING_TAGS: tuple[tuple[str, tuple[str, str]], ...] = (
    ("based on MiniMax-M1 model", ("<think>", "</think>")),
)

# Tags around the visible answer, after the reasoning, that a system prompt may ask for.
KNOWN_ANSWER_TAGS: tuple[tuple[str, str], ...] = (
    ("<response>", "</response>"),
    ("<|open|>response<|sep|>", "<|close|>response<|sep|>"),  # Kimi K3, which writes them itself
)

# Reasoning a template's system prompt asks for in words (Granite 3.2: "Write your thoughts
# after 'Here is my thought process:' and write your response after 'Here is my response:'"),
# each phrase with the contraction models also write.
KNOWN_REASONING_PHRASES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("Here is my thought process:", "Here's my thought process:"),
        ("Here is my response:", "Here's my response:"),
    ),
)
