"""Reading a whole rendered conversation back into messages.

The family grammar's ``transcript`` rule drives the same engine as completions; assistant turns
are read by the same ``AssistantAssembler`` a completion is. This module only decides which
pieces belong to which message.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatcodec.parse.assistant import AssistantAssembler
from chatcodec.parse.engine import STRAY, Engine, Piece
from chatcodec.parse.readers import Schemas
from chatcodec.events import Diagnostic
from chatcodec.formats.base import Format
from chatcodec.errors import ChatCodecError
from chatcodec.messages import Message, tool_names_and_schemas
from chatcodec.parse.spans import Span
from chatcodec.parse.value_ends import value_ends_for


@dataclass
class MessageSpan:
    """Where one message lies in the text: the whole turn, its header, and its parts.

    ``parts`` are the spans inside the turn (``content``, ``reasoning``, ``tool_call`` with its
    index, ``delimiter``). ``body_start`` is where the text after the turn's header begins.
    """

    index: int
    role: str
    start: int
    end: int
    body_start: int
    parts: list[Span] = field(default_factory=list)


@dataclass
class Transcript:
    """A conversation recovered from rendered text."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    add_generation_prompt: bool
    template_kwargs: dict[str, Any]
    spans: list[MessageSpan]
    diagnostics: list[Diagnostic]
    text: str
    # Text the conversation has no place for (outside every message), as (start, end).
    unparsed: list[tuple[int, int]] = field(default_factory=list)
    # Text the template wrote outside every message: the text before the first turn, a default
    # system turn, the tools block of a turn written for the tools alone, the generation prompt.
    template_spans: list[Span] = field(default_factory=list)

    @property
    def tools_unread(self) -> bool:
        """Were tool definitions written in a form of the template's own, which is not read?"""
        return any(d.kind == "tools_not_readable" for d in self.diagnostics)

    def parts(self) -> list[Span]:
        """Every span of the text, in order: the messages' parts, the template's own text and
        unparsed text. They tile the text: each character is in exactly one."""
        spans = [part for message in self.spans for part in message.parts]
        spans += self.template_spans
        spans += [Span("unparsed", start, end) for start, end in self.unparsed]
        return sorted(spans, key=lambda span: (span.start, span.end))

    def reassemble(self) -> str:
        """The text, rebuilt from the spans alone (it always equals ``text``)."""
        return "".join(self.text[span.start : span.end] for span in self.parts())

    def render_arguments(self) -> dict[str, Any]:
        """Keyword arguments that make ``Codec.render`` write this transcript again."""
        return {
            "tools": self.tools,
            "add_generation_prompt": self.add_generation_prompt,
            **self.template_kwargs,
        }


@dataclass
class _Turn:
    role: str
    start: int
    body_start: int
    content: list[str] = field(default_factory=list)
    parts: list[Span] = field(default_factory=list)
    assembler: AssistantAssembler | None = None
    has_tools_block: bool = False
    tools_marker: str = ""
    tool_call_id: str | None = None
    name: str | None = None  # the tool's name, where the tool turn's header holds it
    definitions: list[str] = field(default_factory=list)  # tool definitions not delimited


_DECODER = json.JSONDecoder()


