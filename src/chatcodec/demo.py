"""``chatcodec demo``: the main job, on the bundled example data."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, TextIO

import chatcodec


def example_conversation() -> dict[str, Any]:
    text = resources.files("chatcodec.examples").joinpath("conversation.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _heading(out: TextIO, title: str) -> None:
    out.write(f"\n=== {title} ===\n")


def run_demo(out: TextIO) -> int:
    conversation = example_conversation()
    for name in chatcodec.bundled_template_names():
        codec = chatcodec.load(name)
        _heading(out, f"render with {name}")
        out.write(codec.render(conversation["messages"], tools=conversation["tools"], add_generation_prompt=False))
        out.write("\n")
    return 0
