"""Where an XML parameter's value ends, when the value spells the format's own tags.

A model writing a file through ``<parameter=content>`` writes whatever the file holds, and
code about tool calls holds ``</parameter>``, ``</function>``, ``<parameter=path>`` and whole
calls. The format has no escape for them, so a tag in a value is the value's end only if what
follows reads as the rest of the call. ``ValueEnds`` tells, for a tag found in a value that
could end it, whether it does (the text after it, as far as needed), so every reader of the
text decides alike, whole or in any chunking:

* a parameter's closing tag ends the value when the next thing is the next parameter (a key
  not yet given that the tool has; or one it lacks, or one written again, whose own value
  ends well), the call's end with no value's closing tag outside a call after it before the
  turn's end (the calls after it read up to their first end), or the end of the text;
* a tag that ends the value with its closing tag left out (the next parameter's opening tag,
  the call's end) does so on the same terms;
* any other such tag is text of the value if a value's closing tag follows outside any call
  before the turn's end: the value goes on to there. If none follows, nothing else could end
  the value, and the tag does (the malformed reading, with its diagnostics).

Likewise a call's opening tag whose name runs into another call's opening (prose that quotes
``<｜DSML｜invoke name="`` before the real section) opens no call: it is text.

The state of the call being read (its name, the keys given, the key whose value is open) is
an immutable tuple the engine keeps (``CallSoFar``), so a parser resumed after a prompt's
prefill shares it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from chatcodec.parse.attributes import without_attributes
from chatcodec.parse.grammar import FamilyGrammar

VALUE = "PARAM_VALUE"  # the run of a value's text
_NAMES = ("TOOL_NAME", "PARAM_NAME")
_NAME_ENDS = frozenset({"NAME_END", "PARAM_NAME_END", "UNTYPED_NAME_END"})
_CALL_ENDS = frozenset({"CALL_CLOSE", "CALLS_END", "CALL_SELF_CLOSE"})
# Tags that only a value's end is followed by, or that begin what follows a call: the search
# for a later closing tag stops there (a value does not run into the next call or turn).
_STOP_TERMINALS = frozenset({"CALL_OPEN", "CALLS_BEGIN", "END"})
# The tags that may end a value and are asked about.
CANDIDATES = frozenset({"PARAM_CLOSE", "PARAM_OPEN", "CALL_CLOSE", "CALLS_END"})
MAX_KEY = 256  # characters: a longer "key" is text
MAX_SEARCHES = 256  # searches remembered (see ``ValueEnds._search``)
MAX_TAG = 64  # characters: a longer spelling (a system prompt's tools block) ends no call's name
_SPACE = re.compile(r"[ \t\r\n]*")
_NAME = re.compile(r'[^<>"\n]{0,%d}' % MAX_KEY)


class CallSoFar(NamedTuple):
    """What the engine has read of the call it is in, for ``ValueEnds``."""

    where: str | None = None  # "name", "params", "param_name", "value", "cdata" or None
    name: str = ""
    key_text: str = ""
    key: str | None = None  # the key whose value is open
    given: frozenset[str] = frozenset()


NO_CALL = CallSoFar()

# What follows a tag, at one place.
_PARAM, _CALL_END, _STOP = "param", "call_end", "stop"


class _Tags:
    """A grammar's spellings the judgement looks for, compiled once per grammar."""

    def __init__(self, grammar: FamilyGrammar) -> None:
        kinds: dict[str, str] = {}
        for spelling, terminal in grammar.spellings.items():
            if terminal == "PARAM_OPEN":
                kinds[spelling.lstrip(" \t\r\n")] = _PARAM
            elif terminal in ("CALL_CLOSE", "CALLS_END"):
                kinds[spelling.lstrip(" \t\r\n")] = _CALL_END
            elif terminal in _STOP_TERMINALS or terminal.endswith("_START"):
                kinds[spelling.lstrip(" \t\r\n")] = _STOP
        kinds.pop("", None)
        self.kind_at = kinds
        self.next_tag = _alternation(kinds)
        closes = {s for s, t in grammar.spellings.items() if t == "PARAM_CLOSE"}
        stops = {s for s, k in kinds.items() if k == _STOP}
        self.closing_or_stop = _alternation(closes | stops)
        self.closing = frozenset(closes)
        self.call_opening = frozenset(s.lstrip(" \t\r\n") for s, t in grammar.spellings.items() if t == "CALL_OPEN")
        self.call_ending = frozenset(s for s, t in grammar.spellings.items() if t in ("CALL_CLOSE", "CALLS_END"))
        self.call_end_or_stop = _alternation(self.call_ending | (stops - self.call_opening))
        self.name_ends = frozenset(s for s, t in grammar.spellings.items() if t in _NAME_ENDS)
        self.name_end = _alternation(self.name_ends)
        # What ends a call's name (any tag), or shows it was no name: another call's opening.
        openings = ("CALL_OPEN", "CALLS_BEGIN")
        self.opening = frozenset(s for s, t in grammar.spellings.items() if t in openings)
        enders = {s for s, t in grammar.spellings.items() if t not in openings and len(s) <= MAX_TAG}
        self.name_or_opening = _alternation(self.opening | enders)
        spelled = [*kinds, *closes, *self.call_ending, *self.name_ends, *self.opening, *enders]
        # Text this long after a place shows every tag that could begin there.
        self.reach = max(map(len, spelled), default=1)
        # The beginnings of those spellings: text that ends so may still become one.
        self.beginnings = frozenset(spelling[:cut] for spelling in spelled for cut in range(1, len(spelling)))

    def unsettled(self, text: str, start: int, at: int) -> bool:
        """Could text after the end of ``text`` still make a tag begin at ``start`` or before it
        (not before ``at``), where none is found yet or a longer one could be?"""
        return any(text[p:] in self.beginnings for p in range(max(at, len(text) - self.reach + 1), start + 1))


