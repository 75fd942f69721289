"""Everything chatcodec uses of Lark's internals, in one place.

The engine needs more than Lark's public parsing API: the LALR parse table (which terminals a
state accepts, shift or reduce, and where a reduction goes), which it steps itself on state
stacks, building no tree. Lark exposes the table through attributes that are not public API,
so they are reached here only; ``tests/test_canary.py`` checks them against the installed
Lark, and ``pyproject.toml`` bounds the version.
"""

from __future__ import annotations

from typing import Any

from lark import Lark
from lark.exceptions import LarkError as LarkGrammarError
from lark.lexer import PatternRE, PatternStr
from lark.parsers.lalr_analysis import Shift

__all__ = ["LalrStepper", "LalrTable", "LarkGrammarError", "PatternRE", "PatternStr"]


class LalrTable:
    """The LALR table of one grammar and start symbol."""

    def __init__(self, text: str, start: str) -> None:
        self.lark = Lark(text, parser="lalr", lexer="basic", start=start)
        self.start = start
        self.states: dict[int, dict[str, Any]] = self.lark.parser.parser.parser.parse_table.states

    @property
    def terminals(self) -> list[Any]:
        return list(self.lark.terminals)

    def rule_expansions(self) -> dict[str, list[list[tuple[str, bool]]]]:
        """Each rule's alternatives, as (symbol name, is a terminal) sequences."""
        out: dict[str, list[list[tuple[str, bool]]]] = {}
        for rule in self.lark.rules:
            out.setdefault(rule.origin.name, []).append([(s.name, s.is_term) for s in rule.expansion])
        return out


STEPS_CACHE_SIZE = 8192  # (stack, terminal) pairs remembered per table


class LalrStepper:
    """The parse table stepped on state stacks held as tuples: no tokens, no values, each step
    remembered. For a reader that only asks whether terminals may follow each other."""

    __slots__ = ("_states", "_end_state", "initial", "_steps")

    def __init__(self, table: LalrTable) -> None:
        parse_table = table.lark.parser.parser.parser.parse_table
        self._states: dict[int, dict[str, Any]] = parse_table.states
        self._end_state: int = parse_table.end_states[table.start]
        self.initial: tuple[int, ...] = (parse_table.start_states[table.start],)
        self._steps: dict[tuple[tuple[int, ...], str], tuple[int, ...] | None] = {}

    def step(self, stack: tuple[int, ...], terminal: str) -> tuple[int, ...] | None:
        """The stack after ``terminal`` (reductions, then its shift), or None if rejected."""
        key = (stack, terminal)
        steps = self._steps
        if key in steps:
            return steps[key]
        after = self._step(list(stack), terminal)
        if len(steps) < STEPS_CACHE_SIZE:
            steps[key] = after
        return after

    def accepts(self, stack: tuple[int, ...], terminal: str) -> bool:
        return self.step(stack, terminal) is not None

    def accepts_end(self, stack: tuple[int, ...]) -> bool:
        return self.step(stack, "$END") is not None

    def _step(self, stack: list[int], terminal: str) -> tuple[int, ...] | None:
        states = self._states
        while True:
            action = states[stack[-1]].get(terminal)
            if action is None:
                return None
            kind, argument = action
            if kind is Shift:
                return None if terminal == "$END" else (*stack, argument)
            size = len(argument.expansion)
            if size:
                del stack[-size:]
            stack.append(states[stack[-1]][argument.origin.name][1])
            if terminal == "$END" and stack[-1] == self._end_state:
                return tuple(stack)
