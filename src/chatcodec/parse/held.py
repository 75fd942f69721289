"""Where a text ends with the beginning of a delimiter: the tail a stream holds back.

The engine gives text that could still grow into a delimiter (``<tool_ca``) only once it knows
(at ``close()``, or when the next delta tells). Reading a whole first delta the one-shot way
(``first_feed.py``) is exact only where that tail gives no event, so it asks where the tail
begins: one dictionary lookup and a few ``endswith`` for the short spellings, a search of the
text's last characters in each long one.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcodec.parse.lexer import LONG_SPELLING


class HeldTails:
    """The proper prefixes of a grammar's spellings, indexed to find the longest one a text
    ends with."""

    def __init__(self, spellings: Iterable[str]) -> None:
        spellings = list(spellings)
        # Prefixes up to LONG_SPELLING characters: two or more by their last two (a tail is
        # compared with the few prefixes that end as it does), longest first; one character.
        # Longer spellings (a default system prompt) are kept whole: all their prefixes would
        # take the square of their length.
        prefixes = {spelling[:cut] for spelling in spellings for cut in range(1, min(len(spelling), LONG_SPELLING + 1))}
        by_ending: dict[str, list[str]] = {}
        for prefix in sorted(prefixes, key=len, reverse=True):
            if len(prefix) > 1:
                by_ending.setdefault(prefix[-2:], []).append(prefix)
        self._by_ending = {ending: tuple(group) for ending, group in by_ending.items()}
        self._singles = frozenset(prefix for prefix in prefixes if len(prefix) == 1)
        self._long = tuple(spelling for spelling in spellings if len(spelling) > LONG_SPELLING)
        # (A match across two of them in the joined string is only a false alarm.)
        self._long_joined = "\n".join(self._long)

    def start(self, text: str) -> int | None:
        """Where ``text``'s longest tail that is a proper prefix of a spelling begins, or None."""
        end = len(text)
        held = end
        for prefix in self._by_ending.get(text[-2:], ()):
            if text.endswith(prefix):
                held = end - len(prefix)
                break
        else:
            if text[-1:] in self._singles:
                held = end - 1
        # A tail longer than LONG_SPELLING that begins a long spelling ends with the text's last
        # LONG_SPELLING characters, found in the spelling where the prefix it would be ends
        # (rarely anywhere: one search of all of them joined tells).
        if self._long and end > LONG_SPELLING and (last := text[end - LONG_SPELLING :]) in self._long_joined:
            for spelling in self._long:
                at = spelling.find(last)
                while at >= 0:
                    cut = at + LONG_SPELLING  # ``text`` would end with ``spelling[:cut]``
                    if cut < len(spelling) and end - cut < held and text.endswith(spelling[:cut]):
                        held = end - cut
                    at = spelling.find(last, at + 1)
        return None if held == end else held