def _alternation(spellings: Iterable[str]) -> re.Pattern[str]:
    ordered = sorted(set(spellings), key=len, reverse=True)  # (the longest at a place wins)
    return re.compile("|".join(map(re.escape, ordered)) or r"(?!)")


_TAGS: dict[int, tuple[FamilyGrammar, _Tags]] = {}


def value_ends_for(grammar: FamilyGrammar, schemas: dict[str, dict[str, Any]] | None) -> ValueEnds | None:
    """The judge of a grammar whose calls have XML parameters; None for any other."""
    if "PARAM_CLOSE" not in grammar.delimiters or "PARAM_OPEN" not in grammar.delimiters:
        return None
    known = _TAGS.get(id(grammar))
    if known is None or known[0] is not grammar:
        known = _TAGS[id(grammar)] = (grammar, _Tags(grammar))
    return ValueEnds(known[1], schemas)


class ValueEnds:
    """Tells whether a tag found in an XML parameter's value ends it (see the module)."""

    def __init__(self, tags: _Tags, schemas: dict[str, dict[str, Any]] | None) -> None:
        self._tags = tags
        self._schemas = schemas or {}
        # Where a search that found nothing yet goes on when more text comes: (search, input
        # position it began at) -> input position. A stream asks again on every delta while it
        # holds a tag: each asking reads only the new text.
        self._searched: dict[tuple[str, int], int] = {}
        # Likewise for a later call's end (``_end_of_later_call``): from the input position
        # where the call was read from, where the reading goes on, and the first end it found.
        self._later: dict[int, tuple[int, int]] = {}
        self._base = 0  # the input position of the text asked about

    # -- following the call --------------------------------------------------------------------

    @staticmethod
    def after_delimiter(call: CallSoFar, terminal: str) -> CallSoFar:
        where = call.where
        if terminal == "CALL_OPEN":
            return CallSoFar("name")
        if terminal == "PARAM_OPEN":
            given = call.given | {call.key} if call.key is not None else call.given
            return CallSoFar("param_name", call.name, "", None, given)
        if terminal in _NAME_ENDS or terminal == "CDATA_OPEN":
            if where == "name":
                return call._replace(where="params")
            if where == "param_name":
                key = _key(call.key_text)
                return call._replace(where="cdata" if terminal == "CDATA_OPEN" else "value", key=key, key_text="")
            return call
        if terminal in ("PARAM_CLOSE", "CDATA_CLOSE") and call.key is not None:
            return CallSoFar("params", call.name, "", None, call.given | {call.key})
        if terminal in _CALL_ENDS:
            return NO_CALL
        return call

    @staticmethod
    def after_text(call: CallSoFar, run: str | None, text: str) -> CallSoFar:
        if run == "TOOL_NAME" and call.where == "name" and len(call.name) < MAX_KEY:
            return call._replace(name=call.name + text)
        if run == "PARAM_NAME" and call.where == "param_name" and len(call.key_text) < MAX_KEY:
            return call._replace(key_text=call.key_text + text)
        return call

    # -- judging -------------------------------------------------------------------------------

    def ends_value(
        self, call: CallSoFar, terminal: str, text: str, start: int, end: int, final: bool, base: int = 0
    ) -> bool | None:
        """Does the tag ``terminal``, ``text[start:end]``, found in the value ``call`` is in,
        end it? None: the text does not tell yet (``final``: no more text follows). ``base``:
        the input position of ``text[0]``."""
        if call.where != "value":
            return True
        self._base = base
        if len(self._searched) > MAX_SEARCHES or len(self._later) > MAX_SEARCHES:
            self._searched.clear()
            self._later.clear()
        if terminal == "PARAM_CLOSE":
            verdict = self._what_follows(call, text, end, final)
        elif terminal == "PARAM_OPEN":
            verdict = self._next_parameter(call, text, end, final)
        else:
            verdict = self._after_the_call(text, end, final)
        if verdict is not False:
            return verdict
        later = self._next_closing(text, end, final)
        return None if later is None else later < 0

    def opens_call(self, text: str, at: int, final: bool) -> bool | None:
        """Does a call's opening tag, ending at ``at``, open a call? Not if its name runs into
        another call's opening (prose that quotes ``<｜DSML｜invoke name="`` before the real
        section of calls): it is text. None: the text does not tell yet."""
        found = self._first_near(self._tags.name_or_opening, text, at, final)
        if found is None or found is False:
            return None if found is None else True
        return found.group() not in self._tags.opening

    def _first_near(self, pattern: re.Pattern[str], text: str, at: int, final: bool) -> re.Match[str] | Literal[False] | None:
        """``pattern``'s first match within a name's length of ``at``; False if there is none;
        None if the text does not tell yet."""
        tags = self._tags
        window = at + MAX_KEY + tags.reach
        found = pattern.search(text, at, window)
        if found is None:
            return None if not final and len(text) < window else False
        if not final and tags.unsettled(text, found.start(), at):
            return None
        return found

    def _what_follows(self, call: CallSoFar, text: str, at: int, final: bool) -> bool | None:
        """After a value's closing tag: does the rest of a call follow?"""
        tags = self._tags
        here = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if here == len(text):
            return True if final else None
        if not final and tags.unsettled(text, here, here):
            return None
        found = tags.next_tag.match(text, here)
        kind = tags.kind_at.get(found.group()) if found is not None else None
        if kind == _STOP:
            return True
        if kind == _CALL_END:
            return self._after_the_call(text, found.end(), final)  # type: ignore[union-attr]
        if kind == _PARAM:
            return self._next_parameter(call, text, found.end(), final, closed=True)  # type: ignore[union-attr]
        return False

    def _next_parameter(self, call: CallSoFar, text: str, at: int, final: bool, closed: bool = False) -> bool | None:
        """After the opening tag of a parameter, at ``at``: is it the call's next one?
        ``closed``: the value's closing tag stands before it. Then a parameter whose name
        never ends (``<arg_key>incomplete\n<arg_value>``) is the next one, cut short; with
        no closing tag before it, such a tag is text of the value (``"<arg_key> <arg_value>"``)."""
        found = self._first_near(self._tags.name_end, text, at, final)
        if found is None or found is False:
            return None if found is None else closed
        raw = text[at : found.start()]
        if "<" in raw or "\n" in raw:
            return closed
        key = _key(raw)
        if not key:
            return closed
        fresh = key != call.key and key not in call.given
        properties = self._schemas.get(call.name.strip())
        if fresh and (not properties or key in properties):
            return True
        if not fresh and not closed:
            return False  # (``<parameter=path>`` in a value, once path is given: text)
        # A key the tool does not have, or one written again after the value's closing tag:
        # the next parameter if its own value ends well.
        closing = self._next_closing(text, found.end(), final)
        if closing is None:
            return None
        if closing < 0:
            return True
        return self._what_follows(call._replace(key=key, given=call.given | {call.key or ""}), text, closing, final)

    def _after_the_call(self, text: str, at: int, final: bool) -> bool | None:
        """After a call's end: does the rest of the turn read well formed (no value's closing
        tag outside a call)?"""
        later = self._next_closing(text, at, final)
        return None if later is None else later < 0

    def _next_closing(self, text: str, at: int, final: bool) -> int | None:
        """The end of the first value's closing tag after ``at`` that stands outside any call
        (the calls after ``at`` read up to their first end); -1 if the turn or the text ends
        first; None if the text does not tell yet."""
        tags = self._tags
        while True:
            found = self._search("closing_or_stop", tags.closing_or_stop, text, at, final)
            if found is None:
                return None if not final else -1
            spelled = found.group()
            if spelled in tags.closing:
                return found.end()
            if spelled not in tags.call_opening:
                return -1
            name = _NAME.match(text, found.end())
            if name.end() == len(text) and not final:  # type: ignore[union-attr]
                return None
            at = found.end()
            if not name.group().strip():  # type: ignore[union-attr]
                continue  # a call's opening tag with no name after it (``<tool_call></arg_value>``) is text
            # A call: its tags are its own, up to its end.
            ended = self._end_of_later_call(text, at, final)
            if ended is None or ended < 0:
                return ended
            at = ended

    def _end_of_later_call(self, text: str, at: int, final: bool) -> int | None:
        """Where a later call, read up to ``at``, ends: at its first end that the next call,
        another call's end, the turn's end or the text's end follows. One that text follows is
        quoted in one of the call's values (``see </function> here</parameter>``); where no
        end is followed so, the first. -1 if the turn ends first; None if the text does not
        tell yet."""
        tags = self._tags
        base = self._base
        key = base + at
        # (A stream asks again on every delta while the answer waits: it goes on from the
        # last end found that text follows.)
        resumed_at, resumed_first = self._later.get(key, (key, -1))
        at, first = resumed_at - base, resumed_first - base if resumed_first >= 0 else -1
        while True:
            end = self._search("call_end_or_stop", tags.call_end_or_stop, text, at, final)
            if end is None:
                return None if not final else first
            if end.group() not in tags.call_ending:
                return first
            here = _SPACE.match(text, end.end()).end()  # type: ignore[union-attr]
            if here == len(text):
                return end.end() if final else None
            if not final and tags.unsettled(text, here, here):
                return None
            follows = tags.next_tag.match(text, here)
            if follows is not None and tags.kind_at.get(follows.group()) in (_STOP, _CALL_END):
                return end.end()
            if first < 0:
                first = end.end()
            at = end.end()
            self._later[key] = (base + at, base + first)

    def _search(self, name: str, pattern: re.Pattern[str], text: str, at: int, final: bool) -> re.Match[str] | None:
        """``pattern``'s first match from ``at`` that more text could not change (None if there
        is none yet), resumed where the last such search from there stopped."""
        base = self._base
        key = (name, base + at)
        start = max(at, self._searched.get(key, 0) - base)
        found = pattern.search(text, start)
        tags = self._tags
        if found is not None and (final or not tags.unsettled(text, found.start(), start)):
            return found
        if not final:
            self._searched[key] = base + max(start, len(text) - tags.reach)
        return None


def _key(raw: str) -> str:
    """A parameter's key as the reader takes it (attributes the template has none of left out:
    ``command" type="string`` is ``command``)."""
    return without_attributes(raw.strip())[0]
