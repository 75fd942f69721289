"""Look for inputs whose cost per character grows with their length, in every format.

    python fuzz/linear_scan.py [--format NAME ...] [--combinations N] [--seed N]

For each format of the fuzz harness (``fuzz/run.py``) it builds repeated units: answers the
template writes, one after another, and the format's own delimiters, each alone followed by
prose or JSON, and random combinations of two to four of them with JSON, prose and call
openings in between. Each unit is
repeated to about 3,000 and 24,000 characters and read one-shot (``codec.parse``) or streamed
in 7-character deltas, with and without the template's prompt. A reading whose cost per
character at the larger size is over 3 times that at the smaller one is timed once more at
twice the size; if the cost per character grows again by half, the unit is reported.

This is a timing tool, so its numbers are noisy: run it on an idle machine. What it reports is
a candidate, to be confirmed by counting work (``tests/test_adversarial.py`` does that for
the cases it found). The exit status is 1 if anything was reported.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as harness  # noqa: E402 - the fuzz harness's formats, loader and tools

FILLERS = ("x", " ", "\n", '{"a": 1}', '"', "{", "ab ", "get_weather", '{"name": "get_weather", "arguments": {')
SMALL = 3_000  # characters
GROWTH = 8  # the larger size, in units of the smaller
SUSPECT = 3.0  # cost per character at the larger size over the smaller, before a second look
CONFIRM = 1.5  # the same ratio at twice the larger size, to report it
MAX_ALONE = 24  # delimiters repeated alone, per format


def _seconds(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _reader(codec: Any, unit: str, prompt: str | None, streamed: bool) -> Callable[[int], float]:
    """The seconds it takes to read ``unit`` repeated ``n`` times."""

    def read(n: int) -> float:
        text = unit * n
        if not streamed:
            return _seconds(lambda: codec.parse(text, prompt=prompt, tools=harness.TOOLS))

        def stream() -> None:
            parser = codec.stream(prompt=prompt, tools=harness.TOOLS)
            for at in range(0, len(text), 7):
                parser.feed(text[at : at + 7])
            parser.close()

        return _seconds(stream)

    return read


def _grows(read: Callable[[int], float], unit: str) -> str | None:
    """A description of how the cost per character grows, if it does; else None."""
    small = max(1, SMALL // len(unit))
    read(small)  # (the parser states the unit reaches, built once)
    base = min(read(small) for _ in range(2)) / small
    large = read(small * GROWTH) / (small * GROWTH)
    if large <= SUSPECT * base:
        return None
    larger = read(small * GROWTH * 2) / (small * GROWTH * 2)
    if larger <= CONFIRM * large:
        return None
    return f"{large / base:.1f}x then {larger / large:.1f}x per character"


def units(spellings: list[str], rng: random.Random, combinations: int) -> list[str]:
    """Delimiters alone (followed by prose, then by JSON), then random combinations. (A
    format with many spellings of one tag, with whitespace around it, has a sample of them
    alone: the combinations draw from all.)"""
    single = spellings if len(spellings) <= MAX_ALONE else sorted(rng.sample(spellings, MAX_ALONE))
    alone = [spelling + filler for spelling in single for filler in ("ab ", '{"a": 1}')]
    mixed = []
    for _ in range(combinations):
        parts = [rng.choice(spellings) for _ in range(rng.randint(2, 4))]
        mixed.append("".join(part + rng.choice(FILLERS) for part in parts))
    return alone + mixed


def scan(name: str, seed: int, combinations: int) -> list[str]:
    codec = harness.load(name)
    inputs = harness.Inputs(codec, random.Random(seed), 2_000)
    # (A default system prompt or a tools preamble is a delimiter too, but a long one: the
    # shorter ones are what a model writes.)
    spellings = sorted(spelling for spelling in codec.format.grammar.spellings if len(spelling) < 200)
    rng = random.Random(f"{seed}:{name}")
    found = []
    # (Whole answers the template writes, one after another: all but the first are text past
    # the end of the turn, full of the format's delimiters.)
    answers = ["".join(rng.sample(inputs.valid, min(3, len(inputs.valid))))] if inputs.valid else []
    for unit in answers + units(spellings, rng, combinations):
        for prompt in (inputs.prompt, None):
            for streamed in (False, True):
                growth = _grows(_reader(codec, unit, prompt, streamed), unit)
                if growth is not None:
                    how = "streamed" if streamed else "one-shot"
                    found.append(f"{name}: {unit!r} {how}, prompt={prompt is not None}: {growth}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", action="append", help="a format of fuzz/run.py (default: all)")
    parser.add_argument("--combinations", type=int, default=30, help="random combinations per format")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    names = args.format or list(harness.FORMATS)
    reported = 0
    for name in names:
        found = scan(name, args.seed, args.combinations)
        reported += len(found)
        print(f"{name:20} {len(found)} growing" + "".join(f"\n  {line}" for line in found), flush=True)
    return 1 if reported else 0


if __name__ == "__main__":
    sys.exit(main())
