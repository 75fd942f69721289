"""The README's "Formats" section: its example runs, and its `chatcodec inspect` session prints
what the command prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chatcodec.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "### Formats: any template"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    return text[start : text.index("\n## ", start)]


def test_formats_example_runs() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", section(), re.DOTALL)
    exec(compile(block, str(README), "exec"), {})


def test_inspect_session_prints_what_the_readme_shows(capsys: pytest.CaptureFixture[str]) -> None:
    (session,) = re.findall(r"```sh\n\$ chatcodec inspect -t qwen3\n(.*?)```", section(), re.DOTALL)
    assert main(["inspect", "-t", "qwen3"]) == 0
    assert capsys.readouterr().out == session
