"""Canaries for the library internals chatcodec relies on (all reached from one module each:
chatcodec/parse/lalr.py for Lark, chatcodec/render/sandbox.py for Jinja). A new release that
moves them fails here, by name, rather than deep inside a parse."""

from __future__ import annotations

import jinja2
import lark
import pytest
from lark.exceptions import UnexpectedInput

from chatcodec.parse.lalr import LalrTable

GRAMMAR = """
start: A b* C?
b: B
A: "a"
B: "b"
C: "c"
"""


def test_lark_tables_and_interactive_parser() -> None:
    table = LalrTable(GRAMMAR, "start")
    assert isinstance(table.states, dict) and table.states
    assert {t.name for t in table.terminals} == {"A", "B", "C"}
    assert table.rule_expansions()["b"] == [[("B", True)]]
    parser = table.parser()
    first = parser.state
    assert parser.shifts("A") and not parser.would_accept("B")
    parser.feed("A", "a")
    assert parser.state != first and len(parser.stack()) == 2
    assert parser.would_accept("B") and parser.would_accept("C") and parser.accepts_end()
    parser.feed("B", "b")
    assert not parser.shifts("C")  # C comes after reducing b
    with pytest.raises(UnexpectedInput):
        parser.feed("A", "a")


def test_lark_version_is_in_the_tested_range() -> None:
    major, minor = (int(part) for part in lark.__version__.split(".")[:2])
    assert (1, 1) <= (major, minor) < (1, 4)


def test_jinja_code_generator_hooks() -> None:
    from jinja2.compiler import CodeGenerator, Frame, optimizeconst

    for name in ("visit_Concat", "visit_Filter", "visit_Call", "visit_Output"):
        assert callable(getattr(CodeGenerator, name)), name
    assert callable(optimizeconst) and Frame is not None
    major, minor = (int(part) for part in jinja2.__version__.split(".")[:2])
    assert (major, minor) == (3, 1)
