"""Finding a chat template: a bundled name, a ``.jinja`` file, or a Hugging Face model folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatcodec.errors import TemplateNotFoundError
from chatcodec.resources import bundled_template_names, bundled_template_path

# The special tokens transformers passes to every template (``tokenizer.special_tokens_map``).
SPECIAL_TOKEN_KEYS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)

CHAT_TEMPLATE_FILE = "chat_template.jinja"
CHAT_TEMPLATE_DIR = "additional_chat_templates"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"

# The special tokens each bundled template is rendered with by default.
BUNDLED_SPECIAL_TOKENS: dict[str, dict[str, str]] = {
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "llama3_hermes": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
}


@dataclass
class TemplateSource:
    """A template's text, where it came from, and the special tokens it is rendered with."""

    source: str
    name: str
    special_tokens: dict[str, str] = field(default_factory=dict)
    # Other named templates found beside it (e.g. ``tool_use``), by name.
    alternatives: dict[str, str] = field(default_factory=dict)
    # The template transformers switches to when tools are given (a model folder's ``tool_use``
    # template, when no template was named explicitly).
    tool_use_source: str | None = None


# What a template's own text holds and no name or path does: Jinja's tags (as vLLM's
# ``--chat-template`` tells a template from a file name).
TEMPLATE_MARKS = ("{{", "{%", "{#")
# The name a template given as text goes by.
INLINE_TEMPLATE_NAME = "chat_template"


def is_template_source(name_or_path: str | Path) -> bool:
    """Is this a template's text (a string holding Jinja tags) rather than a name or a path?"""
    return isinstance(name_or_path, str) and any(mark in name_or_path for mark in TEMPLATE_MARKS)


