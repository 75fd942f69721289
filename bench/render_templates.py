#!/usr/bin/env python3
"""Rendering speed against transformers on every repository template (tests/templates).

For each template that renders the conversation below, chatcodec's ``codec.render`` and
transformers' ``apply_chat_template(tokenize=False)`` and ``render_jinja_template`` are timed
side by side (interleaved rounds, CPU time, medians) on the same messages, after checking that
all three write the same text. transformers gets the message dicts chatcodec hands its template
(``codec.template_messages``) so that the texts can be compared; chatcodec gets the caller's
messages and validates and converts them itself, in its sandbox.

transformers is not a dependency of chatcodec: run this where it is installed, e.g. in the
peers' environment::

    python bench/render_templates.py [--rounds 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import chatcodec  # noqa: E402
from template_corpus import ALL_TEMPLATES, special_tokens  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool, which does what its name says for the user.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "what to look for"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    }
    for name in ("search_files", "get_weather", "run_sql")
]


def conversation() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant. " * 8}]
    for turn in range(5):
        messages.append({"role": "user", "content": f"Question {turn}: " + "how does this work, and why? " * 10})
        messages.append({"role": "assistant", "content": "It works like this. " * 15})
    messages.append({"role": "user", "content": "And one more thing?"})
    return messages


def cpu_median(function: Callable[[], object], rounds: int, repeat: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(repeat):
            function()
        samples.append((time.thread_time() - started) / repeat)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    try:
        from transformers import PreTrainedTokenizerFast
        from transformers.utils.chat_template_utils import render_jinja_template
        from tokenizers import Tokenizer, models
    except ImportError:
        print("transformers is not installed here; see the docstring", file=sys.stderr)
        return 2
    # apply_chat_template needs a tokenizer object; with tokenize=False it only renders.
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")))
    messages = conversation()
    rows = []
    for path in ALL_TEMPLATES:
        special = special_tokens(path)
        try:
            codec = chatcodec.load(path, special_tokens=special)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ours = codec.render(messages, tools=TOOLS, add_generation_prompt=True)
        except chatcodec.ChatCodecError:
            continue
        source = codec.source_for(TOOLS)
        dicts = codec.template_messages(messages)
        variables = dict(codec.special_tokens)

        def render_ours() -> str:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return codec.render(messages, tools=TOOLS, add_generation_prompt=True)

        def render_apply() -> str:
            return tokenizer.apply_chat_template(  # type: ignore[no-any-return]
                dicts, tools=TOOLS, chat_template=source, tokenize=False, add_generation_prompt=True, **variables
            )

        def render_bare() -> str:
            return render_jinja_template(  # type: ignore[no-any-return]
                conversations=[dicts], tools=TOOLS, chat_template=source, add_generation_prompt=True, **variables
            )[0][0]

        try:
            same = render_apply() == ours and render_bare() == ours
        except Exception:  # noqa: BLE001 - a template transformers cannot render is not compared
            continue
        if not same:
            print(f"{path.stem}: texts differ, not timed", file=sys.stderr)
            continue
        started = time.thread_time()
        render_ours()
        repeat = max(1, int(0.01 / max(time.thread_time() - started, 1e-6)))
        times: dict[str, list[float]] = {"chatcodec": [], "apply_chat_template": [], "render_jinja_template": []}
        for _ in range(args.rounds):  # interleaved, so that noise falls on all three alike
            times["chatcodec"].append(cpu_median(render_ours, 1, repeat))
            times["apply_chat_template"].append(cpu_median(render_apply, 1, repeat))
            times["render_jinja_template"].append(cpu_median(render_bare, 1, repeat))
        row = {"template": path.stem, "chars": len(ours), **{key: statistics.median(value) * 1e6 for key, value in times.items()}}
        rows.append(row)
        print(
            f"{path.stem:55s} {row['chatcodec']:8.1f} us  apply ×{row['apply_chat_template'] / row['chatcodec']:.2f}"
            f"  bare ×{row['render_jinja_template'] / row['chatcodec']:.2f}",
            flush=True,
        )
    for peer in ("apply_chat_template", "render_jinja_template"):
        ratios = sorted(row[peer] / row["chatcodec"] for row in rows)
        at_least = sum(ratio >= 1 for ratio in ratios)
        print(
            f"{peer}: {len(ratios)} templates, chatcodec as fast or faster on {at_least}; ratio min ×{ratios[0]:.2f}, "
            f"median ×{statistics.median(ratios):.2f}, max ×{ratios[-1]:.2f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
