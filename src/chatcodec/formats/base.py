"""A format: a turn framing + a reasoning syntax + a call syntax, composed into one grammar.

The composition is text: each part is a Lark piece, and the rules that tie them together
(``body``, ``completion``, ``completion_unprompted``) are written here, with only the parts the
format has. The result is one LALR grammar run by the one engine. Which terminal plays which
part (opens a turn of some role, ends one, opens a call...) comes from the pieces too, so the
readers never name a delimiter.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from chatcodec.formats.framing import Framing, FramingPiece
from chatcodec.formats.calls import CallSyntax
from chatcodec.formats.syntax import ReasoningSyntax
from chatcodec.messages import NEW_TOOL_CALL_IDS
from chatcodec.parse.grammar import FamilyGrammar, compile_grammar

_DECLARE = re.compile(r"^%declare\s+(.+)$", re.MULTILINE)


class CallTraits(NamedTuple):
    """The call syntax as a completion's parser reads it (see ``Format.call_traits``)."""

    reader: str | None  # a key of chatcodec.parse.readers.READERS; None without calls
    reader_options: dict[str, object]
    closes_at_end: bool
    trailers: tuple[str, ...]
    close_is_stop_token: bool
    # Each part of the answer is a message with a header that may address a tool (Muse).
    addressed: bool


