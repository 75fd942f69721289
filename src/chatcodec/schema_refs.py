"""A tool's parameter schemas with their local ``$ref``s written in place.

Pydantic, MCP servers and OpenAPI tools name a type once under ``$defs`` (or ``definitions``)
and point to it (``{"$ref": "#/$defs/Zip"}``). What types an argument written as text is the
schema it points to: a parameter whose type is a ``$ref`` to a string stays a string."""

from __future__ import annotations

from typing import Any

# A schema that refers to itself (a tree of nodes) is written in place this deep, no deeper.
_MAX_DEPTH = 32


def with_local_refs_resolved(properties: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``properties`` (of the parameters schema ``root``) with each ``"$ref": "#/…"`` replaced
    by what it points to, the keys beside the ``$ref`` kept over the target's. A ref that
    points nowhere, or back into its own expansion, is left as written."""
    if "$defs" not in root and "definitions" not in root:
        return properties  # (the common case: nothing to point to, nothing to walk)
    resolved = _resolved(properties, root, frozenset(), 0)
    return resolved if isinstance(resolved, dict) else properties


def _resolved(node: Any, root: dict[str, Any], expanding: frozenset[str], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return node
    if isinstance(node, list):
        return [_resolved(item, root, expanding, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in expanding:
        target = _pointed_to(root, ref)
        if isinstance(target, dict):
            merged = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
            return _resolved(merged, root, expanding | {ref}, depth + 1)
    return {key: _resolved(value, root, expanding, depth + 1) for key, value in node.items()}


def _pointed_to(root: dict[str, Any], ref: str) -> Any:
    """What a local JSON pointer (``#/$defs/Zip``) names in ``root``; None if nothing."""
    if not ref.startswith("#/"):
        return None  # (a ref to another document: nothing here to read)
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
