"""Every real template in tests/templates gets a parser: a framing read from the template, the
reasoning and call syntax it writes, content and reasoning read back from completions, and
transcripts that round-trip byte for byte.

A completion here is what the template itself writes for an answer after the generation prompt
(render the conversation with the answer, cut the prompt off), so the expected message is known
without asking chatcodec. Templates that cannot pass a check are listed with the reason, found
by reading the template; the lists are strict (a template that starts passing fails the test).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from template_corpus import ALL_TEMPLATES, special_tokens

import chatcodec
from chatcodec.formats.base import Format

CLOCK = datetime(2024, 7, 26)

# Templates whose output does not show where messages lie, and why.
NO_FRAMING = {
    "Bofenghuang-vigogne-2-70b-chat": "every turn is spelled by the user's text alone ([INST] wraps it with no header)",
    "Fireworks-firefunction-v1": "needs a 'functions' message first",
    "Google-shieldgemma-27b": "a classifier prompt: the conversation is written inside its policy question",
    "IBM-granite-guardian-3.0-2b": "a classifier prompt: the answer is not a turn",
    "Meta-Llama-Guard-3-1B": "a classifier prompt: the user's text is not written as given",
    "Ollama-index-chatqa-32": "no delimiter between a system prompt and the turns (no LALR grammar can tell)",
    "SberDevices-GigaChat-20B-A3B-instruct": "needs 'additional_special_tokens'",
    "Transformers-default-blenderbot": "turns are separated by spaces alone",
    "Transformers-default-generic": "turns are not framed: only the texts are written",
    "Yandex-YandexGPT-5-Lite-8B-instruct": "drops assistant answers that are not followed by a user message",
}

# Which call syntax a template writes: checked by reading how each template renders an
# assistant turn with two tool calls (or its tools prompt, where it renders none). Every
# template not listed gets no call syntax, and says why.
CALL_SYNTAX: dict[str, str] = {
    # <tool_call>{"name": ..., "arguments": ...}</tool_call>
    **dict.fromkeys(
        [
            "AllenAI-OLMo-3-Think-openinstruct",
            "DeepCogito-cogito-v1-preview-qwen-14B",
            "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use-jsonschema",
            "Hermes-2-Pro-Llama-3-8B-tool_use",
            "Hermes-3-Llama-3.1-8B-tool_use",
            "HuggingFaceTB-SmolLM3-3B",
            "HuggingFaceTB-SmolLM3-3B-unsloth",
            "IBM-granite-4.0",
            "IBM-granite-4.1",
            "LGAI-EXAONE-4.0-1.2B",
            "Microsoft-Phi-4-reasoning",
            "QwQ-32B",
            "Qwen-QwQ-32B",
            "Qwen-QwQ-32B-ollama-older-rev1",
            "Qwen-QwQ-32B-ollama-older-rev2",
            "Qwen-Qwen2.5-0.5B-Instruct-older",
            "Qwen2.5-7B-Instruct",
            "Qwen3-0.6B",
            "Qwen3-4B-Thinking-2507",
            "Qwen3-Instruct-2507",
            "Reka-Edge",
            "SpeakLeash-Bielik-11B-v3.0-Instruct",
            "Xiaomi-MiMo-VL",
            "rnj-1-instruct",
            # ChatML templates that render no tool calls at all: their models write Hermes calls.
            "01AI-Yi-6B-Chat",
            "01AI-Yi-Coder-1.5B-Chat",
            "AIDC-AI-Marco-o1",
            "AllenAI-OLMo-3-Instruct-openinstruct",
            "CognitiveComputations-dolphin-2.6-phi-2",
            "CognitiveComputations-dolphin-2.7-mixtral-8x7b",
            "Databricks-dbrx-instruct",
            "HuggingFaceH4-zephyr-7b-gemma-v0.1",
            "HuggingFaceTB-SmolLM2-135M-Instruct",
            "InfLy-OpenCoder-8B-Instruct",
            "InternLM-internlm2-chat-1_8b",
            "LLaVA-v1.6-34b",
            "MadeAgents-Hammer2.1",
            "Microsoft-phi-4",
            "NousResearch-Hermes-3-Llama-3.1-70B-default",
            "NousResearch-Nous-Hermes-2-Mixtral-8x7B-DPO",
            "Ollama-index-chatml-08",
            "Ollama-index-chatml-15",
            "Ollama-index-chatml-16",
            "PowerInfer-SmallThinker-3B-Preview",
            "Qwen-Qwen1.5-0.5B-Chat",
            "Qwen-Qwen2-0.5B-Instruct",
            "Qwen-Qwen2.5-VL-7B-Instruct",
            "SAIL-Sailor2-1B-Chat",
            "StabilityAI-stable-code-instruct-3b",
            "Teknium-OpenHermes-2.5-Mistral-7B",
        ],
        "hermes",
    ),
    "DeepSeek-V3.1": "deepseek",
    "DeepSeek-V3.1-llamacpp-edited": "deepseek",
    **dict.fromkeys(
        [
            "DeepSeek-R1",
            "DeepSeek-R1-0528-Qwen3-8B",
            "DeepSeek-R1-Distill-Llama-8B",
            "DeepSeek-R1-Distill-Llama-8B-llamacpp-edited",
            "DeepSeek-R1-Distill-Llama-8B-llamacpp-first",
            "DeepSeek-R1-Distill-Qwen-32B",
            "DeepSeek-R1-Distill-Qwen-32B-llamacpp-edited",
            "DeepSeek-R1-Distill-Qwen-32B-llamacpp-first",
            "DeepSeek-V2.5",
            "DeepSeek-V3",
            "DeepSeek-V3-0324",
            "DeepSeek-V3-api-tokenizer",
            "llamacpp-deepseek-r1",
            "llamacpp-deepseek-r1-llamacpp-first",
        ],
        "deepseek_v3",
    ),
    # <｜DSML｜invoke name="..."><｜DSML｜parameter ... string="true">
    **dict.fromkeys(["DeepSeek-V3.2-llamacpp", "DeepSeek-V4", "DeepSeek-V4-Flash-0731"], "dsml"),
    # <function=NAME><parameter=KEY>VALUE</parameter></function> inside <tool_call>
    **dict.fromkeys(
        [
            "NVIDIA-Nemotron-3-Nano-30B-A3B",
            "NVIDIA-Nemotron-3-Nano-30B-A3B-llamacpp-first",
            "NVIDIA-Nemotron-3-Nano-Omni",
            "NVIDIA-Nemotron-3.5",
            "Qwen-Qwen3-Coder",
            "Qwen-Qwen3-Coder-llamacpp-first",
            "Qwen-Qwen3.5-4B",
            "Qwen-Qwen3.5-4B-hfjs",
            "Qwen-Qwen3.8",
            "Qwen3-Coder-30B-A3B-Instruct",
            "StepFun-Step-3.5-Flash",
            "StepFun-Step-3.7-Flash",
        ],
        "qwen3_coder",
    ),
    "ByteDance-Seed-OSS-36B-Instruct": "seed",  # the same inside <seed:tool_call>
    "MiniMax-M2": "minimax",  # <minimax:tool_call><invoke name="NAME"><parameter name="KEY">
    "MiniMax-M3": "minimax_m3",  # MARK<invoke name="NAME">MARK<KEY>VALUE MARK</KEY>, MARK = ]<]minimax[>[
    # <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>
    **dict.fromkeys(
        [
            "ZhipuAI-GLM-4.6",
            "ZhipuAI-GLM-4.5-llamacpp",
            "ZhipuAI-GLM-4.7-Flash",
            "ZhipuAI-GLM-5.1",
            "Laguna-v2",
            "Laguna-v8",
            "Poolside-Laguna-S-2.1",
            "Poolside-Laguna-XS-2.1",
            "iFlytek-Spark-2.5",
            "InclusionAI-Ling-3.0-flash",
        ],
        "glm",
    ),
    # The same tags suffixed ":opensource", a <tool_sep:opensource> after the name, in a section
    "Tencent-Hy3": "hunyuan",
    # >>>all\nTEXT>>>NAME\n{...}: each part of the answer names its recipient
    "MeetKai-functionary-medium-v3.2": "functionary_v3_2",
    # <|from|>assistant\n<|recipient|>NAME\n<|content|>{...}: each part a message of its own
    "MeetKai-functionary-medium-v2.2": "functionary_v2",
    # <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="KEY" type="string"<|sep|>…
    "Moonshot-Kimi-K3": "xtml",
    # <function name="NAME"><param name="KEY">VALUE</param></function>, CDATA for markup
    "OpenBMB-MiniCPM5-1B": "minicpm",
    # <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}
    **dict.fromkeys(
        [
            "Moonshot-Kimi-K2-Instruct",
            "Moonshot-Kimi-K2-Instruct-llamacpp-first",
            "Moonshot-Kimi-K2-Instruct-early",
            "Moonshot-Kimi-K2-Instruct-early-llamacpp-first",
            "Moonshot-Kimi-K2-Thinking",
            "Moonshot-Kimi-K2-Thinking-hfjs",
            "Moonshot-Kimi-K2-Thinking-llamacpp-first",
        ],
        "kimi",
    ),
    # [TOOL_CALLS]NAME[ARGS]{...}
    **dict.fromkeys(
        ["Mistral-Devstral-Small-2507-unsloth", "Mistral-Ministral-3-14B-Reasoning-2512", "Mistral-Small-3.2-24B-Instruct-2506"],
        "mistral",
    ),
    # [TOOL_CALLS][{"name": ..., "arguments": ..., "id": ...}]
    **dict.fromkeys(
        [
            "CISCai-Mistral-7B-Instruct-v0.3-SOTA-GGUF",
            "Mistral-7B-Instruct-v0.3-jsonschema",
            "Mistral-Nemo-Instruct-2407",
            "Mistral-Nemo-Instruct-2407-hfjs",
            "Mistral-Small-3.1-24B-Instruct-2503",
            # (A plain answer opens with a space these two write before no call.)
            "vLLM-Mistral-official",
            "vLLM-Mistral-parallel",
        ],
        "mistral_list",
    ),
    # The tools prompt says: respond with <|tool_call|> followed by a JSON list.
    **dict.fromkeys(
        [
            "IBM-granite-3.0-2b-instruct",
            "IBM-granite-vision-3.2-2b",
            "IBM-granite-3.1-1b-a400m-instruct",
            "IBM-granite-3.2-8b-instruct",
            "IBM-granite-3.3-2b-instruct",
            "IBM-granite-3.3-2b-instruct-ollama",
        ],
        "granite",
    ),
    # <tool_calls>[...]</tool_calls>, <TOOLCALL>[...]</TOOLCALL>
    **dict.fromkeys(
        [
            "AI21-Jamba-Large-1.6",
            "ServiceNow-Apriel-1.5-15b-Thinker-unsloth",
            # (its arguments written with ``| string``: given as text, they are JSON)
            "ServiceNow-Apriel-1.5-15b-Thinker-unsloth-llamacpp-first",
            "ServiceNow-Apriel-1.6-15b-Thinker-fixed",
            "ServiceNow-Apriel-1.6-15b-Thinker-fixed-llamacpp-first",
        ],
        "tool_calls_list",
    ),
    "NVIDIA-Nemotron-Nano-9B-v2": "toolcall_list",
    "NVIDIA-Llama-3.3-Nemotron-Super-49B-v1.5": "toolcall_list",
    # <|action_start|><|plugin|>\n{...}<|action_end|>
    "vLLM-InternLM2-tool": "internlm2",
    "vLLM-granite-20b-functioncalling": "granite_20b_fc",  # <function_call> {...} per call
    "vLLM-HyperCLOVAX-SEED-Think-14B": "hyperclovax",  # a message of calls: <|im_start|>assistant -> tool/function_call\n[...]
    # <response>…</response>, then Hermes calls
    "Baidu-ERNIE-4.5-21B-A3B-Thinking": "hermes",
    # DeepSeek's DSML spelled <｜GCML｜...>
    "SberDevices-GigaChat3.5-llamacpp-branch": "gcml",
    # <tool_calls>\n{"name": ..., "arguments": ...}\n{...}\n</tool_calls>: one object a line
    "MiniMax-M1": "minimax_m1",
    # <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": ...}]<|END_ACTION|>
    **dict.fromkeys(
        [
            "Cohere-command-a-03-2025",
            "Cohere-command-a-reasoning-08-2025",
            "Cohere-command-r7b-12-2024",
            "Cohere-command-r7b-arabic-02-2025",
            "Cohere-North-Mini-Code-Cohere2MoE",
            "Cohere-command-a-03-2025-hfjs",
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use-llamacpp-first",
        ],
        "cohere",
    ),
    **dict.fromkeys(["SwissAI-Apertus-8B-Instruct", "SwissAI-Apertus-8B-Instruct-llamacpp-first"], "apertus"),
    "cogito-v1-preview-llama-3B": "json_list",  # a bare [{"name": ..., "arguments": ...}]
    **dict.fromkeys(
        ["Microsoft-Phi-4-mini-instruct", "Microsoft-Phi-4-mini-reasoning", "Fireworks-llama-3-firefunction-v2", "llama-3-firefunction-v2"],
        "functools",
    ),  # functools[{...}]
    "AllenAI-Olmo-3.1-32B-Instruct": "olmo3",  # <function_calls>f(a='x')\ng(n=2)</function_calls>
    "vLLM-Llama-4-pythonic": "pythonic_list",  # [f(a="x"), g(n=2)] as the whole answer
    # The same, asked for by the tools prompt; past calls are rendered unquoted, read by no syntax
    **dict.fromkeys(["vLLM-Llama-3.2-pythonic", "vLLM-ToolACE"], "pythonic_list"),
    # to=NAME<|message|><atem:function_calls><atem:invoke name="NAME">...
    "Muse-Glimmer": "atem",
    "vLLM-Muse-Glimmer": "atem",
    "vLLM-Phi-4-mini": "functools",  # asked for by its system prompt
    "LiquidAI-LFM2-8B-A1B-llamacpp-first": "lfm2_json",  # <|tool_call_start|>{...}<|tool_call_end|>
    # [f(a='x'), g(n=2)] between <|tool_call_start|> and <|tool_call_end|>
    **dict.fromkeys(["LiquidAI-LFM2.5-8B-A1B", "LiquidAI-LFM2.5-VL-450M", "OpenBMB-MiniCPM3-4B"], "pythonic"),
    # LFM2 templates that render no calls but open the tools prompt LFM2's way ("List of
    # tools: "): their models write the same Python calls in the same tags.
    **dict.fromkeys(["LiquidAI-LFM2-8B-A1B", "LiquidAI-LFM2.5-Instruct", "llamacpp-lfm2"], "pythonic"),
    "SberDevices-GigaChat3.1-10B-A1.8B": "gigachat",  # <|function_call|>{...}
    "SberDevices-GigaChat3-10B-A1.8B": "gigachat3",  # ...<|message_sep|>\n\nfunction call<|role_sep|>\n{...}
    # <|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{...}<|tool_call:end|>
    "Upstage-Solar-Open-100B": "solar",
    # <|python_start|><|python_end|>{"name": ..., "parameters": ...}
    "Meta-Llama-4-Scout-17B-16E-Instruct": "llama4_json",
    # <|tool_call>call:NAME{key:<|"|>value<|"|>}<tool_call|>
    **dict.fromkeys(
        [
            "Google-gemma-4-31B-it",
            "Google-gemma-4-31B-it-2026-07",
            "Google-gemma-4-31B-it-interleaved",
            "Google-gemma-4-31B-it-interleaved-llamacpp-first",
            "Google-gemma-4-E2B-it-2026-07",
            "Google-gemma-4-fix21326",
        ],
        "gemma",
    ),
    # {"name": ..., "parameters": ...} as the whole answer
    **dict.fromkeys(
        [
            "Llama-3.1-8B-Instruct",
            "Llama-3.2-3B-Instruct",
            "Llama-3.3-70B-Instruct",
            "Meta-Llama-3.2-11B-Vision-Instruct",
            "Meta-Llama-3.2-90B-Vision-Instruct",
            "NVIDIA-Llama-3.1-Nemotron-70B-Instruct",
        ],
        "llama_json",
    ),
    # <function=NAME>{...}</function>
    **dict.fromkeys(["MeetKai-functionary-medium-v3.1", "MeetKai-functionary-medium-v3.1-llamacpp-first"], "functionary"),
    # <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{...}<|call|>
    **dict.fromkeys(["OpenAI-gpt-oss-120b", "OpenAI-gpt-oss-20b-2025-08-05", "OpenAI-gpt-oss-20b-2025-08-07"], "harmony"),
    # <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{...}<|end|>
    "OpenAI-gpt-oss-20b-2025-08-04": "harmony_end_closed",
}
HERMES_TEMPLATES = {name for name, syntax in CALL_SYNTAX.items() if syntax == "hermes"}
DEEPSEEK_TEMPLATES = {name: syntax for name, syntax in CALL_SYNTAX.items() if syntax.startswith("deepseek")}

# Completions of content that do not read back as the answer, and why.
CONTENT_GAPS = {
    "Deci-DeciLM-7B-instruct": "no end token: the newline after an answer stays in its content",
    "IBM-granite-3b-code-instruct": "no end token: the newlines after an answer stay in its content",
    "TII-falcon-11B": "no end token: the newline after an answer stays in its content",
    "llamacpp-rwkv-world": "no end token: the newlines after an answer stay in its content",
    "NVIDIA-Nemotron-Nano-9B-v2": "the prompt opens <think> but answers are written without reasoning",
    "NVIDIA-Nemotron-Mini-4B-Instruct": "no end token in its turns (the model stops at </s>): the newline after an answer stays in its content",
}

# Round trips that do not give the text back, and why (by conversation where it matters).
ROUND_TRIP_GAPS = {
    "vLLM-Mistral-parallel": "writes its parallel-call instructions into the last user turn of every conversation, as if it were a system message",
    "Cohere-North-Mini-Code-Cohere2MoE": "answers are wrapped in <|START_TEXT|>, which the prompt does not open",
    "DeepSeek-R1-Distill-Qwen-32B-llamacpp-first": "llama.cpp's copy writes '\\n' after the BOS token",
    "DeepSeek-V2.5": "writes eight spaces and a BOS token before a system prompt",
    "DeepSeek-coder-1.3b-instruct": "a system prompt replaces the default one without a delimiter",
    "DeepSeek-coder-33B-instruct-TheBloke-AWQ": "the answer header doubles as the user turn's footer",
    "Google-gemma-4-31B-it": "the generation prompt writes an empty thought channel the turns never have",
    "Google-gemma-4-31B-it-interleaved": "the generation prompt writes an empty thought channel the turns never have",
    "Google-gemma-4-31B-it-interleaved-llamacpp-first": "the generation prompt writes an empty thought channel",
    "Google-gemma-4-fix21326": "the generation prompt writes an empty thought channel the turns never have",
    "MadeAgents-Hammer2.1": "the default system prompt and a given one share one turn with no delimiter",
    "Maywell-PiVoT-MoE": "the system prompt is repeated in every user turn",
    "Meta-CodeLlama-70b-Instruct": "'Source: assistant' headers also end the previous turn",
    "Meta-Llama-2-7b-chat": "the first user turn has no header when a system prompt precedes it",
    "Meta-Llama-Guard-3-8B": "a classifier prompt: the conversation is quoted inside one user turn",
    "NVIDIA-Nemotron-Nano-9B-v2": "the system footer is two newlines, which content may hold",
    "Ollama-index-llama2-chat-12": "the first user turn has no header when a system prompt precedes it",
    "Ollama-index-magicoder-26": "the answer header doubles as the user turn's footer",
    "Ollama-index-starcoder2-instruct-11": "the answer header doubles as the user turn's footer",
    "PowerInfer-SmallThinker-3B-Preview": "the default system prompt and a given one share one turn with no delimiter",
    "Qwen-Qwen1.5-0.5B-Chat": "each turn's end token is written by the next turn",
    "ServiceNow-Apriel-1.6-15b-Thinker-fixed": "a system prompt is merged into a preamble",
    "ServiceNow-Apriel-1.6-15b-Thinker-fixed-llamacpp-first": "a system prompt is merged into a preamble",
    "TheBloke-FusionNet_34Bx2_MoE": "the first user turn has no header when a system prompt precedes it",
    "Transformers-default-llama": "the first user turn has no header when a system prompt precedes it",
    "llamacpp-deepseek-r1": "llama.cpp's own template writes the end token after user turns",
    "llamacpp-deepseek-r1-llamacpp-first": "llama.cpp's own template writes the end token after user turns",
    "DeepSeek-R1-Distill-Qwen-32B-llamacpp-edited": "llama.cpp's edit makes the prompt close <think>",
    "Meta-Llama-Guard-3-1B": "a classifier prompt",
    "NVIDIA-Nemotron-Mini-4B-Instruct": "the answer header is written as the user turn's footer",
    "Hermes-2-Pro-Llama-3-8B-tool_use": "writes tool definitions in a form of its own, which cannot be read back",
    "Hermes-3-Llama-3.1-8B-tool_use": "writes tool definitions in a form of its own, which cannot be read back",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use-jsonschema": "writes tool definitions in a form of its own",
}

CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "chat": [
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
    ],
    "system": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi — what's 2+2? 🙂"},
        {"role": "assistant", "content": "4."},
        {"role": "user", "content": 'Say "hi" {in braces} \\ ok'},
    ],
}
QUESTION = [{"role": "user", "content": "What is 2+2?"}]
ANSWER = "It is 4."
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


def tools_needed(path: Path) -> list[dict[str, Any]] | None:
    """Tools for templates written for tool use, which render nothing without them."""
    try:
        codec(path).render(QUESTION, **variables(path))
    except chatcodec.TemplateRenderError:
        return TOOLS
    return None


@cache
def codec(path: Path) -> chatcodec.Codec:
    return chatcodec.load(path, special_tokens=special_tokens(path), clock=lambda: CLOCK)


@cache
def variables(path: Path) -> dict[str, str]:
    """The variables of its own a template needs to render (firefunction v2's ``functions``),
    given as a caller would: empty here."""
    return dict.fromkeys(codec(path).template_variables, "")


def format_of(path: Path) -> Format:
    if path.stem in NO_FRAMING:
        pytest.skip(f"no framing: {NO_FRAMING[path.stem]}")
    return codec(path).format


FRAMED = [path for path in ALL_TEMPLATES if path.stem not in NO_FRAMING]


def test_the_corpus_is_here() -> None:
    # A fresh clone holds every template the tests read (tests/templates/SOURCES.md lists them).
    sources = (ALL_TEMPLATES[0].parent / "SOURCES.md").read_text(encoding="utf-8")
    assert len(ALL_TEMPLATES) >= 240
    assert all(f"`{path.name}`" in sources for path in ALL_TEMPLATES)


@pytest.mark.parametrize("path", ALL_TEMPLATES, ids=lambda p: p.stem)
def test_every_template_that_renders_gets_a_format(path: Path) -> None:
    if path.stem in NO_FRAMING:
        with pytest.raises(chatcodec.UnsupportedTemplateError, match="does not write a format chatcodec can parse"):
            codec(path).format
        return
    found = codec(path).format
    assert found.grammar.starts[0] == "completion"
    assert "transcript" in found.grammar.starts


@pytest.mark.parametrize("path", FRAMED, ids=lambda p: p.stem)
def test_no_template_is_given_a_call_syntax_it_does_not_write(path: Path) -> None:
    found = format_of(path)
    name = found.calls.name if found.calls else None
    assert name == CALL_SYNTAX.get(path.stem), found.calls_note
    if name is None:
        assert found.calls_note


def _prompt_and_answer(path: Path) -> tuple[str, str]:
    """The generation prompt, and the completion the template writes for the answer."""
    c = codec(path)
    tools = tools_needed(path)
    try:
        prompt = c.render(QUESTION, tools=tools, add_generation_prompt=True, **variables(path))
        full = c.render([*QUESTION, {"role": "assistant", "content": ANSWER}], tools=tools, **variables(path))
    except chatcodec.TemplateRenderError as exc:
        pytest.skip(f"the template refuses the question: {exc}")
    found = c.format
    framing = found.source
    if framing is not None and framing.prompt_written_unasked and full.endswith(framing.generation_prompt):
        # The template writes the generation prompt whether or not it is asked for (Nemotron
        # Mini, ERNIE 4.5): after the answer too, where no model writes it.
        full = full[: len(full) - len(framing.generation_prompt)]
    if full.startswith(prompt):
        return prompt, full[len(prompt) :]
    reasoning = found.reasoning
    if reasoning is not None and prompt.rstrip().endswith(reasoning.open_tag):
        # The prompt opened a think block the answer's rendering leaves out: the model closes it.
        return prompt, reasoning.close_tag + "\n\n" + ANSWER
    if reasoning is not None and prompt.rstrip().endswith(reasoning.close_tag):
        return prompt, ANSWER
    pytest.skip("the template writes the answer's turn unlike its generation prompt")


@pytest.mark.parametrize("path", FRAMED, ids=lambda p: p.stem)
def test_content_completion_reads_back(path: Path) -> None:
    format_of(path)
    prompt, completion = _prompt_and_answer(path)
    result = codec(path).parse_detailed(completion, prompt)
    if path.stem in DEEPSEEK_TEMPLATES:
        # DeepSeek's formats keep the model's newlines after </think> in the content.
        result.message.content = (result.message.content or "").lstrip("\n")
    if path.stem in CONTENT_GAPS:
        assert result.message.content != ANSWER, f"fixed? {CONTENT_GAPS[path.stem]}"
        return
    assert result.message.content == ANSWER, (completion, result.diagnostics)
    assert not result.message.reasoning_content
    assert result.finish_reason == "stop"
    assert "".join(result.text[s.start : s.end] for s in result.spans) == completion


@pytest.mark.parametrize("path", [p for p in FRAMED if p.stem not in DEEPSEEK_TEMPLATES], ids=lambda p: p.stem)
def test_reasoning_completion_reads_back(path: Path) -> None:
    found = format_of(path)
    if found.reasoning is None:
        pytest.skip("no reasoning syntax")
    c = codec(path)
    prompt = c.render(QUESTION, tools=tools_needed(path), add_generation_prompt=True, **variables(path))
    opening, closing = found.reasoning.open_tag, found.reasoning.close_tag
    if c.prompt_state(prompt).prefill.rstrip().endswith(closing):
        # (What the prompt wrote after the answer's header: HyperCLOVA X's prompt ends with a
        # turn's end and the assistant header, its reasoning's closing, and opens no block.)
        pytest.skip("the generation prompt closes the reasoning block")
    body = f"Let me add.\n{closing}\n\n{ANSWER}"
    if prompt.endswith(opening):
        completion = "\n" + body
    elif prompt.rstrip().endswith(opening):
        completion = body  # the prompt's prefill ends with the newline after the tag
    else:
        completion = opening + "\n" + body
    for chunk in (len(completion), 3):
        parser = c.stream(prompt)
        for start in range(0, len(completion), chunk):
            parser.feed(completion[start : start + chunk])
        parser.close()
        message = parser.message
        assert (message.reasoning_content, message.content) == ("Let me add.", ANSWER), completion


@pytest.mark.parametrize("path", [p for p in FRAMED if p.stem in HERMES_TEMPLATES], ids=lambda p: p.stem)
def test_hermes_calls_are_read_in_any_framing(path: Path) -> None:
    c = codec(path)
    prompt = c.render(QUESTION, tools=tools_needed(path), add_generation_prompt=True, **variables(path))
    completion = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    result = c.parse_detailed(completion, prompt)
    (call,) = result.message.tool_calls or []
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize("generation_prompt", (False, True), ids=["no-gen", "gen"])
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("path", FRAMED, ids=lambda p: p.stem)
def test_transcripts_round_trip_and_tile(path: Path, conversation: str, generation_prompt: bool) -> None:
    format_of(path)
    try:
        report = codec(path).roundtrip(
            CONVERSATIONS[conversation],
            tools=tools_needed(path),
            add_generation_prompt=generation_prompt,
            **variables(path),
        )
    except chatcodec.TemplateRenderError as exc:
        pytest.skip(f"the template refuses this conversation: {exc}")
    transcript = report.transcript
    assert transcript.reassemble() == transcript.text
    parts = transcript.parts()
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
    assert (parts[0].start, parts[-1].end) == (0, len(transcript.text)) if parts else transcript.text == ""
    if path.stem in ROUND_TRIP_GAPS:
        pytest.xfail(ROUND_TRIP_GAPS[path.stem])
    assert report.text_survived, report.summary()


# -- every call syntax, on completions the templates themselves write -----------------------------

CALL_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Time in a zone",
            "parameters": {
                "type": "object",
                "properties": {
                    "zone": {"type": "string", "description": "The zone"},
                    "hours": {"type": "integer", "description": "Offset"},
                },
                "required": ["zone"],
            },
        },
    },
]
CALLS = [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET", "hours": 2})]
CALL_IDS = ("functions.get_weather:0", "functions.get_time:1")
MISTRAL_IDS = ("a1b2c3d4e", "f5g6h7i8j")

# Templates that render two calls in a way no model is taught to write (Llama 4 writes one JSON
# object after another with nothing between): their single call is read back.
ONE_CALL_ONLY = {"Meta-Llama-4-Scout-17B-16E-Instruct"}

# Templates whose own rendering of calls a model would not write back as a completion.
_UNQUOTED = "renders past calls with their values unquoted (city=Paris), which is no Python; the model writes them quoted, as its tools prompt asks"
CALL_COMPLETION_GAPS = {
    "vLLM-Llama-3.2-pythonic": _UNQUOTED,
    "vLLM-ToolACE": _UNQUOTED + " (and appends an 'r' to each value)",
    "vLLM-Phi-4-mini": "renders past calls' arguments as given, a dict's Python repr ({'city': 'Paris'}); the model writes functools[...], as its system prompt asks",
    "OpenBMB-MiniCPM3-4B": "writes string arguments with double quotes it does not escape",
}


def _assistant_with_calls(calls: list[tuple[str, dict[str, Any]]], ids: tuple[str, ...] | None) -> dict[str, Any]:
    tool_calls = [
        {"type": "function", "function": {"name": name, "arguments": arguments}, **({"id": ids[i]} if ids else {})}
        for i, (name, arguments) in enumerate(calls)
    ]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def _call_completion(path: Path) -> tuple[str, str, list[tuple[str, dict[str, Any]]]]:
    """The prompt, the completion the template writes for an answer of tool calls (two where it
    renders two), and those calls. The completion is the answer's turn after its header, less
    what the prompt's prefill already wrote (or, where the prompt opened a think block the
    answer leaves out, with the closing tag the model writes)."""
    c = codec(path)
    try:
        prompt = c.render(QUESTION, tools=CALL_TOOLS, add_generation_prompt=True, **variables(path))
    except chatcodec.TemplateRenderError as exc:
        pytest.skip(f"the template refuses these tools: {exc}")
    found = c.format
    state = c.prompt_state(prompt)
    header = found.source.headers.get("assistant", "") if found.source is not None else ""
    for calls in (CALLS[:1],) if path.stem in ONE_CALL_ONLY else (CALLS, CALLS[:1]):
        for ids in (None, CALL_IDS, MISTRAL_IDS):
            try:
                full = c.render([*QUESTION, _assistant_with_calls(calls, ids)], tools=CALL_TOOLS, **variables(path))
            except chatcodec.TemplateRenderError:
                continue
            answer_at = len(prompt) - len(state.prefill)
            if full.startswith(prompt[:answer_at]):
                body = full[answer_at:]
            elif header and header in full:
                body = full[full.rindex(header, 0, full.index(calls[0][0], len(QUESTION[0]["content"]))) + len(header) :]
            else:
                continue
            if any(name not in body for name, _ in calls):
                continue
            if body.startswith(state.prefill):
                return prompt, body[len(state.prefill) :], calls
            reasoning = found.reasoning
            if reasoning is not None and state.state == "reasoning":
                return prompt, reasoning.close_tag + "\n\n" + body, calls
            return prompt, body, calls
    pytest.skip("the template renders no tool calls")


# Templates that render no calls (or fail to: Kimi K2's appends to a list, which the sandbox
# forbids, as transformers' does) but spell their syntax's special tokens; the completions are
# written by hand from each model card's format.
UNRENDERED_CALLS = {
    "Moonshot-Kimi-K2-Instruct": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    "Moonshot-Kimi-K2-Thinking": "<think>Weather.</think><|tool_calls_section_begin|><|tool_call_begin|>"
    'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    "Cohere-command-a-03-2025": "<|START_ACTION|>[\n"
    '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}\n]<|END_ACTION|>',
    "Cohere-command-r7b-12-2024": "<|START_THINKING|>I will look it up.<|END_THINKING|><|START_ACTION|>[\n"
    '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}\n]<|END_ACTION|>',
    "IBM-granite-3.0-2b-instruct": '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "Microsoft-Phi-4-mini-instruct": 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    # Templates whose past calls no syntax reads (CALL_COMPLETION_GAPS): the form their tools
    # prompt asks for.
    "vLLM-Phi-4-mini": 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    "vLLM-Llama-3.2-pythonic": '[get_weather(city="Paris")]',
    "vLLM-ToolACE": "[get_weather(city='Paris')]",
}


@pytest.mark.parametrize("name", sorted(UNRENDERED_CALLS))
def test_calls_of_templates_that_render_none_read_back(name: str) -> None:
    c = codec(ALL_TEMPLATES[0].parent / f"{name}.jinja")
    assert c.format.calls is not None and c.format.calls.name == CALL_SYNTAX[name]
    prompt = c.render(QUESTION, tools=CALL_TOOLS, add_generation_prompt=True)
    completion = UNRENDERED_CALLS[name]
    whole = c.parse_detailed(completion, prompt=prompt, tools=CALL_TOOLS)
    calls = [(call.function.name, json.loads(call.function.arguments)) for call in whole.message.tool_calls or []]
    assert calls == [("get_weather", {"city": "Paris"})], whole.diagnostics
    assert whole.finish_reason == "tool_calls" and whole.reassemble() == completion
    parser = c.stream(prompt, tools=CALL_TOOLS)
    for char in completion:
        parser.feed(char)
    parser.close()
    streamed = parser.result().message
    assert streamed.model_dump(exclude={"tool_calls"}) == whole.message.model_dump(exclude={"tool_calls"})
    assert [call.function for call in streamed.tool_calls or []] == [call.function for call in whole.message.tool_calls or []]
    if name.startswith(("Moonshot", "Cohere")):  # ids the model wrote
        assert [call.id for call in streamed.tool_calls or []] == [call.id for call in whole.message.tool_calls or []]
        assert whole.message.tool_calls[0].id in ("functions.get_weather:0", "0")  # type: ignore[index]


@pytest.mark.parametrize("path", [p for p in FRAMED if CALL_SYNTAX.get(p.stem) and p.stem not in HERMES_TEMPLATES], ids=lambda p: p.stem)
def test_native_tool_calls_read_back_streamed_and_whole(path: Path) -> None:
    prompt, completion, calls = _call_completion(path)
    c = codec(path)
    if path.stem in CALL_COMPLETION_GAPS:
        pytest.xfail(CALL_COMPLETION_GAPS[path.stem])
    results = []
    for size in (len(completion), 1, 5):
        parser = c.stream(prompt, tools=CALL_TOOLS)
        for start in range(0, len(completion), size):
            parser.feed(completion[start : start + size])
        parser.close()
        result = parser.result()
        found = [(call.function.name, json.loads(call.function.arguments)) for call in result.message.tool_calls or []]
        assert found == calls, (completion, result.diagnostics)
        assert result.finish_reason == "tool_calls", result.diagnostics
        assert not [d for d in result.diagnostics if d.kind in ("malformed_tool_call", "unclosed_tool_call")]
        assert result.reassemble() == completion
        results.append((result.message.content, [c.function.arguments for c in result.message.tool_calls or []]))
    assert results[0] == results[1] == results[2]


TOOL_CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "18 C"},
    {"role": "assistant", "content": "It is 18 C in Paris."},
]

_DROPS_TOOLS = "drops tool calls and results; the answer after them runs into the assistant turn before"
_TYPESCRIPT = "writes tool definitions as TypeScript declarations, not JSON"
TOOL_ROUND_TRIP_GAPS = {
    "vLLM-Llama-3.2-pythonic": _UNQUOTED,
    "vLLM-Mistral-parallel": "writes its parallel-call instructions into the last user turn, as if it were a system message",
    "Hermes-2-Pro-Llama-3-8B-tool_use": "writes tool definitions in a form of its own",
    "Hermes-3-Llama-3.1-8B-tool_use": "writes tool definitions in a form of its own",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use-jsonschema": "writes tool definitions in a form of its own",
    "iFlytek-Spark-2.5": "writes the tools block right after its default system prompt, with no separator, and the system message after it: not read back",
    "01AI-Yi-6B-Chat": _DROPS_TOOLS,
    "01AI-Yi-Coder-1.5B-Chat": _DROPS_TOOLS,
    "Microsoft-phi-4": _DROPS_TOOLS,
    "Cohere-command-a-03-2025-hfjs": "writes tool results as a JSON document in a system turn",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": "writes the tool definitions into its default system preamble, where they are not read back",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use-llamacpp-first": "writes the tool definitions into its default system preamble, where they are not read back",
    "Google-gemma-4-31B-it-2026-07": "writes tool definitions in a notation of its own (declaration:NAME{...})",
    "Google-gemma-4-E2B-it-2026-07": "writes tool definitions in a notation of its own (declaration:NAME{...})",
    "Mistral-Small-3.1-24B-Instruct-2503": "with tools and no system message it writes its tool instructions and the default system prompt (which holds today's date) as one system turn, which is not read back",
    "NVIDIA-Nemotron-Nano-9B-v2": "writes the last answer after an unclosed <think>, so it reads back as reasoning",
    "Muse-Glimmer": "writes a recipient (to=NAME) before every message and tool definitions of its own",
    "vLLM-Muse-Glimmer": "writes a recipient (to=NAME) before every message and tool definitions of its own",
    "MeetKai-functionary-medium-v3.2": "writes the tool definitions as TypeScript in a system turn of its own, which is not read back",
    "MeetKai-functionary-medium-v2.2": "writes each tool result under the function's name, which its header holds, and the tool definitions as TypeScript",
    "vLLM-Llama-4-pythonic": "writes its tool instructions as the system prompt, and a given system prompt otherwise",
    "vLLM-granite-20b-functioncalling": "writes each tool definition without its description's closing quote (not JSON) and an answer of calls under a header of its own ('ASSISTANT:' without the space)",
    "Upstage-Solar-Open-100B": "writes each tool result under the call's id and name, which its header holds",
    "SwissAI-Apertus-8B-Instruct": "writes the answer after a tool's result with neither a header nor an end, which is not read back",
    "ServiceNow-Apriel-1.5-15b-Thinker-unsloth": "without a system message it writes the tools block differently and adds a system turn",
    "ServiceNow-Apriel-1.5-15b-Thinker-unsloth-llamacpp-first": "without a system message it writes the tools block differently and adds a system turn",
    "Baidu-ERNIE-4.5-21B-A3B-Thinking": "writes the tool list into its default system turn and each tool result as a JSON string, which are not read back",
    "SberDevices-GigaChat3.5-llamacpp-branch": "writes a turn naming the available functions after each user message and tool result, which is not read back",
}


@pytest.mark.parametrize("path", [p for p in FRAMED if CALL_SYNTAX.get(p.stem)], ids=lambda p: p.stem)
def test_tool_conversations_round_trip(path: Path) -> None:
    c = codec(path)
    report = None
    for ids, named in ((None, False), (None, True), (CALL_IDS, False), (MISTRAL_IDS, False)):
        messages = json.loads(json.dumps(TOOL_CONVERSATION))
        if ids:
            messages[1]["tool_calls"][0]["id"] = ids[0]
            messages[2]["tool_call_id"] = ids[0]
        elif named:
            messages[2]["name"] = "get_weather"  # (the function's name, which Functionary v2.2 writes)
        try:
            report = c.roundtrip(messages, tools=CALL_TOOLS, **variables(path))
        except chatcodec.TemplateRenderError:
            continue
        break
    if report is None:
        pytest.skip("the template refuses the conversation")
    transcript = report.transcript
    assert transcript.reassemble() == transcript.text
    if path.stem in TOOL_ROUND_TRIP_GAPS and report.text_survived:
        pytest.fail(f"{path.stem} round-trips now: take it off the list of gaps")
    if path.stem in TOOL_ROUND_TRIP_GAPS or (path.stem in ROUND_TRIP_GAPS and not report.text_survived):
        pytest.xfail(TOOL_ROUND_TRIP_GAPS.get(path.stem) or ROUND_TRIP_GAPS[path.stem])
    assert report.text_survived, report.summary()
