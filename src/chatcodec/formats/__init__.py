"""Formats: a turn framing + a reasoning syntax + a call syntax.

``format_for_template`` gives every template that renders a format: DeepSeek's templates get
their hand-written framing, every other template the framing read off its own output.
"""

from __future__ import annotations

from chatcodec.errors import UnsupportedTemplateError
from chatcodec.formats.base import Family, Format
from chatcodec.formats.derived import derive_format
from chatcodec.formats.named import NAMED, SIGNATURES
from chatcodec.formats.probe import Render

BY_NAME = {format.name: format for format in NAMED}

__all__ = ["BY_NAME", "Family", "Format", "format_for_template", "format_named"]


def format_named(name: str) -> Format:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnsupportedTemplateError(f"unknown format {name!r} (known: {', '.join(sorted(BY_NAME))})") from None


def hand_written_format(template_source: str) -> Format | None:
    """The hand-written format whose delimiters the template writes, if any."""
    for format, signature in SIGNATURES:
        if all(literal in template_source for literal in signature):
            return format
    return None


def format_for_template(
    name: str,
    template_source: str,
    render: Render,
    eos_token: str | None = None,
    *,
    reasoning_tags: tuple[str, str] | None = None,
) -> Format:
    """The format a template writes (raises ``UnsupportedTemplateError`` if its output does not
    show where messages lie); ``reasoning_tags``, where given, are its reasoning markers."""
    known = hand_written_format(template_source) if reasoning_tags is None else None
    if known is not None:
        return known
    return derive_format(name, render, template_source, eos_token, reasoning_tags=reasoning_tags)