class TranscriptReader:
    """Assigns the pieces of a transcript parse to messages."""

    def __init__(self, family: Format, text: str) -> None:
        self.family = family
        self.text = text
        self.grammar = family.grammar
        self.messages: list[Message] = []
        self.spans: list[MessageSpan] = []
        self.diagnostics: list[Diagnostic] = []
        self.unparsed: list[tuple[int, int]] = []
        self.tools: list[dict[str, Any]] | None = None
        self._tool_text: list[str] | None = None
        self._tool_start = 0  # where the definition being read begins
        # Inside the block of tool definitions: a separator there is the definitions', where
        # the same spelling also separates tool results (Nemotron's ``, ``).
        self._in_tools_block = False
        self._schemas_of: tuple[int, Schemas | None] = (0, None)  # (tools read, their parameters)
        self._turn: _Turn | None = None
        self._last_role: str | None = None
        self._open_assistant: _Turn | None = None
        self.template: list[Span] = []

    def read(self, chunks: Iterable[str] | None = None) -> Transcript:
        """Read the text, whole or fed in ``chunks`` (which must join to it): the engine gives
        the same pieces either way."""
        engine = Engine(self.grammar, "transcript")
        engine.value_ends = value_ends_for(self.grammar, None)
        for chunk in [self.text] if chunks is None else chunks:
            for piece in engine.feed(chunk):
                self._piece(piece)
        for piece in engine.close():
            self._piece(piece)
        add_generation_prompt, kwargs = self._close_turn(final=True)
        return Transcript(
            messages=self.messages,
            tools=self.tools,
            add_generation_prompt=add_generation_prompt,
            template_kwargs=kwargs,
            spans=self.spans,
            diagnostics=self.diagnostics,
            text=self.text,
            unparsed=self.unparsed,
            template_spans=self.template,
        )

    # -- pieces ------------------------------------------------------------------------------

    def _piece(self, piece: Piece) -> None:
        family = self.family
        turn = self._turn
        assembler = turn.assembler if turn is not None else None
        if assembler is not None:
            if piece.delimiter and piece.kind not in self.grammar.completion_terminals:
                self._close_turn()
                turn = None
            else:
                assembler.handle([piece])
                if piece.delimiter and piece.kind in family.end:
                    self._close_turn()
                return
        kind = piece.kind
        if piece.delimiter:
            if kind in family.turn_roles:
                self._in_tools_block = False  # (a block cut short ends with its turn)
                self._close_turn()
                self._open_turn(family.turn_roles[kind], piece)
            elif kind in family.message_separators and turn is not None and not self._in_tools_block:
                role = turn.role
                turn.parts.append(Span("delimiter", piece.start, piece.start + _split(piece), kind))
                self._close_turn(end=piece.start + _split(piece))
                self._open_turn(role, piece, header_start=piece.start + _split(piece))
            elif kind in family.tools_begin:
                self.tools = []
                self._in_tools_block = True
                if turn is None:
                    self.template.append(Span("template", piece.start, piece.end, kind))
                    return
                turn.has_tools_block = True
                turn.tools_marker = piece.text
                turn.parts.append(Span("delimiter", piece.start, piece.end, kind))
            elif kind in family.tools_end:
                self._flush_tool()
                self._in_tools_block = False
                if turn is None:
                    self.template.append(Span("template", piece.start, piece.end, kind))
                    return
                turn.parts.append(Span("delimiter", piece.start, piece.end, kind))
                if kind in family.turn_ends:
                    self._close_turn(end=piece.end)
            elif kind in family.turn_ends and turn is not None:
                turn.parts.append(Span("delimiter", piece.start, piece.end, kind))
                self._close_turn(end=piece.end)
            elif self._headless_role(kind) is not None:
                self._open_turn(self._headless_role(kind), piece, header_start=piece.start, header_end=piece.start)  # type: ignore[arg-type]
                self._piece(piece)
            else:
                if kind == "TOOL_SEPARATOR" and self.tools is not None:
                    self._flush_tool()
                    self._tool_text = []
                elif self._tool_text is not None:
                    self._flush_tool()  # a tools turn ended by the footer every turn has
                if turn is not None:
                    turn.parts.append(Span("delimiter", piece.start, piece.end, kind))
                else:
                    self.template.append(Span("template", piece.start, piece.end, kind))
            return
        if kind == "TOOL_DEFINITION":
            if self._tool_text is None:
                self._tool_text = []
            if not self._tool_text:
                self._tool_start = piece.start
            self._tool_text.append(piece.text)
            span = Span("tool_definition", piece.start, piece.end)
            _add_span(turn.parts if turn is not None else self.template, span)
            return
        if kind == "TOOL_DEFINITIONS" and turn is not None:
            turn.definitions.append(piece.text)
            _add_span(turn.parts, Span("tool_definitions", piece.start, piece.end))
            return
        if kind == "TOOL_RESPONSE_NAME" and turn is not None:
            turn.name = (turn.name or "") + piece.text
            _add_span(turn.parts, Span("tool_name", piece.start, piece.end))
            return
        if kind == "TOOL_CALL_ID" and turn is not None:
            turn.tool_call_id = (turn.tool_call_id or "") + piece.text
            _add_span(turn.parts, Span("tool_call_id", piece.start, piece.end))
            return
        if kind == "CONTENT" and turn is None:
            if not self.messages and not self.spans and family.leading_text_role is not None:
                self._open_turn(family.leading_text_role, piece, header_start=piece.start, header_end=piece.start)
                self._piece(piece)
                return
            headless = self._headless_role(kind)
            if headless is not None:
                self._open_turn(headless, piece, header_start=piece.start, header_end=piece.start)
                self._piece(piece)
                return
        if turn is not None and kind != STRAY:
            turn.content.append(piece.text)
            _add_span(turn.parts, Span("content", piece.start, piece.end))
            if piece.stray_delimiter is not None and piece.text.strip(" \n") not in ("{", "["):
                # (A call syntax that opens with a bare bracket makes every bracket in a
                # message's text look like a delimiter: not worth a word.)
                self._diagnose(
                    "stray_delimiter",
                    piece.start,
                    f"message {len(self.messages)} contains {piece.text!r}, a delimiter of the format",
                )
            return
        if self.unparsed and self.unparsed[-1][1] == piece.start:
            self.unparsed[-1] = (self.unparsed[-1][0], piece.end)  # one run, however it was fed
        else:
            self.unparsed.append((piece.start, piece.end))
        if piece.text.strip():
            self._diagnose("unexpected_text", piece.start, "text outside any message")

    def _headless_role(self, kind: str) -> str | None:
        """The role of a turn with no header that this piece opens, if it opens one."""
        if self._turn is not None:
            return None
        role = self.family.headless_role_after(self._last_role)
        if role == "assistant" and (kind == "CONTENT" or kind in self.grammar.completion_terminals):
            return role
        if role == "user" and (kind == "CONTENT" or kind in self.family.turn_ends):
            return role
        return None

    def _diagnose(self, kind: str, position: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(kind, position, message))

    # -- turns -------------------------------------------------------------------------------

    def _open_turn(
        self, role: str, piece: Piece, *, header_start: int | None = None, header_end: int | None = None
    ) -> None:
        start = piece.start if header_start is None else header_start
        body = piece.end if header_end is None else header_end
        turn = _Turn(role=role, start=start, body_start=body)
        if header_end is None:
            turn.parts.append(Span("delimiter", start, body, piece.kind))
        if role == "assistant":
            turn.assembler = AssistantAssembler(self.family, schemas=self._schemas(), invent_ids=False)
        self._turn = turn

    def _schemas(self) -> Schemas | None:
        """The parameters of the tools read so far: a value written as text (an XML parameter,
        a Python literal) is typed by its tool's schema, as in a completion parsed with them."""
        if not self.tools:
            return None
        # (Read once for the tools read so far, not again for each assistant turn.)
        if self._schemas_of[0] != len(self.tools):
            try:
                schemas: Schemas | None = tool_names_and_schemas(self.tools)[1]
            except ChatCodecError:
                schemas = None  # a definition of no known shape types nothing
            self._schemas_of = (len(self.tools), schemas)
        return self._schemas_of[1]

    def _flush_tool(self) -> None:
        if self._tool_text is None:
            return
        raw = "".join(self._tool_text)
        self._tool_text = None
        if not raw:
            return
        if self.family.framing.tools_wrap_function is None:
            if not any(d.kind == "tools_not_readable" for d in self.diagnostics):  # (once, not per tool)
                self._diagnose(
                    "tools_not_readable",
                    self._tool_start,
                    "the template writes tool definitions in a form of its own, not as JSON",
                )
            return
        if self.family.framing.tools_notation == "python":
            try:
                tool = ast.literal_eval(raw)
            except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
                self._diagnose(
                    "malformed_tool_definition", self._tool_start, f"a rendered tool definition is not a Python literal: {exc}"
                )
                return
        else:
            try:
                tool = json.loads(raw)
            except json.JSONDecodeError as exc:
                self._diagnose(
                    "malformed_tool_definition", self._tool_start, f"a rendered tool definition is not JSON: {exc.msg}"
                )
                return
            except (ValueError, RecursionError) as exc:  # too deep, or an integer too long to convert
                self._diagnose(
                    "malformed_tool_definition", self._tool_start, f"a rendered tool definition cannot be decoded: {exc}"
                )
                return
        assert self.tools is not None
        if self.family.framing.tools_wrap_function:
            tool = {"type": "function", "function": tool}
        self.tools.append(tool)

    def _definitions_in_text(self, turn: _Turn) -> None:
        """Read tool definitions that no delimiter separates: JSON values, each followed by
        the block's separator. At the start of the user's turn what follows the last is the
        user's text; at the end of the system turn nothing may follow it."""
        kind = "tool_definitions" if turn.definitions else "content"
        spans = [span for span in turn.parts if span.kind == kind]
        if not spans or any(a.end != b.start for a, b in zip(spans, spans[1:])):
            return
        text = "".join(turn.definitions if turn.definitions else turn.content)
        separator = self.family.framing.tools_in_text
        start = spans[0].start
        found: list[Span] = []
        pos = 0
        while pos < len(text) and text[pos] in "{[":
            try:
                tool, after = _DECODER.raw_decode(text, pos)
            except (ValueError, RecursionError):
                break
            if not isinstance(tool, dict) or not text.startswith(separator, after):
                break
            self._tool_text = [text[pos:after]]
            self._tool_start = start + pos
            self._flush_tool()
            found.append(Span("tool_definition", start + pos, start + after))
            found.append(Span("delimiter", start + after, start + after + len(separator), "TOOL_SEPARATOR"))
            pos = after + len(separator)
        rest: list[Span] = []
        if pos < len(text):
            rest = [Span(kind if kind == "content" else "tool_definition", start + pos, spans[-1].end)]
            if kind != "content":
                self._diagnose("malformed_tool_definition", start + pos, "text after the tool definitions is not one")
        at = turn.parts.index(spans[0])
        turn.parts = turn.parts[:at] + found + rest + turn.parts[at + len(spans) :]
        if kind == "content":
            turn.content = [text[pos:]]

    def _close_turn(self, *, end: int | None = None, final: bool = False) -> tuple[bool, dict[str, Any]]:
        """Finish the open turn; at the very end, report a generation prompt if one is open."""
        turn = self._turn
        self._turn = None
        if turn is None:
            return False, {}
        if turn.assembler is not None:
            return self._close_assistant(turn, final)
        end = end if end is not None else (turn.parts[-1].end if turn.parts else turn.body_start)
        if turn.has_tools_block and self.family.framing.tools_in_text:
            self._definitions_in_text(turn)
        content = "".join(turn.content)
        if final:
            content = self._trim_loose_footer(turn, content)
        if turn.role == "system" and turn.has_tools_block:
            # A system turn holding the tools alone was written for them, unless the block
            # opens otherwise without a system message.
            alone = self.family.tools_alone
            if not content and (turn.tools_marker in alone or not alone):
                return self._drop(turn)
        if turn.role == "system" and self.family.system_turn_always and not content:
            return self._drop(turn)
        if turn.role == "tool" and self.family.framing.tool_content_json:
            content = _json_string_text(content)
        if final and turn.name is not None and self._name_left_open(turn):
            # The text after the tool's name never wrote what ends it (a result in another
            # form than the template's): all that follows was read as the name.
            close = self._tool_name_close()
            start = next(part.start for part in turn.parts if part.kind == "tool_name")
            self._diagnose("unclosed_delimiter", start, f"the tool turn's name is never followed by {close!r}; the rest of the text is read as its name")
        message = Message(role=turn.role, content=content, tool_call_id=turn.tool_call_id, name=turn.name)  # type: ignore[arg-type]
        self._add(message, turn, end)
        return False, {}

    def _tool_name_close(self) -> str:
        """What ends the tool's name in a tool turn's header ("" where the header holds none)."""
        return self.family.source.tool_name_close if self.family.source is not None else ""

    def _name_left_open(self, turn: _Turn) -> bool:
        """A tool turn whose header names the tool, its name's end never written."""
        return bool(self._tool_name_close()) and not any(part.name == "TOOL_NAME_END" for part in turn.parts)

    def _drop(self, turn: _Turn, parts: list[Span] | None = None, prompt: tuple[bool, dict[str, Any]] = (False, {})) -> tuple[bool, dict[str, Any]]:
        """A turn that holds no message (written for the tools alone, or the generation prompt):
        its text is the template's."""
        header = [p for p in turn.parts if p.kind == "delimiter" and p.start == turn.start]
        for part in header + (parts if parts is not None else [p for p in turn.parts if p not in header]):
            self.template.append(Span("template", part.start, part.end, part.name))
        self._last_role = turn.role
        return prompt

    def _trim_loose_footer(self, turn: _Turn, content: str) -> str:
        """At the end of the text, a footer made of whitespace alone (which the next header
        would have taken) is still in the content: give it back to the template."""
        footer = self.family.framing.loose_footers.get(turn.role, "")
        if not footer or not content.endswith(footer) or not turn.parts or turn.parts[-1].kind != "content":
            return content
        last = turn.parts.pop()
        cut = last.end - len(footer)
        if cut > last.start:
            turn.parts.append(Span("content", last.start, cut))
        turn.parts.append(Span("delimiter", cut, last.end))
        return content[: len(content) - len(footer)]

    def _close_assistant(self, turn: _Turn, final: bool) -> tuple[bool, dict[str, Any]]:
        assembler = turn.assembler
        assert assembler is not None
        assembler.finish()
        spans = assembler.spans
        end = spans[-1].end if spans else turn.body_start
        body = self.text[turn.body_start : end]
        if final and not assembler.ended:
            # An assistant turn left open at the end is the generation prompt, if all it holds
            # is what the template writes there.
            if turn.body_start == turn.start and not body:
                return self._drop(turn, spans)
            known = dict(self.family.prefill_keywords)
            if all(span.kind == "delimiter" for span in spans) or body in known:
                # Only tags (``<think>\n``, an empty think block), or what else the template
                # writes after its generation prompt (Granite 20B's newline, Functionary
                # v3.2's ``>>>``): what a generation prompt writes. Some prefills also tell
                # which template keywords were used.
                return self._drop(turn, spans, (True, dict(known.get(body, ()))))
        message = assembler.message
        if message.content is None and assembler.ended:
            # The turn was written out to its end with no text: the message's content was
            # there and empty (a template that checks ``content is defined`` tells them apart).
            message = message.model_copy(update={"content": ""})
        if not body and turn.body_start == turn.start:
            return self._drop(turn, spans)  # a headless turn that holds nothing is no message
        if final and message.content:
            footer = self.family.framing.loose_footers.get("assistant", "")
            if footer and isinstance(message.content, str) and message.content.endswith(footer) and spans[-1].kind == "content":
                last = spans.pop()
                cut = last.end - len(footer)
                if cut > last.start:
                    spans.append(Span("content", last.start, cut))
                spans.append(Span("delimiter", cut, last.end))
                message = message.model_copy(update={"content": message.content[: len(message.content) - len(footer)]})
        self._add(message, turn, end, parts=spans)
        return False, {}

    def _add(self, message: Message, turn: _Turn, end: int, parts: list[Span] | None = None) -> None:
        index = len(self.messages)
        self.messages.append(message)
        header = [p for p in turn.parts if p.kind == "delimiter" and p.start == turn.start]
        all_parts = header + (parts if parts is not None else [p for p in turn.parts if p not in header])
        self.spans.append(MessageSpan(index, message.role, turn.start, end, turn.body_start, all_parts))
        self._last_role = message.role


