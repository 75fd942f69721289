"""The state a prefill leaves a new parser in, read once per prompt tail.

A server builds a parser per request, and requests for one model share the prompt's tail: the
assistant header and the prefill after it (``<think>\\n``). Reading that prefill through the
engine and the assembler is most of what building a parser costs. What reading it changed is
recorded the first time, as attribute values of the engine and the assembler, and a later
parser for the same prefill takes those values instead of reading it again.

Only plain changes are recorded: immutable values (the parser stack, the held text, positions,
flags) and the grammar's shared, cached state descriptions. A prefill that leaves anything else
behind (a call, a diagnostic, text kept for later) is read by every parser, as before.
"""

from __future__ import annotations

import copy
import re
from types import BuiltinMethodType
from typing import Any

from chatcodec.formats.base import Format
from chatcodec.parse.assistant import AssistantAssembler
from chatcodec.parse.engine import Engine
from chatcodec.parse.grammar import StateInfo

# Values a new parser can share with the one that read the prefill: immutable ones, and the
# grammar's cached state descriptions and the methods of their compiled regexes, never written to.
_IMMUTABLE = (str, int, bool, float, frozenset, type(None), StateInfo)
_CONTAINERS = (list, dict, set)
MAX_PREFILLS = 1024  # (format, start symbol, prefill) states kept
MAX_RECORDED_PREFILL = 256  # characters: a longer prefill is read by every parser
_MISSING: Any = object()

# (format, what the prefill changes in each of ``_recorded``'s objects), or None where it
# changes more than plain values.
_Changes = tuple[Format, list[dict[str, Any]]] | None
_KNOWN: dict[tuple[int, str, str], _Changes] = {}


def start_after_prefill(
    family: Format, start: str, prefill: str, engine: Engine, assembler: AssistantAssembler
) -> None:
    """Put a fresh ``engine`` and ``assembler`` in the state reading ``prefill`` leaves (none of
    it part of the completion)."""
    if len(prefill) > MAX_RECORDED_PREFILL:
        _read_prefill(prefill, engine, assembler)  # (a long prefill is rare, and kept by no record)
        return
    key = (id(family), start, prefill)
    known = _KNOWN.get(key, _MISSING)
    if known is None:
        _read_prefill(prefill, engine, assembler)  # it leaves more than plain values
        return
    if known is not _MISSING and known[0] is family:
        for target, changed in zip(_recorded(engine, assembler), known[1]):
            target.__dict__.update(changed)
        return
    recorded = _recorded(engine, assembler)
    watched = [_Snapshot(target) for target in recorded]
    watched += [_Snapshot(part) for part in assembler.parts()]
    _read_prefill(prefill, engine, assembler)
    changes = [snapshot.changes() for snapshot in watched]
    if len(_KNOWN) >= MAX_PREFILLS:
        _KNOWN.clear()
    if any(change is None for change in changes) or any(changes[len(recorded) :]):
        _KNOWN[key] = None
    else:
        _KNOWN[key] = (family, changes[: len(recorded)])  # type: ignore[assignment]


def _recorded(engine: Engine, assembler: AssistantAssembler) -> tuple[object, ...]:
    """The objects whose changes a record holds (anything else the prefill changes, such as
    a call it leaves open, makes every parser read it)."""
    return (engine, assembler, assembler.outlet)


def _read_prefill(prefill: str, engine: Engine, assembler: AssistantAssembler) -> None:
    # A delimiter the prefill ends with may go on in the completion ("<think>" then "\n"), so
    # what the engine holds back stays held: it is not settled here.
    assembler.outlet.silent = True
    assembler.handle(engine.feed(prefill))
    assembler.outlet.silent = False
    assembler.start_after_prefill(len(prefill))


class _Snapshot:
    """An object's attributes before a change, to tell what the change did to them."""

    def __init__(self, watched: object) -> None:
        self._watched = watched
        self._before = dict(vars(watched))
        # Containers are compared by content too: the change may fill one in place.
        self._contents = {key: copy.copy(value) for key, value in self._before.items() if isinstance(value, _CONTAINERS)}

    def changes(self) -> dict[str, Any] | None:
        """The attributes the change set, or None if it did more than set shareable values."""
        changed: dict[str, Any] = {}
        cls = type(self._watched)
        for key, value in vars(self._watched).items():
            # (An attribute first set by the change was its class's default before it.)
            before = self._before.get(key, getattr(cls, key, _MISSING))
            if key in self._contents:
                # A container, the same or a new one: a fresh object's own serves if the
                # content is what it was.
                if type(value) is not type(before) or self._contents[key] != value:
                    return None
                continue
            if value is before:
                continue
            if not _shareable(value):
                return None
            changed[key] = value
        return changed


def _shareable(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_shareable(item) for item in value)
    if isinstance(value, BuiltinMethodType):
        # A bound method of a compiled regex (a state's search); not one of a list or a dict.
        return isinstance(value.__self__, re.Pattern)
    return isinstance(value, _IMMUTABLE)
