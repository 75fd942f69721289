"""chatcodec: render chat conversations through a model's chat template, and parse the model's
text back into structured messages."""

from chatcodec.check.special_tokens import SpecialTokenError, SpecialTokenFinding, SpecialTokenWarning
from chatcodec.codec import Codec, load, load_from_tokenizer
from chatcodec.errors import (
    ChatCodecError,
    InvalidMessageError,
    ParseError,
    TemplateNotFoundError,
    TemplateRenderError,
    TemplateSecurityError,
    UnsupportedTemplateError,
)
from chatcodec.messages import FunctionCall, Message, Tool, ToolCall, parse_messages, parse_tools
from chatcodec.render.isolated import render_isolated
from chatcodec.render.sandbox import DEFAULT_LIMITS, RenderLimits, render_limits
from chatcodec.resources import bundled_template_names

__version__ = "0.1.0"

__all__ = [
    "ChatCodecError",
    "Codec",
    "DEFAULT_LIMITS",
    "FunctionCall",
    "InvalidMessageError",
    "Message",
    "ParseError",
    "RenderLimits",
    "SpecialTokenError",
    "SpecialTokenFinding",
    "SpecialTokenWarning",
    "TemplateNotFoundError",
    "TemplateRenderError",
    "TemplateSecurityError",
    "Tool",
    "ToolCall",
    "UnsupportedTemplateError",
    "bundled_template_names",
    "load",
    "load_from_tokenizer",
    "parse_messages",
    "parse_tools",
    "render_isolated",
    "render_limits",
]