@dataclass(frozen=True, eq=False)
class Format:
    """One wire format. ``framing`` says how turns are written (its ``source`` is the framing
    read from a template, when it was); ``reasoning`` and ``calls`` may be ``None``."""

    name: str
    framing: FramingPiece
    reasoning: ReasoningSyntax | None
    calls: CallSyntax | None
    # Read leading text of an output without a prompt as undecided (reasoning if a closing tag
    # follows): for models whose prompts open the reasoning block.
    unprompted: bool = False
    source: Framing | None = None
    # What a generation prompt's prefill says about the template keywords used.
    prefill_keywords: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    # The template writes a system turn even when there is no system message.
    system_turn_always: bool = False
    # Why calls are not parsed, when they are not (for ``inspect``).
    calls_note: str | None = None

    # -- the parts the readers ask about (at every delimiter: built once) -------------------

    @cached_property
    def reasoning_open(self) -> frozenset[str]:
        return frozenset({"THINK_OPEN"}) if self.reasoning else frozenset()

    @cached_property
    def reasoning_opener(self) -> str | None:
        """The opening reasoning tag's spelling (the first of its terminals), None without one."""
        opener = sorted(self.reasoning_open)
        return self.grammar.literal(opener[0]) if opener else None

    @cached_property
    def reasoning_close(self) -> frozenset[str]:
        return frozenset({"THINK_CLOSE"}) if self.reasoning else frozenset()

    @cached_property
    def reasoning_ends(self) -> frozenset[str]:
        """Delimiters beside the closing tag after which no reasoning block is open: the turn's
        end, the next message's header, the answer's opening tag."""
        answer_open = self.framing.answer_open_terminal
        return self.end | self.assistant_start | (frozenset({answer_open}) if answer_open else frozenset())

    @cached_property
    def call_open(self) -> frozenset[str]:
        return self.calls.call_open if self.calls else frozenset()

    @cached_property
    def call_close(self) -> frozenset[str]:
        return self.calls.call_close if self.calls else frozenset()

    @cached_property
    def section_open(self) -> frozenset[str]:
        """Delimiters that open a section of calls (DeepSeek's ``<｜tool▁calls▁begin｜>``)."""
        return frozenset({"CALLS_BEGIN"}) if self.calls else frozenset()

    @cached_property
    def section_close(self) -> frozenset[str]:
        return frozenset({"CALLS_END"}) if self.calls else frozenset()

    @cached_property
    def openers_after_reasoning(self) -> frozenset[str]:
        """Spellings of a call's opening that begin by closing the reasoning (HyperCLOVA X
        writes its calls as a message of their own, whose header follows the reasoning's end):
        written inside the reasoning, they end it."""
        if self.calls is None or self.reasoning is None:
            return frozenset()
        closings = self.reasoning.close_spellings
        return frozenset(
            spelling
            for name, options in self.calls.spellings
            if name in self.calls.call_open
            for spelling in options
            if any(spelling.startswith(closing) for closing in closings)
        )

    @cached_property
    def new_call_id(self) -> Callable[[], str]:
        """Makes up an id for a call the model wrote none for, in the shape its family's
        templates render."""
        return NEW_TOOL_CALL_IDS[self.calls.call_ids if self.calls is not None else "openai"]

    @cached_property
    def call_traits(self) -> CallTraits:
        """What a parser of one completion asks of the call syntax, worked out once (a server
        builds a parser per request)."""
        syntax = self.calls
        if syntax is None:
            return CallTraits(None, {}, False, (), False, False)
        return CallTraits(
            syntax.reader,
            syntax.options,
            syntax.closes_at_end,
            syntax.trailers,
            syntax.close_is_stop_token,
            "ADDRESS" in dict(syntax.spellings),
        )


    @property
    def end(self) -> frozenset[str]:
        return self.framing.end

    @property
    def assistant_start(self) -> frozenset[str]:
        return self.framing.assistant_start

    @property
    def turn_roles(self) -> dict[str, str]:
        return self.framing.turn_roles

    @property
    def turn_ends(self) -> frozenset[str]:
        return self.framing.turn_ends

    @property
    def message_separators(self) -> frozenset[str]:
        return self.framing.message_separators

    @property
    def tools_begin(self) -> frozenset[str]:
        return self.framing.tools_begin

    @property
    def tools_end(self) -> frozenset[str]:
        return self.framing.tools_end

    @property
    def leading_text_role(self) -> str | None:
        return self.framing.leading_text_role

    @property
    def headless_assistant_after(self) -> frozenset[str]:
        return self.framing.headless_assistant_after

    def headless_role_after(self, role: str | None) -> str | None:
        """The role of a turn that follows a turn of ``role`` with no header of its own."""
        if role in self.framing.headless_assistant_after:
            return "assistant"
        if role == "system" and self.framing.headless_user_after_system:
            return "user"
        return None

    @property
    def tools_alone(self) -> frozenset[str]:
        return self.framing.tools_alone

    @property
    def template_spans(self) -> frozenset[str]:
        """Delimiters that belong to no message: the text before the first turn, the default
        system turn."""
        names = {self.framing.prefix_terminal, self.framing.default_system_terminal}
        return frozenset(name for name in names if name)

    # -- the grammar ------------------------------------------------------------------------

    @cached_property
    def grammar_text(self) -> str:
        return compose(
            self.framing.grammar,
            self.reasoning,
            self.calls,
            has_end=bool(self.end),
            unprompted=self.unprompted,
            lead=self.framing.lead_terminal,
            answer_open=self.framing.answer_open_terminal,
            answer_close=self.framing.answer_close_terminal,
            message_start=self._assistant_header,
            header_first=self._header_the_model_writes,
        )

    @property
    def _assistant_header(self) -> str | None:
        """The assistant header's terminal, where it has one."""
        starts = self.framing.assistant_start
        return next(iter(starts)) if len(starts) == 1 else None

    @property
    def _header_the_model_writes(self) -> str | None:
        """The assistant header's terminal, where the template writes no generation prompt of
        its own (Command R7B's tool-use template): the model writes the header itself."""
        source = self.source
        if source is None or source.generation_prompt:
            return None
        if not source.headers.get("assistant", "").strip():
            return None  # a header of whitespace is the answer's own leading whitespace
        return self._assistant_header

    @cached_property
    def grammar(self) -> FamilyGrammar:
        # Kept by the format: what its parsers remember (a prefill's parser stack, a whole-text
        # reader's moves) holds the state numbers of this compilation, and a grammar compiled
        # again, once the shared cache has let it go, may number its states otherwise.
        return compile_grammar(self.name, self.grammar_text)

    def __repr__(self) -> str:
        return f"Format({self.name!r})"


