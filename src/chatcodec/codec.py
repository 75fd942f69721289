"""``Codec``: one chat template plus the wire-format family it writes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

from chatcodec.errors import (
    ChatCodecError,
    InvalidMessageError,
    TemplateRenderError,
    TemplateSecurityError,
    UnsupportedTemplateError,
)
from chatcodec.formats import format_for_template, format_named
from chatcodec.formats.base import Format
from chatcodec.formats.describe import describe
from chatcodec.formats.probe import template_variables
from chatcodec.render.loading import TemplateSource, find_template, template_from_tokenizer
from chatcodec.check.masks import RenderedConversation
from chatcodec.messages import (
    Message,
    Tool,
    parse_messages,
    parse_tools,
    plain_hf_messages,
    tool_dicts,
    tool_names_and_schemas,
)
from chatcodec.render.jinja import check_syntax, clock, reasoning_as_part, reasoning_in_parts, render_source, template_needs
from chatcodec.check.roundtrip import Loss, RoundTripReport, compare, text_loss
from chatcodec.check.special_tokens import (
    OnSpecialTokens,
    SpecialTokenError,
    SpecialTokenFinding,
    SpecialTokenWarning,
    describe_findings,
    find_special_tokens,
    template_tokens,
)
from chatcodec.parse.prompt import START, PromptState, prefill_state, prompt_state
from chatcodec.parse.stream import ParseResult, StreamParser
from chatcodec.parse.transcript import Transcript, read_transcript
from chatcodec.parse.whole import whole_text_reader

MessagesInput = Sequence[Message | Mapping[str, Any]]
ToolsInput = Sequence[Tool | Mapping[str, Any]] | None


class Codec:
    """Renders conversations through one chat template (and parses its format back)."""

    def __init__(
        self,
        template: TemplateSource,
        *,
        clock: Callable[[], datetime] | None = None,
        family: str | None = None,
        reasoning_tags: tuple[str, str] | None = None,
    ) -> None:
        self.template = template
        self.name = template.name
        self.source = template.source
        self.special_tokens = dict(template.special_tokens)
        self._clock = clock
        self._needs = template_needs(template.source)
        self._format: Format | None = format_named(family) if family else None
        self._reasoning_tags = _checked_tags(reasoning_tags)
        self._probe_variables: dict[str, str] | None = None  # (``template_variables``)

    @property
    def format(self) -> Format:
        """The wire format this template writes: its framing, reasoning and call syntax, read
        from the template the first time it is asked for (raises ``UnsupportedTemplateError``
        if the template's output does not show where messages lie)."""
        if self._format is None:
            eos = self.special_tokens.get("eos_token")
            self._format = format_for_template(
                self.name,
                self.source,
                self._probe_render,
                eos if isinstance(eos, str) else None,
                reasoning_tags=self._reasoning_tags,
            )
        return self._format

    @property
    def family(self) -> Format:
        """The same as ``format`` (the name earlier releases used)."""
        return self.format

    def _probe_render(self, messages: MessagesInput, **kwargs: Any) -> str:
        return self._plain_render(messages, **{**self._variables_read_with(), **kwargs})

    def _plain_render(self, messages: MessagesInput, **kwargs: Any) -> str:
        return self.render(messages, on_special_tokens="ignore", **kwargs)

    def _variables_read_with(self) -> dict[str, str]:
        if self._probe_variables is None:
            self._probe_variables = template_variables(self._plain_render)
        return self._probe_variables

    @property
    def template_variables(self) -> list[str]:
        """The variables of its own the template needs to render at all (firefunction v2's
        ``functions`` and ``datetime``): pass them to ``render``. Reading its format gives it
        each as an empty string."""
        return list(self._variables_read_with())

    def describe(self) -> dict[str, Any]:
        """What chatcodec found in the template (what ``chatcodec inspect`` prints): the
        framing's delimiters, the reasoning and call syntax (or why calls are not parsed), and
        capabilities: system and tool roles, tools rendered, where reasoning is kept, parallel
        calls, ``{% generation %}``; the variables of its own the template needs."""
        found = describe(self.name, self.format, self._probe_render, self.source)
        return {**found, "template_variables": self.template_variables}

    # -- parsing -----------------------------------------------------------------------------

    def stream(
        self,
        prompt: str | None = None,
        *,
        tools: ToolsInput | Sequence[str] = None,
        strict: bool = False,
        reasoning: bool | None = None,
        prefill: str | None = None,
    ) -> StreamParser:
        """A sans-I/O parser for one completion: ``feed(text) -> events``, ``close() -> events``.

        ``prompt`` is the rendered prompt the completion continues: parsing starts in the state
        it leaves (inside ``<think>``, after a closed one, after a prefill). Without a prompt,
        parsing starts at the beginning of an assistant turn; ``reasoning=True`` starts inside
        a reasoning block instead (for models whose prompt opens it).
        ``tools``: definitions or names; a call to any other name is kept as content.
        ``prefill``: the assistant turn's text already written, instead of a prompt (what
        another parser read before handing over, say ``<think></think>``): parsing goes on in
        the state it leaves, and none of it is part of the completion.
        """
        prefill, start = self._start(prompt, reasoning, prefill)
        names, schemas = _tool_digest(tools)
        return StreamParser(
            self.family,
            prefill=prefill,
            tools=names,
            schemas=schemas,
            strict=strict,
            start=start,
        )

    def _start(self, prompt: str | None, reasoning: bool | None, prefill: str | None) -> tuple[str, str]:
        """The text a completion's parse starts after, and the grammar's start symbol."""
        family = self._format or self.format
        _require_text(prompt, "prompt")
        _require_text(prefill, "prefill")
        if prefill is not None and prompt is not None:
            raise ValueError("give a prompt or a prefill, not both")
        undecided = False
        if prefill is None:
            state = prompt_state(family, prompt) if prompt is not None else START
            prefill, undecided = state.prefill, state.state == "undecided"
        elif prefill:
            undecided = prefill_state(family, prefill).state == "undecided"
        if reasoning and not prefill:
            prefill = family.reasoning_opener
            if prefill is None:
                raise UnsupportedTemplateError(f"the {family.name} format has no reasoning blocks")
        start = "completion"
        if undecided or (prompt is None and not prefill and reasoning is None and "completion_unprompted" in family.grammar.starts):
            # Nothing says whether the output opens with reasoning (nor does the prompt's
            # prefill, text with no tag): the family's grammar reads leading text as
            # reasoning if a closing tag follows, else as content.
            start = "completion_unprompted"
        return prefill, start

    def prompt_state(self, prompt: str) -> PromptState:
        """Where ``prompt`` leaves the assistant's turn, which is where a completion's parse
        starts: in content, inside reasoning (the prompt opened ``<think>``), or inside a tool
        call (with its name and the arguments written so far), after the prefill it holds."""
        if not isinstance(prompt, str):
            raise TypeError(f"the prompt must be a str, not {type(prompt).__name__}")
        return prompt_state(self.format, prompt)

    def parse_detailed(
        self,
        completion: str,
        prompt: str | None = None,
        *,
        tools: ToolsInput | Sequence[str] = None,
        strict: bool = False,
        reasoning: bool | None = None,
        prefill: str | None = None,
    ) -> ParseResult:
        """Parse a whole completion: the message, finish reason, diagnostics and spans (see
        ``stream`` for the options)."""
        return self._parse(completion, prompt, tools, strict, reasoning, prefill, spans=True)

    def _parse(
        self,
        completion: str,
        prompt: str | None,
        tools: ToolsInput | Sequence[str],
        strict: bool,
        reasoning: bool | None,
        prefill: str | None,
        *,
        spans: bool,
    ) -> ParseResult:
        """``parse_detailed``; without ``spans`` a result of the fast path has none."""
        if not isinstance(completion, str):
            raise TypeError(f"the completion must be a str, not {type(completion).__name__}")
        begin, start = self._start(prompt, reasoning, prefill)
        # Well-formed text of the common shape takes the fast path; it declines the rest.
        names, schemas = _tool_digest(tools)
        reader = whole_text_reader(self.family, start)
        found = reader.parse(completion, begin, frozenset(names) if names is not None else None, spans=spans)
        if found is not None:
            return found
        # The rest: the engine, from the same start (tool names already read, not again).
        parser = StreamParser(
            self.family, prefill=begin, tools=names, schemas=schemas, strict=strict, start=start
        )
        return parser.parse_whole(completion)

    def parse(
        self,
        completion: str,
        prompt: str | None = None,
        *,
        tools: ToolsInput | Sequence[str] = None,
        strict: bool = False,
        reasoning: bool | None = None,
        prefill: str | None = None,
    ) -> Message:
        """Parse a whole completion into an assistant message (see ``stream`` for the options)."""
        return self._parse(completion, prompt, tools, strict, reasoning, prefill, spans=False).message

    def __repr__(self) -> str:
        return f"Codec({self.name!r})"

    # -- rendering ---------------------------------------------------------------------------

    def template_messages(self, messages: MessagesInput, *, source: str | None = None) -> list[dict[str, Any]]:
        """The message dicts the template (``source``, default this codec's) is given.

        Tool-call arguments come in the form the template needs: a dict where it serializes them
        itself, JSON text where it concatenates them, as given where it accepts both.
        """
        return self._template_messages(messages, source)[0]

    def _template_messages(self, messages: MessagesInput, source: str | None) -> tuple[list[dict[str, Any]], bool]:
        """The template's message dicts, and whether they are plain data already (built here
        from strings and JSON: nothing of the caller's objects reaches the template)."""
        needs = self._needs if source is None else template_needs(source)
        form = {"dict": "dict", "string": "string", "either": "as_given"}[needs.arguments]
        plain = plain_hf_messages(messages, form)  # type: ignore[arg-type]
        if plain is None:
            dicts, plain_data_only = [message.to_hf(arguments=form) for message in parse_messages(messages)], False  # type: ignore[arg-type]
        else:
            dicts, plain_data_only = plain, True
        if reasoning_in_parts(source or self.source):
            dicts = [reasoning_as_part(message) for message in dicts]
        return dicts, plain_data_only

    def _check_special_tokens(
        self,
        source: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        variables: dict[str, Any],
        action: OnSpecialTokens,
    ) -> None:
        if action not in ("report", "error"):
            raise InvalidMessageError(f"on_special_tokens must be 'report', 'error' or 'ignore', not {action!r}")
        pattern = template_tokens(source, tuple(self.special_tokens.values()))
        findings = find_special_tokens(pattern, messages, tools, variables)
        if not findings:
            return
        text = describe_findings(findings, self.name)
        if action == "error":
            raise SpecialTokenError(text)
        warnings.warn(SpecialTokenWarning(text), stacklevel=4)

    def source_for(self, tools: ToolsInput) -> str:
        """The template text a render uses: like transformers, a model folder's ``tool_use``
        template when tools are given and no template was named."""
        if tools is not None and self.template.tool_use_source is not None:
            return self.template.tool_use_source
        return self.source

    def render(
        self,
        messages: MessagesInput,
        tools: ToolsInput = None,
        add_generation_prompt: bool = False,
        *,
        on_special_tokens: OnSpecialTokens = "report",
        **template_kwargs: Any,
    ) -> str:
        """Render ``messages`` exactly as ``tokenizer.apply_chat_template(..., tokenize=False)``.

        ``on_special_tokens``: what to do when a message, tool definition or variable spells one
        of the template's special tokens (``<|im_start|>`` in user text becomes a real turn
        marker once tokenized): ``"report"`` warns (``SpecialTokenWarning``), ``"error"`` raises
        ``SpecialTokenError``, ``"ignore"`` renders without looking.
        """
        text, _ = self._render(
            messages, tools, add_generation_prompt, template_kwargs, track_generation=False, on_special_tokens=on_special_tokens
        )
        return text

    def find_special_tokens(
        self, messages: MessagesInput, tools: ToolsInput = None, **template_kwargs: Any
    ) -> list[SpecialTokenFinding]:
        """Where the caller's messages, tools and variables spell the template's special tokens."""
        source = self.source_for(tools)
        message_dicts, _ = self._template_messages(messages, source)
        pattern = template_tokens(source, tuple(self.special_tokens.values()))
        return find_special_tokens(pattern, message_dicts, tool_dicts(tools), template_kwargs)

    def render_with_generation_spans(
        self,
        messages: MessagesInput,
        tools: ToolsInput = None,
        add_generation_prompt: bool = False,
        **template_kwargs: Any,
    ) -> tuple[str, list[tuple[int, int]]]:
        """Render and return the character spans inside ``{% generation %}`` blocks."""
        return self._render(messages, tools, add_generation_prompt, template_kwargs, track_generation=True)

    def _render(
        self,
        messages: MessagesInput,
        tools: ToolsInput,
        add_generation_prompt: bool,
        template_kwargs: dict[str, Any],
        *,
        track_generation: bool,
        on_special_tokens: OnSpecialTokens = "report",
    ) -> tuple[str, list[tuple[int, int]]]:
        # Not a template variable: transformers' option to end the text inside the last message.
        continue_final_message = template_kwargs.pop("continue_final_message", False)
        if continue_final_message and add_generation_prompt:
            raise InvalidMessageError("continue_final_message and add_generation_prompt cannot be used together")
        source = self.source_for(tools)
        message_dicts, plain = self._template_messages(messages, source)
        definitions = tool_dicts(tools)
        needs = template_needs(source)
        if definitions is not None and not needs.reads_tools:
            # Validated, but neither looked through nor copied for a template that never reads them.
            definitions = None
        if on_special_tokens != "ignore":
            self._check_special_tokens(source, message_dicts, definitions, template_kwargs, on_special_tokens)
        variables = {**self.special_tokens, **template_kwargs}

        def attempt(dicts: list[dict[str, Any]]) -> tuple[str, list[tuple[int, int]]]:
            return render_source(
                source,
                dicts,
                tools=definitions,
                add_generation_prompt=add_generation_prompt,
                variables=variables,
                track_generation=track_generation,
                continue_final_message=continue_final_message,
                name=self.name,
                plain_messages=plain,
                mapping_arguments=needs.arguments == "dict",
            )

        with clock(self._clock) if self._clock is not None else _no_context():
            try:
                return attempt(message_dicts)
            except TemplateSecurityError:
                raise
            except TemplateRenderError as first_error:
                # OpenAI clients send ``content: null`` beside tool calls; many templates only
                # cope with a string there. Retry with "" before giving up.
                if not any("content" not in message for message in message_dicts):
                    raise
                patched = [{"content": "", **message} for message in message_dicts]
                try:
                    return attempt(patched)
                except TemplateRenderError:
                    raise first_error from None


    # -- transcripts and round trips ---------------------------------------------------------

    def parse_transcript(self, text: str) -> Transcript:
        """Recover the conversation a template rendered: messages, tools, the generation
        prompt, the template keywords the text implies, and per-message spans."""
        return read_transcript(self.family, text)

    def roundtrip(
        self,
        messages: MessagesInput,
        tools: ToolsInput = None,
        *,
        check_prefixes: bool = False,
        **template_kwargs: Any,
    ) -> RoundTripReport:
        """Render, parse the transcript back, render again; report what did not survive.

        ``check_prefixes``: also check that the prompt each assistant message was answered to
        (the conversation before it, with the generation prompt) is a prefix of the whole
        rendered conversation, as multi-turn RL needs (``prefix_changed`` where it is not).
        It renders once per assistant message.
        """
        add_generation_prompt = bool(template_kwargs.pop("add_generation_prompt", False))
        validated = parse_messages(list(messages))
        validated_tools = parse_tools(list(tools) if tools is not None else None)
        # Delimiters in the fields are reported as losses (injection_risk), not warned about.
        text = self.render(
            validated,
            tools=validated_tools,
            add_generation_prompt=add_generation_prompt,
            on_special_tokens="ignore",
            **template_kwargs,
        )
        transcript = self.parse_transcript(text)
        rerender_kwargs = {**template_kwargs, **transcript.template_kwargs}
        # Definitions in a form of the template's own are not read back (``tools_not_read``):
        # the text is rendered again with the tools given, which still tells whether the
        # messages survive and the block is the one those tools make.
        try:
            rerendered = self.render(
                transcript.messages,
                tools=validated_tools if validated_tools and transcript.tools_unread else transcript.tools,
                add_generation_prompt=transcript.add_generation_prompt,
                on_special_tokens="ignore",
                **rerender_kwargs,
            )
        except ChatCodecError as exc:
            rerendered = f"<render failed: {exc}>"
        report = RoundTripReport(text=text, rerendered=rerendered, transcript=transcript)
        report.losses = compare(self.family, validated, [t.to_dict() for t in validated_tools or []] or None, transcript)
        if not report.text_survived:
            report.losses.insert(0, text_loss(text, rerendered))
        if check_prefixes and not add_generation_prompt:
            report.losses += self._prefix_losses(validated, validated_tools, text, template_kwargs)
        return report

    def _prefix_losses(
        self, messages: list[Message], tools: list[Tool] | None, text: str, template_kwargs: dict[str, Any]
    ) -> list[Loss]:
        losses = []
        for index, message in enumerate(messages):
            if message.role != "assistant" or index == 0:
                continue
            try:
                prompt = self.render(
                    messages[:index], tools=tools, add_generation_prompt=True, on_special_tokens="ignore", **template_kwargs
                )
            except ChatCodecError:
                continue
            if text.startswith(prompt):
                continue
            at = next((i for i, (a, b) in enumerate(zip(prompt, text)) if a != b), min(len(prompt), len(text)))
            losses.append(
                Loss(
                    "prefix_changed",
                    f"the prompt this message answers differs from the conversation's text at character {at}: "
                    f"{prompt[at : at + 30]!r} vs {text[at : at + 30]!r} (the template rewrites earlier turns)",
                    index,
                )
            )
        return losses

    def render_with_spans(
        self,
        messages: MessagesInput,
        tools: ToolsInput = None,
        add_generation_prompt: bool = False,
        **template_kwargs: Any,
    ) -> RenderedConversation:
        """Render, and say where every message (and each of its parts) lies in the text.

        Spans come from reading the rendered text back with the family grammar, so they work
        for any template of a supported family, with or without ``{% generation %}`` tags.
        """
        validated = parse_messages(list(messages))
        text = self.render(validated, tools=tools, add_generation_prompt=add_generation_prompt, **template_kwargs)
        transcript = self.parse_transcript(text)
        roles = [m.role for m in validated]
        found = [m.role for m in transcript.messages]
        if roles != found:
            raise ChatCodecError(
                f"cannot place every message: the template rendered roles {found} for the input roles {roles} "
                "(it merges, drops or reorders messages, or content contains delimiters)"
            )
        return RenderedConversation(text=text, messages=transcript.spans)


def _require_text(value: object, what: str) -> None:
    """Text the parser reads must be ``str`` (a tokenizer's decoded text), or None where it may be
    left out: bytes and other values get an error that names them, not one from deep inside."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")


def _tool_digest(tools: Any) -> tuple[list[str] | None, dict[str, dict[str, Any]] | None]:
    """The tools' names and parameter properties (see ``tool_names_and_schemas``); None, None
    for no tools."""
    if tools is None:
        return None, None
    return tool_names_and_schemas(tools)


class _no_context:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def load(
    name_or_path: str | Path,
    *,
    template_name: str | None = None,
    special_tokens: Mapping[str, str] | None = None,
    clock: Callable[[], datetime] | None = None,
    family: str | None = None,
    reasoning_tags: tuple[str, str] | None = None,
) -> Codec:
    """Load a codec: a bundled template name (``"qwen3"``), a ``.jinja`` file, a model folder,
    or a template's own text (a string holding Jinja tags: ``tokenizer.chat_template``, a
    template from a request), named ``chat_template``.

    ``template_name`` picks a named template in a model folder (e.g. ``"tool_use"``);
    ``special_tokens`` overrides bos/eos/...; ``clock`` fixes what ``strftime_now`` sees;
    ``family`` names the wire format when it cannot be told from the template;
    ``reasoning_tags`` (opening, closing) are the model's reasoning markers where its template
    never writes them (MiniMax-M1's ``("<think>", "</think>")``): they replace what is read off
    the template.
    """
    template = find_template(name_or_path, template_name=template_name)
    if special_tokens:
        template.special_tokens.update(special_tokens)
    # A template that does not compile is reported now, by name, not at the first render.
    check_syntax(template.source, template.name)
    return Codec(template, clock=clock, family=family, reasoning_tags=reasoning_tags)


def load_from_tokenizer(
    tokenizer: Any,
    *,
    template_name: str | None = None,
    family: str | None = None,
    reasoning_tags: tuple[str, str] | None = None,
) -> Codec:
    """The codec of a loaded tokenizer's own chat template (``tokenizer.chat_template``), with
    its special tokens: what a server that holds the tokenizer, not the model folder, needs.

    Tokenizers that carry the same template share one ``Codec`` (the format is read from the
    template once), so calling this for every request costs a dictionary lookup.
    """
    template = template_from_tokenizer(tokenizer, template_name=template_name)
    return _codec_of(
        template.source,
        template.name,
        tuple(sorted(template.special_tokens.items())),
        tuple(sorted(template.alternatives.items())),
        template.tool_use_source,
        family,
        _checked_tags(reasoning_tags),
    )


def _checked_tags(tags: tuple[str, str] | None) -> tuple[str, str] | None:
    if tags is None:
        return None
    if not (isinstance(tags, (tuple, list)) and len(tags) == 2 and all(isinstance(t, str) and t.strip() for t in tags)):
        raise ValueError(f"reasoning_tags must be two non-blank strings, (opening, closing); got {tags!r}")
    return (tags[0], tags[1])


@lru_cache(maxsize=32)
def _codec_of(
    source: str,
    name: str,
    special_tokens: tuple[tuple[str, str], ...],
    alternatives: tuple[tuple[str, str], ...],
    tool_use_source: str | None,
    family: str | None,
    reasoning_tags: tuple[str, str] | None = None,
) -> Codec:
    check_syntax(source, name)
    template = TemplateSource(
        source=source,
        name=name,
        special_tokens=dict(special_tokens),
        alternatives=dict(alternatives),
        tool_use_source=tool_use_source,
    )
    return Codec(template, family=family, reasoning_tags=reasoning_tags)
