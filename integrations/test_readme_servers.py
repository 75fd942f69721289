"""The README's "Serving" section: its Python examples run against the real servers' code."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Serving:"


def test_serving_examples_run() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    body = text[start : text.index("\n## ", start + len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", body, re.DOTALL)
    assert len(blocks) == 2
    namespace: dict[str, object] = {}  # the SGLang example reuses the vLLM example's tokenizer
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