def find_template(name_or_path: str | Path, *, template_name: str | None = None) -> TemplateSource:
    """Resolve a bundled template name, a ``.jinja`` file, a model folder, or a template's own
    text (a string holding Jinja tags, such as ``tokenizer.chat_template``) to its source.

    A bundled name wins over a folder of the same name in the working directory; write
    ``./qwen3`` for the folder.
    """
    text = str(name_or_path)
    if is_template_source(name_or_path):
        if template_name is not None:
            raise TemplateNotFoundError(
                f"template_name={template_name!r} only applies to model folders, not to a template's text"
            )
        return TemplateSource(source=text, name=INLINE_TEMPLATE_NAME)
    bundled = bundled_template_path(text) if _could_be_bundled_name(text) else None
    if bundled is not None:
        if template_name is not None:
            raise TemplateNotFoundError(
                f"template_name={template_name!r} only applies to model folders, not to {text!r}"
            )
        return TemplateSource(
            source=_read_text(bundled),
            name=text,
            special_tokens=dict(BUNDLED_SPECIAL_TOKENS.get(text, {})),
        )
    path = Path(name_or_path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except (OSError, ValueError):  # (a name too long for the file system, a NUL in it)
        raise TemplateNotFoundError(_not_found_message(text)) from None
    if is_dir:
        return _from_model_dir(path, template_name)
    if is_file:
        if template_name is not None:
            raise TemplateNotFoundError(
                f"template_name={template_name!r} only applies to model folders, not to {text!r}"
            )
        return TemplateSource(source=_read_text(path), name=path.stem)
    raise TemplateNotFoundError(_not_found_message(text))


# A name or path longer than this is cut short in an error message.
MAX_SHOWN_NAME = 120


def _could_be_bundled_name(text: str) -> bool:
    return bool(text) and "/" not in text and "\\" not in text and not text.startswith(".")


def _not_found_message(text: str) -> str:
    bundled = ", ".join(bundled_template_names())
    looks_like_a_path = "/" in text or "\\" in text or text.endswith(".jinja")
    if len(text) > MAX_SHOWN_NAME:
        text = text[:MAX_SHOWN_NAME] + "…"
    if looks_like_a_path:
        return (
            f"template not found: {text!r} is not an existing .jinja file or model folder "
            f"(chatcodec reads local files only; the bundled templates are {bundled})"
        )
    return (
        f"unknown template {text!r}: the bundled templates are {bundled}; "
        "or give a path to a .jinja file or a model folder, or the template's text"
    )


# No chat template or tokenizer config comes near these sizes (the largest real templates are
# tens of kilobytes; a tokenizer_config.json with its added tokens a few megabytes).
MAX_TEMPLATE_BYTES = 1_000_000
MAX_CONFIG_BYTES = 50_000_000


def _read_text(path: Path, limit: int = MAX_TEMPLATE_BYTES, folder: Path | None = None) -> str:
    """A file's text, refused when it is too large, not UTF-8, or (inside a model folder) a
    link that leads out of the folder."""
    if folder is not None:
        _check_inside(path, folder)
    try:
        size = path.stat().st_size
        if size > limit:
            raise TemplateNotFoundError(f"{path}: {size:,} bytes, more than the {limit:,} a chat template file may have")
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise TemplateNotFoundError(f"{path}: more than the {limit:,} bytes a chat template file may have")
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateNotFoundError(f"cannot read template {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise TemplateNotFoundError(f"cannot read template {path}: {exc.strerror or exc}") from None


def _check_inside(path: Path, folder: Path) -> None:
    """A model folder is data: a file in it (a link included) must stay in it."""
    try:
        resolved = path.resolve(strict=True)
        root = folder.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise TemplateNotFoundError(f"cannot read {path}: {exc}") from None
    if resolved != root and root not in resolved.parents:
        raise TemplateNotFoundError(f"{path}: leads outside the model folder (to {resolved}); refused")
    if not resolved.is_file():
        raise TemplateNotFoundError(f"{path}: not a regular file")


def _read_json_object(path: Path, folder: Path | None = None) -> dict[str, Any]:
    if not path.is_file() and not path.is_symlink():
        return {}
    try:
        data = json.loads(_read_text(path, MAX_CONFIG_BYTES, folder))
    except json.JSONDecodeError as exc:
        raise TemplateNotFoundError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise TemplateNotFoundError(f"{path}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise TemplateNotFoundError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _token_text(value: Any) -> str | None:
    # tokenizer_config.json writes tokens either as strings or as AddedToken dicts.
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _templates_from_files(folder: Path) -> dict[str, str]:
    templates: dict[str, str] = {}
    jinja_file = folder / CHAT_TEMPLATE_FILE
    if jinja_file.is_file() or jinja_file.is_symlink():
        templates["default"] = _read_text(jinja_file, folder=folder)
    extra_dir = folder / CHAT_TEMPLATE_DIR
    if extra_dir.is_dir():
        _check_inside_dir(extra_dir, folder)
        for extra in sorted(extra_dir.glob("*.jinja")):
            templates[extra.name.removesuffix(".jinja")] = _read_text(extra, folder=folder)
    return templates


def _check_inside_dir(directory: Path, folder: Path) -> None:
    resolved = directory.resolve()
    if folder.resolve() not in resolved.parents:
        raise TemplateNotFoundError(f"{directory}: leads outside the model folder (to {resolved}); refused")


def _templates_from_config(config: dict[str, Any]) -> dict[str, str]:
    # The legacy place: a string, or a list of {"name": ..., "template": ...}.
    legacy = config.get("chat_template")
    if isinstance(legacy, str):
        return {"default": legacy}
    entries = legacy.items() if isinstance(legacy, dict) else []
    if isinstance(legacy, list):
        entries = [(entry.get("name"), entry.get("template")) for entry in legacy if isinstance(entry, dict)]
    return {name: template for name, template in entries if isinstance(name, str) and isinstance(template, str)}


def _special_tokens(folder: Path, config: dict[str, Any]) -> dict[str, str]:
    values = dict(config)
    # Old tokenizers keep their special tokens in special_tokens_map.json; transformers reads it
    # (and lets it override the config) only when the config has no added_tokens_decoder.
    if "added_tokens_decoder" not in config:
        values.update(_read_json_object(folder / SPECIAL_TOKENS_MAP_FILE, folder))
    return _special_token_texts(values.get)


def _special_token_texts(value_of: Callable[[str], Any]) -> dict[str, str]:
    tokens = {}
    for key in SPECIAL_TOKEN_KEYS:
        token = _token_text(value_of(key))
        if token is not None:
            tokens[key] = token
    return tokens


def _from_model_dir(folder: Path, template_name: str | None) -> TemplateSource:
    config = _read_json_object(folder / "tokenizer_config.json", folder)
    # As in transformers, template files replace whatever tokenizer_config.json holds.
    templates = _templates_from_files(folder) or _templates_from_config(config)
    if not templates:
        raise TemplateNotFoundError(
            f"{folder}: no chat template found (looked for {CHAT_TEMPLATE_FILE}, {CHAT_TEMPLATE_DIR}/*.jinja "
            "and chat_template in tokenizer_config.json)"
        )
    return _choose_template(templates, template_name, str(folder), folder.resolve().name, _special_tokens(folder, config))


def template_from_tokenizer(tokenizer: Any, *, template_name: str | None = None) -> TemplateSource:
    """The chat template a loaded tokenizer carries (``tokenizer.chat_template``: a string, or
    named templates), with its special tokens."""
    where = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    templates = _templates_from_config({"chat_template": getattr(tokenizer, "chat_template", None)})
    if not templates:
        raise TemplateNotFoundError(f"{where}: the tokenizer has no chat template (tokenizer.chat_template is unset)")
    return _choose_template(
        templates, template_name, where, where.rstrip("/").rsplit("/", 1)[-1], tokenizer_special_tokens(tokenizer)
    )


def tokenizer_special_tokens(tokenizer: Any) -> dict[str, str]:
    """``bos_token``, ``eos_token``, ... of a loaded tokenizer, as text."""
    return _special_token_texts(lambda key: getattr(tokenizer, key, None))


def _choose_template(
    templates: dict[str, str], template_name: str | None, where: str, base_name: str, special_tokens: dict[str, str]
) -> TemplateSource:
    names = ", ".join(sorted(templates))
    tool_use_source = None
    if template_name is not None:
        if template_name not in templates:
            raise TemplateNotFoundError(f"{where}: no template named {template_name!r} (it has {names})")
        chosen = template_name
    elif "default" in templates:
        chosen = "default"
        tool_use_source = templates.get("tool_use")
    else:
        raise TemplateNotFoundError(f"{where}: several chat templates ({names}) and no default; pass template_name=")
    return TemplateSource(
        source=templates[chosen],
        name=base_name if chosen == "default" else f"{base_name}:{chosen}",
        special_tokens=special_tokens,
        alternatives={key: value for key, value in templates.items() if key != chosen},
        tool_use_source=tool_use_source,
    )
