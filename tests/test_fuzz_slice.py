"""A small, seeded slice of `make fuzz`: every format, every promise, a few dozen inputs each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import run as fuzz  # noqa: E402


@pytest.mark.parametrize("name", sorted(fuzz.FORMATS))
def test_fuzz_slice_keeps_every_promise(name: str) -> None:
    violations = fuzz.run([name], seed=20261130, per_format=40, max_size=1500, log=lambda _: None)
    assert violations[name] == []


def test_the_fuzzer_finds_a_broken_promise(monkeypatch: pytest.MonkeyPatch) -> None:
    # A parser whose spans lose a character must be reported.
    import chatcodec.parse.stream as stream

    real = stream.ParseResult.reassemble
    monkeypatch.setattr(stream.ParseResult, "reassemble", lambda self: real(self)[1:])
    violations = fuzz.run(["qwen3"], seed=1, per_format=5, max_size=300, log=lambda _: None)
    assert any("spans do not tile" in line for line in violations["qwen3"])
