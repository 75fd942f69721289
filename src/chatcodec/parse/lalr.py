"""Everything chatcodec uses of Lark's internals, in one place.

The engine needs more than Lark's public parsing API: the LALR parse table (which terminals a
state accepts, shift or reduce), the parser's state stack, and a parser that builds no tree.
Lark's interactive parser exposes most of it through attributes that are not public API, so
they are reached here only; ``tests/test_lark_canary.py`` checks them against the installed
Lark, and ``pyproject.toml`` bounds the version.
"""

from __future__ import annotations

from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError as LarkGrammarError
from lark.exceptions import UnexpectedInput
from lark.lexer import PatternRE, PatternStr
from lark.parsers.lalr_analysis import Shift

__all__ = ["LalrParser", "LalrStepper", "LalrTable", "LarkGrammarError", "PatternRE", "PatternStr"]


def _build_nothing(children: object) -> None:
    return None


class LalrTable:
    """The LALR table of one grammar and start symbol, building no tree."""

    def __init__(self, text: str, start: str) -> None:
        self.lark = Lark(text, parser="lalr", lexer="basic", start=start)
        self.start = start
        # Build no tree: the engine needs the parser's states only, and a tree would keep every
        # turn and tool call on Lark's value stack for the whole parse.
        lalr = self.lark.parser.parser.parser
        lalr.callbacks = {rule: _build_nothing for rule in lalr.callbacks}
        self.states: dict[int, dict[str, Any]] = lalr.parse_table.states
        # Whether the input may end depends on the state stack alone: answered once per stack.
        self.ends: dict[tuple[int, ...], bool] = {}

    @property
    def terminals(self) -> list[Any]:
        return list(self.lark.terminals)

    def rule_expansions(self) -> dict[str, list[list[tuple[str, bool]]]]:
        """Each rule's alternatives, as (symbol name, is a terminal) sequences."""
        out: dict[str, list[list[tuple[str, bool]]]] = {}
        for rule in self.lark.rules:
            out.setdefault(rule.origin.name, []).append([(s.name, s.is_term) for s in rule.expansion])
        return out

    def parser(self) -> LalrParser:
        return LalrParser(self.lark.parse_interactive(start=self.start), self.ends)


ENDS_CACHE_SIZE = 4096  # stacks remembered per table; deep nesting makes many, so bounded


class LalrParser:
    """Lark's interactive parser, fed one token at a time."""

    __slots__ = ("_interactive", "_ends")

    def __init__(self, interactive: Any, ends: dict[tuple[int, ...], bool] | None = None) -> None:
        self._interactive = interactive
        self._ends = ends if ends is not None else {}

    @property
    def state(self) -> int:
        return int(self._interactive.parser_state.position)

    def stack(self) -> tuple[int, ...]:
        return tuple(self._interactive.parser_state.state_stack)

    def shifts(self, terminal: str) -> bool:
        """Does the current state shift ``terminal`` (rather than reduce first)?"""
        state = self._interactive.parser_state
        action, _ = state.parse_conf.parse_table.states[state.position][terminal]
        return action is Shift

    def feed(self, terminal: str, text: str) -> None:
        """Feed a token; raises ``UnexpectedInput`` if the grammar rejects it."""
        self._interactive.feed_token(Token(terminal, text))

    def would_accept(self, terminal: str) -> bool:
        """Would the parser accept ``terminal`` next (after any reductions)?"""
        trial = self._interactive.copy(deepcopy_values=False)
        try:
            trial.feed_token(Token(terminal, ""))
        except UnexpectedInput:
            return False
        return True

    def accepts_end(self) -> bool:
        """Could the input end here?"""
        stack = tuple(self._interactive.parser_state.state_stack)
        known = self._ends.get(stack)
        if known is not None:
            return known
        answer = self._try_end()
        if len(self._ends) < ENDS_CACHE_SIZE:
            self._ends[stack] = answer
        return answer

    def _try_end(self) -> bool:
        if "$END" not in self._interactive.choices():
            return False
        trial = self._interactive.copy(deepcopy_values=False)
        try:
            trial.feed_eof()
        except UnexpectedInput:
            return False
        return True


def rejected(exc: BaseException) -> bool:
    return isinstance(exc, UnexpectedInput)


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