def _json_string_text(raw: str) -> str:
    """The text of a JSON string literal's inside (kept as written if it is not one)."""
    try:
        text = json.loads('"' + raw + '"')
    except json.JSONDecodeError:
        return raw
    return text if isinstance(text, str) else raw


def _add_span(spans: list[Span], span: Span) -> None:
    """Append a text span, joined to the one before when it continues it (a run of text fed in
    several chunks is one span)."""
    if spans:
        last = spans[-1]
        if last.kind == span.kind and last.end == span.start and last.name is None and span.name is None:
            spans[-1] = Span(span.kind, last.start, span.end, None, last.index)
            return
    spans.append(span)


def _split(piece: Piece) -> int:
    """Where a separator that closes one message and opens the next divides (its middle line)."""
    text = piece.text
    middle = text.find("\n", 1)
    return middle + 1 if middle > 0 else len(text)


def read_transcript(family: Format, text: str) -> Transcript:
    transcript = TranscriptReader(family, text).read()
    transcript.diagnostics.extend(_unanswered_calls(transcript))
    return transcript


def _unanswered_calls(transcript: Transcript) -> list[Diagnostic]:
    """Tool calls that a user or system turn follows, where the results of the calls belong.

    A conversation answers its model's calls with tool results; calls followed by another
    person's turn are what a user's message looks like when it spells the template's own
    delimiters to forge a turn (``<|im_end|>\n<|im_start|>assistant\n<tool_call>...``). The text
    alone cannot tell who wrote them: the calls are returned, and named here.
    """
    found: list[Diagnostic] = []
    messages = transcript.messages
    for index, message in enumerate(messages[:-1]):
        following = messages[index + 1].role
        if message.role != "assistant" or not message.tool_calls or following not in ("user", "system"):
            continue
        position = transcript.spans[index].start if index < len(transcript.spans) else 0
        names = ", ".join(repr(call.function.name) for call in message.tool_calls)
        found.append(
            Diagnostic(
                "unanswered_tool_call",
                position,
                f"message {index}: its tool calls ({names}) are followed by a {following} message, not by "
                "their results: they may have been written inside another message's text",
            )
        )
    return found
