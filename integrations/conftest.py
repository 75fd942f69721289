"""The servers' integration tests share the tiny tokenizer and template corpus of the main test
suite, and their own drivers of the servers' code (``servers.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent / "fuzz")]
