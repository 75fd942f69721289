"""``Codec``: one chat template plus the wire-format family it writes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from chatcodec.errors import TemplateRenderError
from chatcodec.loading import TemplateSource, find_template
from chatcodec.messages import Message, Tool, parse_messages, parse_tools
from chatcodec.render import clock, render_source, template_needs

MessagesInput = Sequence[Message | Mapping[str, Any]]
ToolsInput = Sequence[Tool | Mapping[str, Any]] | None


class Codec:
    """Renders conversations through one chat template (and parses its format back)."""

    def __init__(self, template: TemplateSource, *, clock: Callable[[], datetime] | None = None) -> None:
        self.template = template
        self.name = template.name
        self.source = template.source
        self.special_tokens = dict(template.special_tokens)
        self._clock = clock
        self._needs = template_needs(template.source)

    def __repr__(self) -> str:
        return f"Codec({self.name!r})"

    # -- rendering ---------------------------------------------------------------------------

    def template_messages(self, messages: MessagesInput, *, source: str | None = None) -> list[dict[str, Any]]:
        """The message dicts the template (``source``, default this codec's) is given.

        Tool-call arguments come in the form the template needs: a dict where it serializes them
        itself, JSON text where it concatenates them, as given where it accepts both.
        """
        validated = parse_messages(list(messages))
        needs = self._needs if source is None else template_needs(source)
        form = {"dict": "dict", "string": "string", "either": "as_given"}[needs.arguments]
        return [message.to_hf(arguments=form) for message in validated]  # type: ignore[arg-type]

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
        **template_kwargs: Any,
    ) -> str:
        """Render ``messages`` exactly as ``tokenizer.apply_chat_template(..., tokenize=False)``."""
        text, _ = self._render(messages, tools, add_generation_prompt, template_kwargs, track_generation=False)
        return text

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
    ) -> tuple[str, list[tuple[int, int]]]:
        source = self.source_for(tools)
        message_dicts = self.template_messages(messages, source=source)
        validated_tools = parse_tools(list(tools) if tools is not None else None)
        tool_dicts = [tool.to_dict() for tool in validated_tools] if validated_tools is not None else None
        variables = {**self.special_tokens, **template_kwargs}

        def attempt(dicts: list[dict[str, Any]]) -> tuple[str, list[tuple[int, int]]]:
            return render_source(
                source,
                dicts,
                tools=tool_dicts,
                add_generation_prompt=add_generation_prompt,
                variables=variables,
                track_generation=track_generation,
            )

        with clock(self._clock) if self._clock is not None else _no_context():
            try:
                return attempt(message_dicts)
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
) -> Codec:
    """Load a codec: a bundled template name (``"qwen3"``), a ``.jinja`` file, or a model folder.

    ``template_name`` picks a named template in a model folder (e.g. ``"tool_use"``);
    ``special_tokens`` overrides bos/eos/...; ``clock`` fixes what ``strftime_now`` sees.
    """
    template = find_template(name_or_path, template_name=template_name)
    if special_tokens:
        template.special_tokens.update(special_tokens)
    return Codec(template, clock=clock)
