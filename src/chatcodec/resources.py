"""Where the bundled templates and grammars live, installed or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def resource_dir(kind: str) -> Path:
    """``templates`` or ``grammars``: inside the installed package, else at the checkout's top."""
    for candidate in (_PACKAGE_DIR / kind, _PACKAGE_DIR.parent.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"chatcodec's bundled {kind}/ folder is missing (looked in {_PACKAGE_DIR})")


def bundled_template_names() -> list[str]:
    return sorted(path.stem for path in resource_dir("templates").glob("*.jinja"))


def bundled_template_path(name: str) -> Path | None:
    # (Looked up among the names, not on the file system: any string may come here.)
    if name not in bundled_template_names():
        return None
    return resource_dir("templates") / f"{name}.jinja"


def grammar_text(family: str) -> str:
    return (resource_dir("grammars") / f"{family}.lark").read_text(encoding="utf-8")
