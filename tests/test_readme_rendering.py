"""The README's "Python API" examples run as written, and its "Command line" sessions print what
they show."""

from __future__ import annotations

import io
import re
import shlex
import sys
from pathlib import Path

import pytest

from chatcodec.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"
# `$ echo 'JSON' | chatcodec ARGS`, then the lines it prints.
SESSION_COMMAND = re.compile(r"^\$ echo '(?P<stdin>[^']*)' \| chatcodec (?P<args>.*)$")


def section(title: str) -> str:
    if not README.exists():
        pytest.skip("README.md is not next to the tests")
    text = README.read_text(encoding="utf-8")
    start = text.index(title)
    following = text.find("\n## ", start + len(title))
    return text[start : following if following >= 0 else len(text)]


def test_python_api_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", section("## Python API"), re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    for block in blocks:  # later blocks use names the earlier ones define
        exec(compile(block, str(README), "exec"), namespace)


def sessions() -> list[tuple[str, str, list[str]]]:
    """(stdin, arguments, printed lines) for every `$ echo ... | chatcodec ...` in the section."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", section("## Command line"), re.DOTALL):
        for chunk in re.split(r"\n(?=\$ )", block.strip("\n")):
            command, *printed = chunk.split("\n")
            match = SESSION_COMMAND.match(command)
            if match:
                found.append((match["stdin"], match["args"], printed))
    return found


def test_command_line_sessions_print_what_they_show(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = sessions()
    assert len(examples) >= 3
    for stdin, args, printed in examples:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(shlex.split(args))
        out, err = capsys.readouterr()
        shown = (out + err).rstrip("\n").split("\n")
        while printed and printed[-1] == "":
            printed.pop()
        assert shown == printed, args
        assert code == (2 if err else 0)
