"""Finding a chat template: a bundled name, a ``.jinja`` file, or a Hugging Face model folder."""

from __future__ import annotations

import json
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


def find_template(name_or_path: str | Path, *, template_name: str | None = None) -> TemplateSource:
    """Resolve a bundled template name, a ``.jinja`` file or a model folder to its source.

    A bundled name wins over a folder of the same name in the working directory; write
    ``./qwen3`` for the folder.
    """
    text = str(name_or_path)
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
    if path.is_dir():
        return _from_model_dir(path, template_name)
    if path.is_file():
        if template_name is not None:
            raise TemplateNotFoundError(
                f"template_name={template_name!r} only applies to model folders, not to {text!r}"
            )
        return TemplateSource(source=_read_text(path), name=path.stem)
    raise TemplateNotFoundError(_not_found_message(text))


def _could_be_bundled_name(text: str) -> bool:
    return bool(text) and "/" not in text and "\\" not in text and not text.startswith(".")


def _not_found_message(text: str) -> str:
    bundled = ", ".join(bundled_template_names())
    if "/" in text or "\\" in text or text.endswith(".jinja"):
        return (
            f"template not found: {text!r} is not an existing .jinja file or model folder "
            f"(chatcodec reads local files only; the bundled templates are {bundled})"
        )
    return (
        f"unknown template {text!r}: the bundled templates are {bundled}; "
        "or give a path to a .jinja file or a model folder"
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateNotFoundError(f"cannot read template {path}: {exc}") from None


def _read_json_object(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise TemplateNotFoundError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
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
    if jinja_file.is_file():
        templates["default"] = _read_text(jinja_file)
    extra_dir = folder / CHAT_TEMPLATE_DIR
    if extra_dir.is_dir():
        for extra in sorted(extra_dir.glob("*.jinja")):
            templates[extra.name.removesuffix(".jinja")] = _read_text(extra)
    return templates


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
        values.update(_read_json_object(folder / SPECIAL_TOKENS_MAP_FILE))
    tokens = {}
    for key in SPECIAL_TOKEN_KEYS:
        token = _token_text(values.get(key))
        if token is not None:
            tokens[key] = token
    return tokens


def _from_model_dir(folder: Path, template_name: str | None) -> TemplateSource:
    config = _read_json_object(folder / "tokenizer_config.json")
    # As in transformers, template files replace whatever tokenizer_config.json holds.
    templates = _templates_from_files(folder) or _templates_from_config(config)
    if not templates:
        raise TemplateNotFoundError(
            f"{folder}: no chat template found (looked for {CHAT_TEMPLATE_FILE}, {CHAT_TEMPLATE_DIR}/*.jinja "
            "and chat_template in tokenizer_config.json)"
        )
    names = ", ".join(sorted(templates))
    tool_use_source = None
    if template_name is not None:
        if template_name not in templates:
            raise TemplateNotFoundError(f"{folder}: no template named {template_name!r} (it has {names})")
        chosen = template_name
    elif "default" in templates:
        chosen = "default"
        tool_use_source = templates.get("tool_use")
    else:
        raise TemplateNotFoundError(f"{folder}: several chat templates ({names}) and no default; pass template_name=")
    name = folder.resolve().name if chosen == "default" else f"{folder.resolve().name}:{chosen}"
    return TemplateSource(
        source=templates[chosen],
        name=name,
        special_tokens=_special_tokens(folder, config),
        alternatives={key: value for key, value in templates.items() if key != chosen},
        tool_use_source=tool_use_source,
    )
