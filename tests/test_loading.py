"""Finding templates: bundled names, .jinja files, Hugging Face model folders; the clock; generation spans.

Model folders are checked against transformers itself: a tiny word-level tokenizer is written
beside the template files, loaded with ``AutoTokenizer`` (offline, from the folder), and its
``apply_chat_template`` output is the reference.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import chatcodec
from chatcodec.render.loading import BUNDLED_SPECIAL_TOKENS

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "templates"

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]

DEFAULT_TEMPLATE = (
    "[default]{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ eos_token }}"
)
TOOL_USE_TEMPLATE = "[tool_use]{{ bos_token }}{{ tools | tojson }}{% for m in messages %}|{{ m.content }}{% endfor %}"
LEGACY_TEMPLATE = "[legacy]{{ bos_token }}{{ messages | length }}{{ unk_token }}"


def added_token(content: str) -> dict[str, Any]:
    """A special token as tokenizer_config.json writes it (an AddedToken dict)."""
    return {
        "__type": "AddedToken",
        "content": content,
        "lstrip": False,
        "normalized": False,
        "rstrip": False,
        "single_word": False,
        "special": True,
    }


def model_folder(
    root: Path,
    *,
    config: dict[str, Any] | None = None,
    files: dict[str, str] | None = None,
    special_tokens_map: dict[str, Any] | None = None,
) -> Path:
    folder = root / "tiny-model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", **(config or {})}), encoding="utf-8"
    )
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if special_tokens_map is not None:
        (folder / "special_tokens_map.json").write_text(json.dumps(special_tokens_map), encoding="utf-8")
    return folder


def add_tokenizer(folder: Path) -> None:
    """Write the smallest tokenizer.json transformers loads, so the folder is a real tokenizer."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<|begin|>": 3, "<|end|>": 4}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))


def transformers_render(folder: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> str:
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    add_tokenizer(folder)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    text: str = tokenizer.apply_chat_template(MESSAGES, tokenize=False, **kwargs)
    return text


FOLDER_LAYOUTS: dict[str, dict[str, Any]] = {
    "chat_template.jinja": {
        "config": {"bos_token": "<s>", "eos_token": "</s>"},
        "files": {"chat_template.jinja": DEFAULT_TEMPLATE},
    },
    "jinja file plus additional templates": {
        "config": {"bos_token": added_token("<s>"), "eos_token": added_token("</s>")},
        "files": {
            "chat_template.jinja": DEFAULT_TEMPLATE,
            "additional_chat_templates/tool_use.jinja": TOOL_USE_TEMPLATE,
        },
    },
    "legacy string in tokenizer_config": {
        "config": {"bos_token": "<s>", "unk_token": "<unk>", "chat_template": LEGACY_TEMPLATE},
    },
    "legacy named list": {
        "config": {
            "bos_token": added_token("<|begin|>"),
            "eos_token": "<|end|>",
            "chat_template": [
                {"name": "default", "template": DEFAULT_TEMPLATE},
                {"name": "tool_use", "template": TOOL_USE_TEMPLATE},
            ],
        },
    },
    "files win over the legacy config": {
        "config": {"bos_token": "<s>", "chat_template": [{"name": "tool_use", "template": LEGACY_TEMPLATE}]},
        "files": {"chat_template.jinja": DEFAULT_TEMPLATE},
    },
    "special_tokens_map.json": {
        "config": {"chat_template": DEFAULT_TEMPLATE},
        "special_tokens_map": {"bos_token": added_token("<|begin|>"), "eos_token": "<|end|>"},
    },
}


@pytest.mark.parametrize("with_tools", (False, True), ids=["no-tools", "tools"])
@pytest.mark.parametrize("layout", FOLDER_LAYOUTS, ids=list(FOLDER_LAYOUTS))
def test_model_folder_renders_like_transformers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, with_tools: bool
) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS[layout])
    tools = TOOLS if with_tools else None
    text = chatcodec.load(folder).render(MESSAGES, tools=tools)
    assert text == transformers_render(folder, monkeypatch, tools=tools)


def test_named_template_is_chosen_like_transformers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS["jinja file plus additional templates"])
    codec = chatcodec.load(folder, template_name="tool_use")
    assert codec.name == "tiny-model:tool_use"
    expected = transformers_render(folder, monkeypatch, chat_template="tool_use", tools=TOOLS)
    assert codec.render(MESSAGES, tools=TOOLS) == expected
    assert expected.startswith("[tool_use]<s>[{")


def test_tool_use_template_is_taken_only_with_tools(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS["legacy named list"])
    codec = chatcodec.load(folder)
    assert codec.render(MESSAGES).startswith("[default]<|begin|><system>")
    assert codec.render(MESSAGES, tools=[]).startswith("[tool_use]<|begin|>[]")
    # Naming the default explicitly keeps it, tools or not.
    assert chatcodec.load(folder, template_name="default").render(MESSAGES, tools=TOOLS).startswith("[default]")


def test_special_tokens_from_added_token_dicts(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS["jinja file plus additional templates"])
    assert chatcodec.load(folder).special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}


