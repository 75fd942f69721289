"""Real templates from public model repositories (../shared/corpus/templates, when present):
family detection, and render -> parse -> render for the ones a bundled family covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chatcodec

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "templates"

if not CORPUS.is_dir():
    pytest.skip("the template corpus (../shared/corpus/templates) is not present", allow_module_level=True)

# Which family each corpus template is read with (None: render only), checked by hand against
# the templates' delimiters.
EXPECTED_FAMILY = {
    "Hermes-2-Pro-Llama-3-8B-tool_use": "qwen3",
    "Hermes-3-Llama-3.1-8B-tool_use": "qwen3",
    "QwQ-32B": "qwen3",
    "Qwen2.5-7B-Instruct": "qwen3",
    "Qwen3-0.6B": "qwen3",
    "Qwen3-4B-Thinking-2507": "qwen3",
    "Qwen3-Coder-30B-A3B-Instruct": None,
    "Qwen3-Instruct-2507": "qwen3",
    "DeepSeek-R1-0528-Qwen3-8B": "deepseek_v3",
    "DeepSeek-R1-Distill-Llama-8B": "deepseek_v3",
    "DeepSeek-R1-Distill-Qwen-32B": "deepseek_v3",
    "DeepSeek-R1": "deepseek_v3",
    "DeepSeek-V3-0324": "deepseek_v3",
    "DeepSeek-V3-api-tokenizer": "deepseek_v3",
    "DeepSeek-V3.1": "deepseek",
    "DeepSeek-V3.2-llamacpp": None,
    "DeepSeek-V3": "deepseek_v3",
    "Llama-3.1-8B-Instruct": None,
    "Llama-3.2-3B-Instruct": None,
    "Llama-3.3-70B-Instruct": None,
    "cogito-v1-preview-llama-3B": None,
    "llama-3-firefunction-v2": None,
    "rnj-1-instruct": "llama3_hermes",
}
# Templates whose transcripts the family grammars do not cover (yet), and why.
TRANSCRIPT_GAPS = {
    "Hermes-2-Pro-Llama-3-8B-tool_use": "a real <|im_start|>tool role and its own tools preamble",
    "Hermes-3-Llama-3.1-8B-tool_use": "a real <|im_start|>tool role and its own tools preamble",
    "rnj-1-instruct": "prepends its own default system prompt, so the system text cannot come back",
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
CONVERSATIONS: dict[str, tuple[list[dict[str, Any]], Any]] = {
    "chat": (
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi — what's 2+2? 🙂"},
            {"role": "assistant", "content": "4."},
            {"role": "user", "content": 'Say "hi" {in braces} \\ ok'},
        ],
        None,
    ),
    "tools": (
        [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
                ],
            },
            {"role": "tool", "content": '{"temp_c": 18}'},
            {"role": "assistant", "content": "18 °C."},
        ],
        TOOLS,
    ),
}


def _templates() -> list[Path]:
    return sorted(CORPUS.glob("*/*.jinja"))


@pytest.mark.parametrize("path", _templates(), ids=lambda p: p.stem)
def test_family_detection(path: Path) -> None:
    codec = chatcodec.load(path)
    expected = EXPECTED_FAMILY[path.stem]
    if expected is None:
        with pytest.raises(chatcodec.UnsupportedTemplateError):
            codec.family
    else:
        assert codec.family.name == expected


@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("path", [p for p in _templates() if EXPECTED_FAMILY[p.stem]], ids=lambda p: p.stem)
def test_corpus_round_trip(path: Path, conversation: str) -> None:
    if path.stem in TRANSCRIPT_GAPS:
        pytest.skip(TRANSCRIPT_GAPS[path.stem])
    codec = chatcodec.load(path)
    messages, tools = CONVERSATIONS[conversation]
    try:
        report = codec.roundtrip(messages, tools=tools, add_generation_prompt=True)
    except chatcodec.TemplateRenderError as exc:
        pytest.skip(f"the template rejects this conversation: {exc}")
    assert report.text_survived, report.summary()
    assert report.injection_risks == []
