"""What a family module declares: its grammar, and which terminals play which part."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from chatcodec.grammar import FamilyGrammar, load_grammar

CallBody = Literal["object", "name_then_arguments"]


@dataclass(frozen=True)
class Family:
    """One wire format. Delimiter *spellings* live in ``grammars/<grammar>.lark``; this names
    the terminals' roles and what the template does around them."""

    name: str
    grammar_name: str
    # Literals whose presence in a template's source identifies the family (all must appear).
    signature: tuple[str, ...]
    # How a tool call's body is written: one JSON object with name and arguments (Hermes,
    # Qwen), or a name, a separator and the arguments JSON (DeepSeek).
    call_body: CallBody = "object"
    reasoning_open: frozenset[str] = frozenset({"THINK_OPEN"})
    reasoning_close: frozenset[str] = frozenset({"THINK_CLOSE"})
    call_open: frozenset[str] = frozenset({"CALL_OPEN"})
    call_close: frozenset[str] = frozenset({"CALL_CLOSE"})
    end: frozenset[str] = frozenset({"END"})
    # The transcript terminal that opens an assistant turn (the generation prompt's header).
    assistant_start: frozenset[str] = frozenset({"ASSISTANT_START"})
    # Starting state when no prompt is given: True starts inside reasoning.
    default_in_reasoning: bool = False
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def grammar(self) -> FamilyGrammar:
        return load_grammar(self.grammar_name)

    def matches(self, template_source: str) -> bool:
        return all(literal in template_source for literal in self.signature)