def test_special_tokens_can_be_overridden(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS["chat_template.jinja"])
    codec = chatcodec.load(folder, special_tokens={"bos_token": "<BOS>"})
    assert codec.render(MESSAGES) == "[default]<BOS><system>Be brief.<user>Hi!</s>"


def test_bundled_names() -> None:
    assert chatcodec.bundled_template_names() == ["deepseek", "llama3_hermes", "qwen3"]
    for name in chatcodec.bundled_template_names():
        codec = chatcodec.load(name)
        assert codec.name == name
        assert codec.source == (REPO / "templates" / f"{name}.jinja").read_text(encoding="utf-8")
        assert codec.special_tokens == BUNDLED_SPECIAL_TOKENS[name]


def test_bundled_qwen3_render_checked_by_hand() -> None:
    # Written out by hand from the template text, as a fixed point beside the parity tests.
    text = chatcodec.load("qwen3").render(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi!"}],
        add_generation_prompt=True,
        enable_thinking=False,
    )
    expected = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
    assert text == expected + "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def test_jinja_file_by_path_and_by_string(tmp_path: Path) -> None:
    path = tmp_path / "mine.jinja"
    path.write_text("{{ messages[0].content }}!", encoding="utf-8")
    for given in (path, str(path)):
        codec = chatcodec.load(given)
        assert codec.name == "mine"
        assert codec.special_tokens == {}
        assert codec.render(MESSAGES) == "Be brief.!"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("qwen4", "unknown template 'qwen4': the bundled templates are deepseek, llama3_hermes, qwen3; "),
        ("Qwen/Qwen3-8B", "template not found: 'Qwen/Qwen3-8B' is not an existing .jinja file or model folder "),
        ("missing.jinja", "template not found: 'missing.jinja' is not an existing .jinja file or model folder "),
    ],
)
def test_unknown_template(given: str, expected: str) -> None:
    with pytest.raises(chatcodec.TemplateNotFoundError) as caught:
        chatcodec.load(given)
    assert str(caught.value).startswith(expected)


def test_a_templates_text_loads_as_its_file_does() -> None:
    # (What a server holds: ``tokenizer.chat_template``, or a template sent with a request.)
    path = CORPUS / "Qwen3-0.6B.jinja"
    source = path.read_text(encoding="utf-8")
    from_text = chatcodec.load(source, special_tokens={"eos_token": "<|im_end|>"})
    from_file = chatcodec.load(path, special_tokens={"eos_token": "<|im_end|>"})
    assert from_text.name == "chat_template"
    assert from_text.special_tokens == {"eos_token": "<|im_end|>"}
    conversation = [*MESSAGES, {"role": "assistant", "content": "Hello.", "reasoning_content": "Greet."}]
    assert from_text.render(conversation) == from_file.render(conversation)
    assert from_text.format.name == "chat_template"
    message = from_text.parse("<think>\nGreet.\n</think>\n\nHello.")
    assert (message.reasoning_content, message.content) == ("Greet.", "Hello.")
    assert chatcodec.load("{{ messages | length }} messages").render(MESSAGES) == "2 messages"


def test_a_templates_text_takes_no_template_name() -> None:
    with pytest.raises(chatcodec.TemplateNotFoundError, match="only applies to model folders, not to a template's text"):
        chatcodec.load("{{ bos_token }}", template_name="tool_use")


@pytest.mark.parametrize("given", ["x" * 5000, "a/" + "b" * 5000, "nul\x00inside"])
def test_names_no_file_system_takes_are_template_not_found(given: str) -> None:
    # (Too long for a file name, or holding a NUL: the file system refuses to look them up.)
    with pytest.raises(chatcodec.TemplateNotFoundError) as caught:
        chatcodec.load(given)
    assert len(str(caught.value)) < 400  # the name is cut short in the message


