"""Delimiter lexing derived from a grammar's terminals.

A family's grammar has two kinds of terminals:

* **delimiters**: terminals with a finite set of spellings (``"<tool_call>"``,
  ``/\\n?<\\/think>\\n{0,2}/``). Their spellings are enumerated from the grammar, never repeated
  in code.
* **free text** (``%declare``d): whatever lies between delimiters: reasoning, content, a tool
  call's JSON body. Their names say what they hold; terminals whose name ends in ``_JSON`` or is
  ``TOOL_CALL``/``TOOL_ARGUMENTS`` hold JSON, inside whose strings no delimiter is recognized.

For each parser state a ``DelimiterMatcher`` finds the leftmost-longest spelling of any delimiter
with one compiled regex, and tells how much of a chunk's tail must be held back because it could
still grow into a delimiter. Every delimiter of the grammar is searched for, accepted or not: one
the parser state does not accept is reported as *stray* and stays text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from chatcodec.errors import GrammarError

try:  # Python 3.11+
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import (  # type: ignore[import-not-found]
        BRANCH,
        IN,
        LITERAL,
        MAX_REPEAT,
        MIN_REPEAT,
        SUBPATTERN,
    )
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN  # type: ignore[no-redef]

# The most spellings one delimiter terminal may have; more means the pattern is not a delimiter.
MAX_SPELLINGS = 64
# Spellings longer than this are held back by direct comparison rather than by the tail regex.
LONG_SPELLING = 80


def spellings_of_pattern(pattern: str, flags: int = 0) -> list[str]:
    """Every string a finite regex can match, or raise ``GrammarError`` if it is not finite."""
    if flags:
        raise GrammarError(f"delimiter pattern {pattern!r} uses regex flags; write the spellings out")
    return sorted(_expand(_sre_parse.parse(pattern)))


def _expand(items: object) -> set[str]:
    results = {""}
    for op, arg in items:  # type: ignore[attr-defined]
        options = _expand_op(op, arg)
        results = {prefix + option for prefix in results for option in options}
        if len(results) > MAX_SPELLINGS:
            raise GrammarError("delimiter pattern has too many spellings")
    return results


def _expand_op(op: object, arg: object) -> set[str]:
    if op is LITERAL:
        return {chr(arg)}  # type: ignore[arg-type]
    if op is SUBPATTERN:
        return _expand(arg[-1])  # type: ignore[index]
    if op is BRANCH:
        return set(itertools.chain.from_iterable(_expand(branch) for branch in arg[1]))  # type: ignore[index]
    if op in (MAX_REPEAT, MIN_REPEAT):
        low: int
        high: int
        body: object
        low, high, body = arg  # type: ignore[misc]
        if high > 8:
            raise GrammarError("delimiter pattern repeats without a small bound")
        options = _expand(body)
        out: set[str] = set()
        for count in range(low, high + 1):
            for combo in itertools.product(options, repeat=count):
                out.add("".join(combo))
        return out
    if op is IN:
        chars = set()
        for inner_op, inner_arg in arg:  # type: ignore[attr-defined]
            if inner_op is not LITERAL:
                raise GrammarError("delimiter character classes may only list characters")
            chars.add(chr(inner_arg))
        return chars
    raise GrammarError(f"delimiter pattern uses {op}, which has no finite set of spellings")


@dataclass(frozen=True)
class Found:
    """A delimiter spelling found at ``start:end``; ``stray`` if the parser state rejects it."""

    start: int
    end: int
    terminal: str
    stray: bool


MAX_LEADS = 3  # characters looked for with str.find, at most
FIND_AHEAD = 64  # shorter text is searched by the regex alone
MAX_MISSES = 2  # candidates that were no delimiter before the leads' regexes take over
LEAD_STRETCH = 256  # characters the leads' regexes first look through (then twice as many, ...)


@dataclass
class DelimiterMatcher:
    """Finds delimiters in text for one parser state.

    ``accepted`` maps each spelling the state accepts to its terminal; ``others`` holds the
    grammar's remaining spellings, found only to be reported as stray.
    """

    accepted: dict[str, str]
    others: dict[str, str]
    _regex: re.Pattern[str] = field(init=False, repr=False)
    _tail: re.Pattern[str] = field(init=False, repr=False)
    _prefixes: frozenset[str] = field(init=False, repr=False)
    _long: tuple[str, ...] = field(init=False, repr=False)
    _accepted_regex: re.Pattern[str] = field(init=False, repr=False)
    _accepted_prefix: dict[str, str] = field(init=False, repr=False)
    _accepted_heads: frozenset[str] = field(init=False, repr=False)
    _accepted_long: tuple[str, ...] = field(init=False, repr=False)
    first_chars: re.Pattern[str] = field(init=False, repr=False)
    _longest: int = field(init=False, repr=False)
    _nested: bool = field(init=False, repr=False)
    _leads: tuple[str, ...] = field(init=False, repr=False)
    _slack: int = field(init=False, repr=False)
    _lead_searches: tuple[Callable[[str, int, int], re.Match[str] | None], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        spellings = {**self.others, **self.accepted}
        if not spellings:
            self._regex = re.compile(r"(?!)")
            self._tail = re.compile(r"(?!)")
            self._prefixes = frozenset()
            self._long = ()
            self._accepted_regex = re.compile(r"(?!)")
            self._accepted_prefix = {}
            self._accepted_heads = frozenset()
            self._accepted_long = ()
            self.first_chars = re.compile(r"(?!)")
            self._longest = 0
            self._nested = False
            self._leads = ()
            self._lead_searches = ()
            self._slack = 0
            return
        # A trie-shaped regex: one pass, and at the leftmost position the longest spelling wins.
        self._regex = re.compile(_trie_pattern(spellings, prefixes=False))
        # A spelling the state rejects must not hide one it accepts: one that begins it
        # ("<|end|>" inside a rejected "<|end|></s>") or begins inside it.
        self._accepted_regex = (
            re.compile(_trie_pattern(self.accepted, prefixes=False)) if self.accepted else re.compile(r"(?!)")
        )
        # The proper prefixes of the accepted spellings: where a rejected spelling is found
        # while the text that follows may still arrive, one of these beginning inside it may
        # still grow into a spelling that wins (see ``_found``).
        # (Long ones, a preamble, are compared directly: the set would grow with the square of
        # their length.)
        self._accepted_heads = frozenset(
            s[:i] for s in self.accepted if len(s) <= LONG_SPELLING for i in range(1, len(s))
        )
        self._accepted_long = tuple(s for s in self.accepted if len(s) > LONG_SPELLING)
        self._accepted_prefix = {}
        for other in self.others:
            inner = [a for a in self.accepted if other.startswith(a)]
            if inner:
                self._accepted_prefix[other] = max(inner, key=len)
        # Where a tail of the text could still grow into a spelling.
        # Prefixes of long spellings (a default system prompt, a tools preamble) are checked
        # directly: a regex or a set of all their prefixes would grow with the square of
        # their length.
        short = [s for s in spellings if len(s) <= LONG_SPELLING]
        self._long = tuple(s for s in spellings if len(s) > LONG_SPELLING)
        self._tail = re.compile(_trie_pattern(short, prefixes=True) + r"\Z") if short else re.compile(r"(?!)")
        self._prefixes = frozenset(s[:i] for s in short for i in range(1, len(s)))
        self.first_chars = re.compile("[" + "".join(sorted({re.escape(s[0]) for s in spellings})) + "]")
        self._longest = max(len(s) for s in spellings)
        # A spelling that contains another one past its first character (a long preamble
        # quoting "<tool_call>") could still be growing around a shorter match.
        self._nested = any(inner in outer[1:] for outer in spellings for inner in spellings if inner != outer)
        # Python's regex engine scans for a leading character class one character at a time
        # (some 300 MB/s of ASCII) but for a literal at C speed. Where every spelling is optional
        # leading whitespace and then a character from a short list, those characters are
        # found with str.find, and the regex is tried only just before each (see ``find``).
        bare = [spelling.lstrip(" \t\n\r") for spelling in spellings]
        leads = tuple(sorted({spelling[0] for spelling in bare if spelling}))
        self._slack = max(len(spelling) - len(stripped) for spelling, stripped in zip(spellings, bare))
        # (One character and no whitespace before it is a literal the regex finds fast itself.)
        useful = self._slack > 0 or len(leads) > 1
        self._leads = leads if useful and all(bare) and len(leads) <= MAX_LEADS else ()
        # Past a few false starts (prose with "<" or "`" in it), each lead's spellings are
        # searched by a regex of their own: one that begins with a literal character, which the
        # regex engine scans for in C, where the whole trie begins with a class it cannot.
        by_lead: dict[str, set[str]] = {}
        for stripped in bare:
            by_lead.setdefault(stripped[:1], set()).add(stripped)
        self._lead_searches = tuple(
            re.compile(_trie_pattern(by_lead[lead], prefixes=False)).search for lead in self._leads
        )
        # The characters that may follow a lead in a spelling: a lead followed by any other
        # ("a < b", "vec<u8>", a backtick of inline code) is passed over without the regex.
        # (Where a spelling is its lead alone, any character may follow.)
        self._seconds: frozenset[str] | None = (
            frozenset(stripped[1] for stripped in bare) if all(len(stripped) > 1 for stripped in bare) else None
        )

    def find(self, text: str, pos: int, end: int) -> re.Match[str] | None:
        """``pattern.search(text, pos, end)``, faster on long text (see ``__post_init__``)."""
        leads = self._leads
        if not leads or end - pos < FIND_AHEAD:
            return self._regex.search(text, pos, end)
        tried = pos  # every start before this was tried
        misses = 0
        # One lead: its own regex begins with a literal, so the engine scans for it in C and
        # tries the spellings at each one it meets (false starts, "a < b", cost no Python
        # call); only the whitespace a spelling may begin with is looked at here.
        single = self._lead_searches[0] if len(leads) == 1 else None
        seconds = None if single is not None else self._seconds
        while True:
            if single is not None:
                bare = single(text, tried, end)
                if bare is None:
                    return None
                at = bare.start()
            else:
                # The first of the leads: each one is looked for only before the best so far,
                # so a lead the text holds late or never is not scanned for to the end each time.
                at = end
                for lead in leads:
                    found = text.find(lead, tried, at)
                    if found >= 0:
                        at = found
                if at == end:
                    return None
            # No spelling goes on from the lead with the character after it (nor fits before
            # ``end``, where the regex search stops): the lead is passed over without it.
            if seconds is None or text[at + 1 : at + 2] in seconds:
                hit = self._match_before(text, tried, at, end)
                if hit is not None:
                    return hit
            tried = at + 1
            misses += 1
            if misses >= MAX_MISSES:
                if single is not None:
                    # Spellings written without the whitespace they need, many of them.
                    return self._regex.search(text, tried, end)
                # Text thick with those characters: let each lead's own regex find its next
                # spelling.
                return self._find_by_leads(text, tried, end)

    def _find_by_leads(self, text: str, pos: int, end: int) -> re.Match[str] | None:
        """``find`` where the leads are common in the text (see ``__post_init__``)."""
        searches = self._lead_searches
        longest = self._longest
        tried = pos
        for _ in range(MAX_MISSES):
            # As in ``find``: each lead's spellings are looked for only where one could begin
            # before the best so far (and end after it: one spelling may hold another). They
            # are looked for in a stretch that doubles until one is found in it: a lead whose
            # spellings the text holds far ahead or never is not scanned for to the end each
            # time (a scan in C, but of every character: a long text of many calls would be
            # read once per call).
            start, stretch = tried, LEAD_STRETCH
            while True:
                limit = at = min(end, start + stretch)
                for search in searches:
                    found = search(text, start, min(end, at + longest))
                    if found is not None and found.start() < at:
                        at = found.start()
                if at < limit or limit == end:
                    break
                start, stretch = limit, stretch * 2
            if at == end:
                return None
            hit = self._match_before(text, tried, at, end)
            if hit is not None:
                return hit
            tried = at + 1  # (a spelling that needs whitespace before it, written without)
        # Text thick with spellings written without the whitespace they need: one scan in C.
        return self._regex.search(text, tried, end)

    def holds_no_delimiter(self, text: str, at: int) -> bool:
        """Does ``text``, where ``first_chars`` found nothing before ``at``, hold no spelling and
        not end with the beginning of one? All of it is then text, none held back: a streaming
        delta with a "<" or a newline of prose in it need not take the general way."""
        if self._regex.search(text, at) is not None:
            return False
        end = len(text)
        if self._long:
            # (Their prefixes are not in the tail regex: ``hold_point`` checks them one by one,
            # a few ``str.find`` on a short delta.)
            return self.hold_point(text, at, end) == end
        return self._tail.search(text, max(at, end - self._longest)) is None

    def _match_before(self, text: str, tried: int, at: int, end: int) -> re.Match[str] | None:
        """A spelling whose lead is at ``at``: it starts there or after up to ``slack``
        whitespace characters before it (none before ``tried``, all tried already)."""
        # One search over the few places such a spelling could start; one that starts past
        # ``at`` is not taken (it may be cut short by the end of the search: the caller goes
        # on looking after ``at``).
        hit = self._regex.search(text, max(tried, at - self._slack), min(end, at + self._longest))
        if hit is not None and hit.start() <= at:
            return hit
        return None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The regex of every spelling this matcher looks for (leftmost, then longest)."""
        return self._regex

    @property
    def longest(self) -> int:
        """The length of the longest spelling this matcher looks for."""
        return self._longest

    def _found(self, match: re.Match[str], end: int, final: bool) -> Found | int:
        """The delimiter ``match`` found, or where text must be held (see ``search``)."""
        text = match.group()
        terminal = self.accepted.get(text)
        if terminal is not None:
            return Found(match.start(), match.end(), terminal, stray=False)
        shorter = self._accepted_prefix.get(text)
        if shorter is not None:
            return Found(match.start(), match.start() + len(shorter), self.accepted[shorter], stray=False)
        # A spelling the state accepts that begins inside the rejected one wins, and it may run
        # on past it: gpt-oss's reasoning that ends with a quote, `"<|end|><|start|>assistant`,
        # holds a tool turn's closing `"<|end|>` and, one character on, the reasoning's
        # closing tag. While more text may come, one that could still complete holds it all.
        string, start = match.string, match.start()
        # (Only one that begins inside the match counts, and any such one ends within the
        # longest spelling's length past it: the search stops there, not at the text's end,
        # which would read the rest of a long text once per stray delimiter in it.)
        inside = self._accepted_regex.search(string, start + 1, min(end, match.end() + self._longest))
        if inside is not None and inside.start() < match.end():
            at = inside.start()
            # What stands before it may spell a delimiter the state rejects on its own
            # (``</think>`` before ``\n<tool_call>``, where ``</think>\n`` was the match): it is
            # stray, and the accepted one is found next.
            before = self.others.get(string[start:at])
            if not final:
                pending = self._accepted_head_in(string, start + 1, at + 1, end)
                if pending is not None and (pending != at or before is None):
                    return at if pending == at else start
            if before is not None:
                return Found(start, at, before, stray=True)
            return Found(at, inside.end(), self.accepted[inside.group()], stray=False)
        if not final and self._accepted_head_in(string, start + 1, match.end(), end) is not None:
            return start
        return Found(start, match.end(), self.others[text], stray=True)

    def begins_accepted(self, text: str) -> bool:
        """Is ``text`` the beginning, short of the whole, of a spelling the state accepts?"""
        return text in self._accepted_heads or any(len(s) > len(text) and s.startswith(text) for s in self._accepted_long)

    def _accepted_head_in(self, text: str, low: int, high: int, end: int) -> int | None:
        """The first position in ``low:high`` from which all of ``text[:end]`` is the
        beginning of an accepted spelling, if any."""
        for at in range(max(low, end - self._longest + 1), high):
            if self.begins_accepted(text[at:end]):
                return at
        return None

    def search(self, text: str, pos: int, end: int, final: bool) -> Found | int:
        """The first delimiter in ``text[pos:end]``, or the index from which text must be held.

        Returns a ``Found``, or an int ``hold``: ``text[pos:hold]`` is plain text for certain and
        ``text[hold:end]`` could still become a delimiter when more text arrives (``hold == end``
        when nothing needs holding, always when ``final``).
        """
        match = self.find(text, pos, end)
        if match is not None:
            if not final:
                if self._nested and match.start() > end - self._longest:
                    # Leftmost wins: an unfinished longer spelling that began earlier may
                    # still complete around this match.
                    hold = self.hold_point(text, pos, end)
                    if hold < match.start():
                        return hold
                # A longer spelling starting at the same place may still be arriving.
                if end - match.start() < self._longest and self._is_prefix(text[match.start() : end]):
                    return match.start()
            return self._found(match, end, final)
        if final:
            return end
        return self.hold_point(text, pos, end)

    def hold_point(self, text: str, pos: int, end: int) -> int:
        """Where the longest tail of ``text[pos:end]`` that begins some delimiter starts."""
        tail = self._tail.search(text, max(pos, end - self._longest), end)
        hold = tail.start() if tail is not None else end
        for spelling in self._long:
            start = max(pos, end - len(spelling) + 1)
            at = text.find(spelling[0], start, hold)
            while at >= 0:
                if spelling.startswith(text[at:end]):
                    hold = at
                    break
                at = text.find(spelling[0], at + 1, hold)
        return hold

    def _is_prefix(self, text: str) -> bool:
        """Is ``text`` a proper prefix of some spelling?"""
        if text in self._prefixes:
            return True
        return bool(self._long) and any(s.startswith(text) and s != text for s in self._long)

    def match_at(self, text: str, pos: int, end: int, final: bool) -> Found | None | bool:
        """Does a delimiter start exactly at ``pos``?

        Returns the ``Found`` if so, ``None`` if certainly not, ``True`` if it cannot be told yet
        (the text ends inside what could still become one).
        """
        match = self._regex.match(text, pos, end)
        if match is not None:
            if not final and end - pos < self._longest and self._is_prefix(text[pos:end]):
                return True
            found = self._found(match, end, final)
            if isinstance(found, int):
                # Held: from here (cannot be told yet), or from a delimiter that begins later.
                return True if found == pos else None
            return found if found.start == pos else None
        if not final and end - pos < self._longest and self._is_prefix(text[pos:end]):
            return True
        return None


def _trie_pattern(spellings: object, *, prefixes: bool) -> str:
    """A regex matching the given strings (or, with ``prefixes``, any non-empty prefix of one),
    written as a trie so the regex engine never tries the same characters twice. A run of
    characters with no branch and no end of a spelling is written as one literal."""
    trie: dict[str, dict] = {}
    for spelling in spellings:  # type: ignore[attr-defined]
        node = trie
        for char in spelling:
            node = node.setdefault(char, {})
        node[""] = {}  # marks the end of a whole spelling

    def pattern(node: dict[str, dict]) -> str:
        branches = []
        for char in sorted(k for k in node if k):
            child = node[char]
            literal = [char]
            if not prefixes:
                # Follow the chain while there is exactly one way on and no spelling ends.
                while len(child) == 1 and "" not in child:
                    (next_char, grandchild), = child.items()
                    literal.append(next_char)
                    child = grandchild
            text = re.escape("".join(literal))
            rest = pattern(child) if any(k for k in child) else ""
            if rest and (prefixes or "" in child):
                branches.append(text + "(?:" + rest + ")?")
            else:
                branches.append(text + rest)
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return pattern(trie)
