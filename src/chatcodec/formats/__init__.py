"""The wire-format families chatcodec can parse, one small module each."""

from __future__ import annotations

from chatcodec.errors import UnsupportedTemplateError
from chatcodec.formats import deepseek, deepseek_v3, llama3_hermes, qwen3
from chatcodec.formats.base import Family

# Most specific first: a Llama-3 template with Hermes tool calls also contains "<tool_call>",
# and DeepSeek V3's fenced calls also contain V3.1's call delimiter.
FAMILIES: tuple[Family, ...] = (deepseek_v3.FAMILY, deepseek.FAMILY, llama3_hermes.FAMILY, qwen3.FAMILY)
BY_NAME = {family.name: family for family in FAMILIES}


def family_named(name: str) -> Family:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnsupportedTemplateError(f"unknown family {name!r} (known: {', '.join(sorted(BY_NAME))})") from None


def detect_family(template_source: str) -> Family | None:
    """The family whose delimiters the template writes, or None."""
    for family in FAMILIES:
        if family.matches(template_source):
            return family
    return None
