"""The exceptions chatcodec raises. Every one says what was wrong and where."""

from __future__ import annotations


class ChatCodecError(Exception):
    """Base class of every error chatcodec raises on purpose."""


class InvalidMessageError(ChatCodecError, ValueError):
    """A message, tool call or tool definition given by the caller is not valid."""


class TemplateNotFoundError(ChatCodecError, LookupError):
    """``load()`` was given a name or path that is not a template."""


class TemplateRenderError(ChatCodecError):
    """The template raised while rendering (``raise_exception`` or a Jinja error)."""


class TemplateSecurityError(TemplateRenderError):
    """The template tried to reach something the sandbox forbids (attributes, files, modules)."""


class UnsupportedTemplateError(ChatCodecError):
    """The template's wire format is not one of the families chatcodec can parse."""


class GrammarError(ChatCodecError):
    """A format's grammar breaks a rule the engine relies on (a bug in a grammar piece, or a
    framing read from a template that cannot be written as one LALR grammar)."""


class ParseError(ChatCodecError):
    """Strict parsing found model output that does not follow the format.

    ``position`` is the character offset in the parsed text, ``kind`` a short machine name.
    """

    def __init__(self, message: str, *, kind: str, position: int) -> None:
        super().__init__(f"{message} (at character {position})")
        self.kind = kind
        self.position = position
