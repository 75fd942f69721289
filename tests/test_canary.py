"""Canaries for the library internals chatcodec relies on (all reached from one module each:
chatcodec/parse/lalr.py for Lark, chatcodec/render/sandbox.py for Jinja). A new release that
moves them fails here, by name, rather than deep inside a parse."""

from __future__ import annotations

import jinja2
import lark

from chatcodec.parse.lalr import LalrStepper, LalrTable

GRAMMAR = """
start: A b* C?
b: B
A: "a"
B: "b"
C: "c"
"""


def test_lark_tables_and_the_stepper_over_them() -> None:
    table = LalrTable(GRAMMAR, "start")
    assert isinstance(table.states, dict) and table.states
    assert {t.name for t in table.terminals} == {"A", "B", "C"}
    assert table.rule_expansions()["b"] == [[("B", True)]]
    stepper = LalrStepper(table)
    first = stepper.initial
    assert stepper.accepts(first, "A") and not stepper.accepts(first, "B") and not stepper.accepts_end(first)
    after_a = stepper.step(first, "A")
    assert after_a is not None and len(after_a) == 2
    assert stepper.accepts(after_a, "B") and stepper.accepts(after_a, "C") and stepper.accepts_end(after_a)
    after_b = stepper.step(after_a, "B")
    assert after_b is not None and stepper.accepts(after_b, "C")  # C comes after reducing b
    assert stepper.step(after_b, "A") is None
    after_c = stepper.step(after_b, "C")
    assert after_c is not None and stepper.accepts_end(after_c) and not stepper.accepts(after_c, "B")


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
