"""What a family module declares: its grammar, and which terminals play which part."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from chatcodec.parse.grammar import FamilyGrammar, load_grammar

CallBody = Literal["object", "name_then_arguments"]


@dataclass(frozen=True)
class Family:
    """One wire format. Delimiter *spellings* live in ``grammars/<grammar>.lark``; this names
    the terminals' roles and what the template does around them."""

    name: str
    grammar_name: str
    # Literals whose presence in a template's source identifies the family (all must appear).
    signature: tuple[str, ...]
    # Literals that rule the family out (a related format that writes calls differently).
    excludes: tuple[str, ...] = ()
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
    # ---- reading whole transcripts ----
    # Delimiters that open a message, and the role of that message.
    turn_roles: dict[str, str] = field(default_factory=dict)
    # Delimiters that close the open message (the assistant's own end token is ``end``).
    turn_ends: frozenset[str] = frozenset({"END"})
    # Delimiters that close one message and open another of the same role (tool results).
    message_separators: frozenset[str] = frozenset()
    tools_begin: frozenset[str] = frozenset({"TOOLS_BEGIN"})
    tools_end: frozenset[str] = frozenset({"TOOLS_END"})
    # Text before the first turn delimiter belongs to a message of this role (DeepSeek's
    # system prompt has no header).
    leading_text_role: str | None = None
    # Roles after which the template writes an assistant turn with no header (DeepSeek: after
    # tool results, and after another assistant turn).
    headless_assistant_after: frozenset[str] = frozenset()
    # A tools block spelled starting with this means a system message precedes it (Qwen
    # writes "<system text>\n\n# Tools..." only when there is a system message).
    system_before_tools_marker: str | None = None
    # The template writes a system turn even when there is no system message.
    system_turn_always: bool = False
    # What a generation prompt's prefill says about the template keywords used.
    prefill_keywords: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()

    @property
    def grammar(self) -> FamilyGrammar:
        return load_grammar(self.grammar_name)

    def matches(self, template_source: str) -> bool:
        return all(literal in template_source for literal in self.signature) and not any(
            literal in template_source for literal in self.excludes
        )
