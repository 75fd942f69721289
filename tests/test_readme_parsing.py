"""The README's "Parsing model output" examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Parsing model output"


def section_code() -> list[str]:
    if not README.exists():
        pytest.skip("README.md is not next to the tests")
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    body = text[start : following if following >= 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", body, re.DOTALL)


def test_parsing_examples_run() -> None:
    blocks = section_code()
    assert len(blocks) >= 4
    namespace: dict[str, object] = {}
    for block in blocks:  # later blocks use names the earlier ones define
        exec(compile(block, str(README), "exec"), namespace)
