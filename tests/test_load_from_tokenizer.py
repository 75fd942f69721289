"""`chatcodec.load_from_tokenizer`: the codec of a loaded transformers tokenizer."""

from __future__ import annotations

import pytest
from tiny_tokenizer import tiny_tokenizer

import chatcodec
from chatcodec.errors import TemplateNotFoundError

QWEN3_MARKERS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
QWEN3_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]


def qwen3_tokenizer():  # type: ignore[no-untyped-def]
    return tiny_tokenizer("qwen3", markers=QWEN3_MARKERS, special=QWEN3_SPECIAL, eos_token="<|im_end|>")


def test_renders_like_the_tokenizer_and_parses_its_format() -> None:
    tokenizer = qwen3_tokenizer()
    codec = chatcodec.load_from_tokenizer(tokenizer)
    expected = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert codec.render(MESSAGES, add_generation_prompt=True) == expected
    assert codec.template.special_tokens["eos_token"] == "<|im_end|>"
    assert codec.template.name == "qwen3"
    message = codec.parse('<think>hm</think>\n\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    assert message.reasoning_content == "hm"
    assert [call.function.name for call in message.tool_calls] == ["f"]


def test_tokenizers_with_one_template_share_one_codec() -> None:
    first = chatcodec.load_from_tokenizer(qwen3_tokenizer())
    assert chatcodec.load_from_tokenizer(qwen3_tokenizer()) is first
    other = qwen3_tokenizer()
    other.chat_template = chatcodec.load("llama3_hermes").template.source
    assert chatcodec.load_from_tokenizer(other) is not first


def test_named_templates_follow_transformers_rules() -> None:
    tokenizer = qwen3_tokenizer()
    qwen3 = tokenizer.chat_template
    tokenizer.chat_template = {"default": qwen3, "plain": "{% for m in messages %}{{ m.content }}{% endfor %}"}
    assert chatcodec.load_from_tokenizer(tokenizer).template.source == qwen3
    plain = chatcodec.load_from_tokenizer(tokenizer, template_name="plain")
    assert plain.render(MESSAGES) == "Weather in Paris?"
    assert plain.template.name == "qwen3:plain"
    with pytest.raises(TemplateNotFoundError, match=r"no template named 'other' \(it has default, plain\)"):
        chatcodec.load_from_tokenizer(tokenizer, template_name="other")


def test_a_tokenizer_without_a_template_is_a_clear_error() -> None:
    tokenizer = qwen3_tokenizer()
    tokenizer.chat_template = None
    with pytest.raises(TemplateNotFoundError, match=r"tiny/qwen3: the tokenizer has no chat template"):
        chatcodec.load_from_tokenizer(tokenizer)
