"""Names and keys written with XML attributes their template does not have."""

from __future__ import annotations

import re

# A name or a parameter's key in quotes, followed by attributes the template does not write
# (MiniMax-M2 models write ``<parameter name="command" type="string">``, echoing the tool's
# schema): the run up to the tag's end is ``command" type="string``.
_WITH_ATTRIBUTES = re.compile(r'(?P<value>[^"]+)"(?:\s+[\w:.-]+="[^"]*")*\s+[\w:.-]+="[^"]*')


def without_attributes(text: str) -> tuple[str, str]:
    """``text`` less the attributes written after it, and those attributes ("" if none)."""
    found = _WITH_ATTRIBUTES.fullmatch(text)
    if found is None:
        return text, ""
    value = found.group("value").strip()
    return value, text[found.end("value") + 1 :].strip() + '"'
