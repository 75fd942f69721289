"""Python source a model wrote, read as an expression without a word to stderr.

A model's string may hold any backslash (``'C:\\temp'``, ``'\\,'``): Python reads an unknown escape
as the backslash and the character, and warns (a ``SyntaxWarning``, printed, from Python 3.12).
A parser reading model output must not print, so the warnings are silenced while it reads."""

from __future__ import annotations

import ast
import warnings


def expression(source: str) -> ast.expr:
    """The expression ``source`` is (raises ``SyntaxError``, ``ValueError``, ``RecursionError`` or
    ``MemoryError`` as ``ast.parse`` does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, mode="eval").body
