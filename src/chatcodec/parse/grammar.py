"""A format's composed grammar, compiled for the incremental engine."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chatcodec.check.special_tokens import TOKEN_SHAPE
from chatcodec.parse.json_scan import Shape
from chatcodec.parse.lalr import LalrStepper, LalrTable, LarkGrammarError, PatternRE, PatternStr
from chatcodec.parse.lexer import LONG_SPELLING, DelimiterMatcher, GrammarError, spellings_of_pattern

# Free-text terminals whose text is JSON (delimiters inside its strings are not delimiters), and
# the shape of their value: a call's object, a list of call objects, any value.
JSON_SHAPES: dict[str, Shape] = {
    "TOOL_CALL": "object",
    "TOOL_CALL_REST": "object_opened",  # after a delimiter spelled with the opening brace
    "TOOL_CALLS": "array",
    "TOOL_CALL_OR_CALLS": "object_or_array",
    "TOOL_CALL_OBJECTS": "objects_or_array",  # objects one after another (or a list of them)
    "TOOL_CALLS_REST": "array_opened",
    "TOOL_ARGUMENTS": "value",
    "TOOL_ARGUMENTS_REST": "object_opened",
    "TOOL_DEFINITION": "value",
}
# Readers take the members of these; the others are only scanned for their strings.
JSON_READ = frozenset(JSON_SHAPES) - {"TOOL_DEFINITION"}
START_SYMBOLS = ("completion", "completion_unprompted", "transcript")
# Delimiters that may be spelled alike, the first taken where a state accepts both: a reasoning
# block that is a message of its own ends with the message's end (harmony's ``<|end|>``, with
# the next message's header left out), and it is the turn's end only where no reasoning is open.
# A tool result's header may number it as the calls are (Kimi K3's `` index="1"<|sep|>`` after
# a call's name and after a result's tool): one spelling, the call's where a state takes both.
SHARED_SPELLINGS: tuple[tuple[str, str], ...] = (
    ("THINK_CLOSE", "END"),
    ("NAME_END", "TOOL_NAME_END"),
    # A message of calls ends like every other turn, and like an answer whose stop token the
    # server took (HyperCLOVA X's <|im_end|>).
    ("CALL_CLOSE", "END"),
    ("CALL_CLOSE", "SYSTEM_END"),
    # A call closed by its message's end (gpt-oss-20b's first template: <|end|>) is closed there
    # where a call is open, and the turn ends there where none is.
    ("CALL_END", "END"),
)


def _shared(spelling: str, names: list[str]) -> tuple[str, tuple[str, ...]]:
    """The delimiter a spelling is where no state prefers another, and the ones it prefers, in
    ``SHARED_SPELLINGS`` order; a spelling shared any other way is an error."""
    for base in names:
        others = [other for other in names if other != base]
        if all((other, base) in SHARED_SPELLINGS for other in others):
            return base, tuple(sorted(others, key=lambda other: SHARED_SPELLINGS.index((other, base))))
    raise GrammarError(f"{spelling!r} spells both {names[0]} and {names[1]}")


@dataclass(frozen=True)
class StateInfo:
    """What one LALR state accepts: its delimiter matcher and its free-text terminal, if any."""

    matcher: DelimiterMatcher
    free_text: str | None


def _telling(spelling: str) -> bool:
    """Is a spelling, found where it is not allowed, worth a diagnostic? Not punctuation alone,
    and not a template's long fixed text (a system preamble, a tools prompt), which a model does
    not write and which would be looked for at every character that could begin it."""
    bare = "".join(spelling.split())
    return bool(bare) and (len(bare) > 2 or any(char.isalnum() for char in bare)) and len(spelling) <= LONG_SPELLING


class FamilyGrammar:
    """A Lark LALR grammar plus, per parser state, the delimiters it accepts."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        starts = [s for s in START_SYMBOLS if re.search(rf"^\??{s}\s*:", text, re.MULTILINE)]
        if not starts:
            raise GrammarError(f"grammar {name!r} defines neither 'completion' nor 'transcript'")
        self.starts = tuple(starts)
        # One parser per start symbol: LALR merges the lookaheads of states that look alike,
        # and across start symbols that would let a transcript's delimiter pass as one a
        # completion accepts.
        try:
            self.tables = {start: LalrTable(text, start) for start in starts}
        except LarkGrammarError as exc:
            raise GrammarError(f"grammar {name!r} is not LALR: {exc}") from None
        self.spellings: dict[str, str] = {}  # spelling -> delimiter terminal
        # A shared spelling -> the delimiters it is first, in order, where a state takes them.
        self._preferred: dict[str, tuple[str, ...]] = {}
        spelled_by: dict[str, list[str]] = {}
        terminals = {t.name: t for table in self.tables.values() for t in table.terminals}
        for terminal in terminals.values():
            pattern = terminal.pattern
            if isinstance(pattern, PatternStr):
                options = [pattern.value]
            elif isinstance(pattern, PatternRE):
                options = spellings_of_pattern(pattern.value, 0 if not pattern.flags else 1)
            else:  # pragma: no cover - Lark has no other pattern kinds
                raise GrammarError(f"terminal {terminal.name} has an unknown pattern type")
            for spelling in options:
                if not spelling:
                    raise GrammarError(f"delimiter {terminal.name} can be empty")
                names = spelled_by.setdefault(spelling, [])
                if terminal.name not in names:
                    names.append(terminal.name)
        for spelling, names in spelled_by.items():
            self.spellings[spelling] = names[0]
            if len(names) > 1:
                # The spelling is the other delimiter's (what its shortest spelling is, what a
                # rendered transcript's turn ends), and the preferred ones' where a state takes them.
                self.spellings[spelling], self._preferred[spelling] = _shared(spelling, names)
        # (A delimiter whose every spelling is shared is one still: where a state takes it.)
        self.delimiters = frozenset(self.spellings.values()) | frozenset(t for ts in self._preferred.values() for t in ts)
        # Outside its strings, JSON text is made of these characters only (NaN and Infinity
        # being Python's extensions). If no delimiter begins with one (whitespace aside), none
        # can begin inside a complete JSON value except within a string, and the engine may
        # skip such a value whole.
        json_outside = set(' \t\n\r{}[],:"-+.0123456789eEtrufalsnNaIiy')
        self.json_safe_delimiters = all(
            spelling.lstrip(" \t\n\r")[0] not in json_outside
            for spelling in self.spellings
            if spelling.strip(" \t\n\r")
        )
        # Turn ends spelled as one special token (``<|eot_id|>``, ``<|im_end|>``): in a rendered
        # conversation no field writes one (the renderer reports those that do), so there it
        # ends the turn even inside what reads as a JSON string, an assistant answer that
        # begins with "{" and leaves a quote open.
        self.turn_end_tokens = frozenset(
            spelling for spelling, terminal in self.spellings.items()
            if terminal == "END" and TOKEN_SHAPE.fullmatch(spelling.strip(" \t\n\r"))
        )
        # A special token that begins a longer spelling and is no spelling of its own
        # (Gemma's ``<|tool_call>`` of ``<|tool_call>call:``, gpt-oss's ``<|channel|>``): found
        # where the rest does not follow, it is reported as stray as any rejected delimiter is.
        self._token_heads: dict[str, str] = {}
        for spelling, terminal in self.spellings.items():
            head = TOKEN_SHAPE.match(spelling.lstrip(" \t\n\r"))
            if head is not None and head.group() not in self.spellings and head.group() != spelling.strip(" \t\n\r"):
                self._token_heads.setdefault(head.group(), terminal)
        self._states: dict[tuple[str, int], StateInfo] = {}
        self._literals: dict[str, str] = {}
        self._steppers: dict[str, LalrStepper] = {}
        self.completion_terminals = self._terminals_under("completion") if "completion" in starts else frozenset()

    def stepper(self, start: str) -> LalrStepper:
        """The parse table of a start symbol, stepped on state stacks (one per grammar, so the
        steps it remembers serve every parse)."""
        stepper = self._steppers.get(start)
        if stepper is None:
            stepper = self._steppers[start] = LalrStepper(self.tables[start])
        return stepper

    def state_info(self, start: str, state: int) -> StateInfo:
        key = (start, state)
        info = self._states.get(key)
        if info is None:
            info = self._build_state(self.tables[start].states[state])
            self._states[key] = info
        return info

    def _build_state(self, actions: dict[str, object]) -> StateInfo:
        accepted = {s: t for s, t in self.spellings.items() if t in actions}
        for spelling, preferred in self._preferred.items():
            taken = next((t for t in preferred if t in actions), None)
            if taken is not None:
                accepted[spelling] = taken
        # A spelling the state rejects is still worth reporting as stray, unless it is ordinary
        # text everywhere else: whitespace, or a bracket or two of punctuation (a separator
        # ", ", a bare "{" that opens Llama's calls, Qwen3-Coder's ">"), which would also be
        # looked at at every occurrence inside JSON.
        # Spellings that begin with whitespace are left out too (their bare form is looked for):
        # otherwise every delta that ends in a space or a newline is held back.
        others = {
            s: t
            for s, t in self.spellings.items()
            if s not in accepted and _telling(s) and s[:1] not in " \n\t\r"
        }
        others.update(self._token_heads)
        free = [t for t in actions if t.isupper() and t not in self.delimiters and not t.startswith("$")]
        if len(free) > 1:
            raise GrammarError(f"grammar {self.name!r}: a state accepts two kinds of free text: {sorted(free)}")
        return StateInfo(DelimiterMatcher(accepted, others), free[0] if free else None)

    def _terminals_under(self, rule: str) -> frozenset[str]:
        """The delimiters a rule (and the rules it uses) can contain."""
        expansions = self.tables[rule].rule_expansions()
        seen: set[str] = set()
        found: set[str] = set()
        todo = [rule]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for expansion in expansions.get(name, []):
                for symbol, is_terminal in expansion:
                    if is_terminal:
                        found.add(symbol)
                    else:
                        todo.append(symbol)
        return frozenset(found & self.delimiters)

    def literal(self, terminal: str) -> str:
        """The shortest spelling of a delimiter (what a template writes at the least)."""
        known = self._literals.get(terminal)
        if known is not None:
            return known  # (asked on every parse that starts inside reasoning)
        options = [s for s, t in self.spellings.items() if t == terminal]
        if not options:
            raise GrammarError(f"grammar {self.name!r} has no delimiter {terminal}")
        shortest = self._literals[terminal] = min(options, key=len)
        return shortest

    def spellings_of(self, terminal: str) -> list[str]:
        return sorted((s for s, t in self.spellings.items() if t == terminal), key=len)


_COMPILED: dict[str, FamilyGrammar] = {}
_MAX_COMPILED = 256


def compile_grammar(name: str, text: str) -> FamilyGrammar:
    """The compiled grammar of a format (compiled once per distinct text)."""
    grammar = _COMPILED.get(text)
    if grammar is None:
        grammar = FamilyGrammar(name, text)
        if len(_COMPILED) >= _MAX_COMPILED:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[text] = grammar
    return grammar