def test_folder_problems_are_template_not_found(tmp_path: Path) -> None:
    empty = model_folder(tmp_path, config={"bos_token": "<s>"})
    with pytest.raises(chatcodec.TemplateNotFoundError, match="no chat template found"):
        chatcodec.load(empty)
    (empty / "tokenizer_config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(chatcodec.TemplateNotFoundError, match=r"tokenizer_config.json: not valid JSON"):
        chatcodec.load(empty)


def test_unknown_template_name_lists_the_known_ones(tmp_path: Path) -> None:
    folder = model_folder(tmp_path, **FOLDER_LAYOUTS["legacy named list"])
    with pytest.raises(chatcodec.TemplateNotFoundError, match=r"no template named 'rag' \(it has default, tool_use\)"):
        chatcodec.load(folder, template_name="rag")


def test_several_templates_and_no_default_needs_a_name(tmp_path: Path) -> None:
    folder = model_folder(
        tmp_path, config={"chat_template": [{"name": "a", "template": "A"}, {"name": "b", "template": "B"}]}
    )
    with pytest.raises(chatcodec.TemplateNotFoundError, match=r"several chat templates \(a, b\) and no default"):
        chatcodec.load(folder)
    assert chatcodec.load(folder, template_name="b").render(MESSAGES) == "B"


def test_template_name_is_only_for_folders(tmp_path: Path) -> None:
    with pytest.raises(chatcodec.TemplateNotFoundError, match="only applies to model folders"):
        chatcodec.load("qwen3", template_name="tool_use")


# -- strftime_now and the injectable clock ------------------------------------------------------

DATE_TEMPLATE = "Today is {{ strftime_now('%d %b %Y, %H:%M') }}."


def test_clock_makes_strftime_now_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "dated.jinja"
    path.write_text(DATE_TEMPLATE, encoding="utf-8")
    codec = chatcodec.load(path, clock=lambda: datetime(2024, 1, 2))
    assert codec.render(MESSAGES) == "Today is 02 Jan 2024, 00:00."
    assert codec.render(MESSAGES) == codec.render(MESSAGES)


def test_without_a_clock_strftime_now_reads_the_system_clock(tmp_path: Path) -> None:
    path = tmp_path / "dated.jinja"
    path.write_text("{{ strftime_now('%Y') }}", encoding="utf-8")
    before = datetime.now().year
    year = int(chatcodec.load(path).render(MESSAGES))
    assert before <= year <= datetime.now().year


def test_clock_matches_transformers_on_llama_3_2(monkeypatch: pytest.MonkeyPatch) -> None:
    # Llama 3.2 writes "Today Date: ..." from strftime_now when no date_string is given.
    path = CORPUS / "Llama-3.2-3B-Instruct.jinja"
    pytest.importorskip("transformers")
    import transformers.utils.chat_template_utils as hf

    class FixedDatetime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FixedDatetime:
            return cls(2024, 7, 26, 9, 30)

    monkeypatch.setattr(hf, "datetime", FixedDatetime)
    source = path.read_text(encoding="utf-8")
    tokens = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    expected = hf.render_jinja_template(
        conversations=[MESSAGES], chat_template=source, add_generation_prompt=True, **tokens
    )[0][0]
    assert "Today Date: 26 Jul 2024" in expected
    codec = chatcodec.load(path, special_tokens=tokens, clock=lambda: datetime(2024, 7, 26, 9, 30))
    assert codec.render(MESSAGES, add_generation_prompt=True) == expected


# -- {% generation %} -----------------------------------------------------------------------------

GENERATION_TEMPLATE = (
    "{% for m in messages %}<{{ m.role }}>"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}</s>{% endgeneration %}"
    "{% else %}{{ m.content }}{% endif %}{% endfor %}"
)
CHAT = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Bye"},
    {"role": "assistant", "content": "See you."},
]


def test_generation_spans_cover_the_assistant_text(tmp_path: Path) -> None:
    path = tmp_path / "masked.jinja"
    path.write_text(GENERATION_TEMPLATE, encoding="utf-8")
    text, spans = chatcodec.load(path).render_with_generation_spans(CHAT)
    assert text == "<user>Hi<assistant>Hello!</s><user>Bye<assistant>See you.</s>"
    assert [text[start:end] for start, end in spans] == ["Hello!</s>", "See you.</s>"]
    # A plain render is the same text.
    assert chatcodec.load(path).render(CHAT) == text


@pytest.mark.parametrize("source", ["tiny", "rnj-1"])
def test_generation_spans_match_transformers(tmp_path: Path, source: str) -> None:
    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import render_jinja_template

    if source == "tiny":
        path = tmp_path / "masked.jinja"
        path.write_text(GENERATION_TEMPLATE, encoding="utf-8")
    else:
        path = CORPUS / "rnj-1-instruct.jinja"
    tokens = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    rendered, indices = render_jinja_template(
        conversations=[CHAT],
        chat_template=path.read_text(encoding="utf-8"),
        return_assistant_tokens_mask=True,
        **tokens,
    )
    text, spans = chatcodec.load(path, special_tokens=tokens).render_with_generation_spans(CHAT)
    assert (text, spans) == (rendered[0], [tuple(span) for span in indices[0]])
    assert spans


def test_template_variables_name_what_a_template_needs_to_render(tmp_path: Path) -> None:
    needy = tmp_path / "needy.jinja"
    needy.write_text(
        "{{ 'Tools: ' + functions + '\\nToday: ' + today }}{% for m in messages %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}",
        encoding="utf-8",
    )
    codec = chatcodec.load(needy)
    assert codec.template_variables == ["functions", "today"]
    assert codec.describe()["template_variables"] == ["functions", "today"]
    # The format is read with them empty; a render still needs them, as transformers' does.
    assert codec.format.source is not None and codec.format.source.headers["user"] == "<user>"
    with pytest.raises(chatcodec.TemplateRenderError, match="'functions' is undefined"):
        codec.render(MESSAGES)
    assert codec.render(MESSAGES, functions="[]", today="Monday").startswith("Tools: []\nToday: Monday<system>")
    assert chatcodec.load("qwen3").template_variables == []
    raising = tmp_path / "raising.jinja"
    raising.write_text("{{ raise_exception('no') }}", encoding="utf-8")
    assert chatcodec.load(raising).template_variables == []
