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


def find_template(name_or_path: str | Path, *, template_name: str | None = None) -> TemplateSource:
    """Resolve a bundled template name, a ``.jinja`` file or a model folder to its source."""
    text = str(name_or_path)
    bundled = bundled_template_path(text) if "/" not in text and "\\" not in text else None
    if bundled is not None:
        return TemplateSource(
            source=bundled.read_text(encoding="utf-8"),
            name=text,
            special_tokens=dict(BUNDLED_SPECIAL_TOKENS.get(text, {})),
        )
    path = Path(name_or_path)
    if path.is_dir():
        return _from_model_dir(path, template_name)
    if path.is_file():
        return TemplateSource(source=path.read_text(encoding="utf-8"), name=path.stem)
    raise TemplateNotFoundError(
        f"no template named {text!r}: not a bundled template ({', '.join(bundled_template_names())}), "
        "a .jinja file or a model folder"
    )


def _token_text(value: Any) -> str | None:
    # tokenizer_config.json writes tokens either as strings or as AddedToken dicts.
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _from_model_dir(folder: Path, template_name: str | None) -> TemplateSource:
    config: dict[str, Any] = {}
    config_path = folder / "tokenizer_config.json"
    if config_path.is_file():
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise TemplateNotFoundError(f"{config_path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None

    templates: dict[str, str] = {}
    legacy = config.get("chat_template")
    if isinstance(legacy, str):
        templates["default"] = legacy
    elif isinstance(legacy, list):
        for entry in legacy:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str):
                templates[entry["name"]] = entry["template"]
    # Separate files take precedence over the legacy string, as in transformers.
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        templates["default"] = jinja_file.read_text(encoding="utf-8")
    extra_dir = folder / "additional_chat_templates"
    if extra_dir.is_dir():
        for extra in sorted(extra_dir.glob("*.jinja")):
            templates[extra.stem] = extra.read_text(encoding="utf-8")

    if not templates:
        raise TemplateNotFoundError(
            f"{folder}: no chat template found (looked for chat_template.jinja, additional_chat_templates/*.jinja "
            "and chat_template in tokenizer_config.json)"
        )
    chosen = template_name or ("default" if "default" in templates else next(iter(templates)))
    if chosen not in templates:
        raise TemplateNotFoundError(f"{folder}: no template named {chosen!r} (has {', '.join(sorted(templates))})")

    special_tokens = {}
    for key in SPECIAL_TOKEN_KEYS:
        token = _token_text(config.get(key))
        if token is not None:
            special_tokens[key] = token
    name = folder.name if chosen == "default" else f"{folder.name}:{chosen}"
    return TemplateSource(
        source=templates[chosen],
        name=name,
        special_tokens=special_tokens,
        alternatives={key: value for key, value in templates.items() if key != chosen},
    )