def compose(
    framing: str,
    reasoning: ReasoningSyntax | None,
    calls: CallSyntax | None,
    *,
    has_end: bool,
    unprompted: bool,
    lead: str | None = None,
    answer_open: str | None = None,
    answer_close: str | None = None,
    message_start: str | None = None,
    header_first: str | None = None,
) -> str:
    """One Lark grammar from the pieces, with the rules that tie them together.

    ``message_start``: the assistant header's terminal, where the calls of a format whose
    answer parts are messages (gpt-oss) may be followed by another message. ``header_first``:
    the assistant header's terminal, where the model writes it at the start of its answer.
    """
    pieces = [framing]
    if reasoning is not None:
        pieces.append(reasoning.grammar())
    if calls is not None:
        pieces.append(calls.grammar())
    end = " END?" if has_end else ""
    calls_part = " calls?" if calls is not None else ""
    # Whitespace the template writes before an answer, and the text that opens the visible
    # answer, are the model's to write: optional.
    lead_part = f"{lead}? " if lead else ""
    if header_first:
        lead_part = f"{header_first}? {lead_part}"
    opening = f"{answer_open}? " if answer_open else ""
    # The answer's text after its opening; where the model is asked to close it too, the
    # closing tag follows an opening one (alone, it is text).
    answer = f"({answer_open} CONTENT? {answer_close}? | CONTENT?)" if answer_close else f"{opening}CONTENT?"
    # A model that writes its own header writes it after a reasoning block too (Command R7B:
    # <|START_THINKING|>…<|END_THINKING|><|START_RESPONSE|>answer).
    header_after = f"{header_first}? " if header_first and reasoning is not None else ""
    reasoned = f"(reasoning {header_after})? " if header_after else "reasoning? "
    if message_start and reasoning is not None and calls is not None and calls.piece == "addressed_xml" and not header_after:
        # Messages with recipients (Muse Glimmer): the next message's header ends a reasoning
        # message whose end token is left out (the header is a special token, never text).
        reasoned = f"(reasoning | THINK_OPEN THINK_OPEN? REASONING? {message_start})? "
    # gpt-oss: each part of the answer is a message of its own. Reasoning and preamble messages
    # (plain text to the user, opened like a call's arguments) and calls followed by another
    # message's header come in any number before the answer; a preamble the text ends with is
    # the answer. The list is left-recursive and a preamble and the answer share their start,
    # so the parser decides which it read only at what ends it (the reasoning's closing tag, or
    # the end).
    messages = calls is not None and calls.preamble and reasoning is not None and not calls.whole_turn
    if calls is not None and calls.whole_turn:
        # Calls that are the whole answer (Llama's JSON) come only where no content precedes,
        # unless opened by a special token (``calls_after_text``, where the syntax has them).
        text = "CONTENT calls_after_text?" if "calls_after_text:" in pieces[-1] else "CONTENT"
        choice = (
            f"({answer_open} CONTENT? {answer_close}? | {text} | calls)?" if answer_close else f"{opening}({text} | calls)?"
        )
        rules = [f"body: {reasoned if reasoning else ''}{choice}"]
    elif messages:
        rules = [
            "body: messages? answer",
            "messages: message | messages message",
            # A message after calls may leave out its header, as after another message's end.
            "message: calls? reasoning | calls? CALL_SEP CONTENT? THINK_CLOSE"
            # (A reasoning message whose end token is left out ends where the next message's
            # header begins: the header is a special token, never reasoning text.)
            + (f" | calls {message_start} | calls? THINK_OPEN THINK_OPEN? REASONING? {message_start}" if message_start else ""),
            f"answer: {opening}CONTENT?{calls_part}",
            *([f"      | calls {answer_open} CONTENT?{calls_part}"] if answer_open else []),
            f"      | calls? CALL_SEP CONTENT?{calls_part}",
            # A call addressed before its channel (`` to=functions.f<|channel|>analysis<|message|>``):
            # the separator is spelled like the reasoning's opening tag, so it is that terminal.
            "%extend tool_call: CALL_BEGIN TOOL_NAME? THINK_OPEN TOOL_ARGUMENTS? CALL_END",
            # A call ended like a message (``{…}<|end|>``, as Ollama's tests write it), which
            # another message may follow.
            *(["%extend tool_call: CALL_BEGIN TOOL_NAME? CALL_SEP TOOL_ARGUMENTS? END"] if has_end else []),
        ]
    elif "bare_calls:" in pieces[-1]:
        # Calls without their opening tag (Gemma 4's ``call:NAME{…}``), where no text precedes.
        rules = [f"body: {reasoned if reasoning else ''}({answer}{calls_part} | bare_calls)"]
    else:
        rules = [f"body: {reasoned if reasoning else ''}{answer}{calls_part}"]
        if message_start and calls is not None and calls.piece == "addressed_xml":
            # (And after a message to a tool whose end token is left out.)
            rules += [
                f"%extend message: {message_start} ADDRESS RECIPIENT? (ADDRESS_END CONTENT? section*)?",
                f"%extend calls: message+ {message_start} ANSWER_OPEN? CONTENT?",
            ]
    rules += [
        f"completion: {lead_part}body{end}",
    ]
    open_before = "messages? calls? " if messages else ""
    # Calls inside a reasoning block the model never closed: the reasoning goes on after them
    # until its closing tag, then the answer (and its calls) follow.
    resumed = (
        f" (THINK_CLOSE {header_after}{answer}{calls_part})?" if calls is not None and not calls.whole_turn else ""
    )
    if reasoning is not None:
        if calls is not None:
            rules.append(f"          | {lead_part}{open_before}open_reasoning calls{resumed}{end}")
        rules.append(f"          | {lead_part}{open_before}open_reasoning{end}")
        if answer_open and not messages:
            # The answer's opening tag written while the block is open (the prompt opened it,
            # the model skips it or leaves out its closing tag: Kimi K3, Granite 3.3's
            # <response>, Command's <|START_TEXT|>): it ends the reasoning.
            closing = f" {answer_close}?" if answer_close else ""
            rules.append(f"          | {lead_part}open_reasoning {answer_open} CONTENT?{closing}{calls_part}{end}")
        if unprompted:
            # Without a prompt nothing says whether the output opens inside a reasoning block
            # (the prompt of a thinking model ends with the opening tag). LEADING text is held
            # until it shows: reasoning if the closing tag follows it, content if a tool call,
            # the end token or the end of the text does.
            rules.append(
                f"completion_unprompted: {lead_part}LEADING? (THINK_CLOSE {header_after}{answer})?{calls_part}{end}"
            )
            rules.append(
                f"                     | {lead_part}explicit_reasoning {header_after}{answer}{calls_part}{end}"
            )
            if answer_close:
                # An answer whose opening tag the text starts with has no reasoning before it
                # (Kimi K3 with thinking off: <|open|>response<|sep|>…).
                rules.append(
                    f"                     | {lead_part}{answer_open} CONTENT? {answer_close}?{calls_part}{end}"
                )
            if calls is not None:
                rules.append(f"                     | {lead_part}open_reasoning calls{resumed}{end}")
            rules.append(f"                     | {lead_part}open_reasoning{end}")
    else:
        pieces = [_drop_rule(piece, "explicit_reasoning") for piece in pieces]
    if reasoning is not None and not unprompted:
        pieces = [_drop_rule(piece, "explicit_reasoning") for piece in pieces]
    declared: set[str] = {"CONTENT"}
    texts = []
    for piece in pieces:
        declared.update(name for line in _DECLARE.findall(piece) for name in line.split())
        texts.append(_DECLARE.sub("", piece).strip())
    if unprompted and reasoning is not None:
        declared.add("LEADING")
    texts.append("\n".join(rules))
    texts.append("%declare " + " ".join(sorted(declared)))
    return "\n\n".join(texts) + "\n"


def _drop_rule(piece: str, rule: str) -> str:
    return re.sub(rf"^{rule}:.*$\n?", "", piece, flags=re.MULTILINE)


Family = Format  # the name earlier releases used
