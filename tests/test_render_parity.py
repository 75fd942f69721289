"""Byte parity with transformers' own chat-template rendering.

The reference is transformers' ``render_jinja_template`` (what ``apply_chat_template(tokenize=False)``
calls), used without a tokenizer: the special tokens a tokenizer would contribute are passed by
hand. Every render must be identical, and where transformers raises, chatcodec must raise
``TemplateRenderError`` too.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from template_corpus import ALL_TEMPLATES, CHECKED_FAMILIES, CHECKED_TEMPLATES, special_tokens

import chatcodec

REPO = Path(__file__).resolve().parents[1]
BUNDLED = ("qwen3", "deepseek", "llama3_hermes")

# The tokens each bundled template's tokenizer hands to the template (its special_tokens_map).
BUNDLED_TOKENS: dict[str, dict[str, str]] = {
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "llama3_hermes": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city. Accepts “smart quotes” and ümlauts.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": 'Search the web. Query syntax: "exact phrase", a\\b, {braces}.',
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "filters": {"type": "object", "properties": {"site": {"type": "string"}, "n": {"type": "integer"}}},
            },
            "required": ["query"],
        },
    },
}
TOOLS = [WEATHER_TOOL, SEARCH_TOOL]


def call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """A tool call in the Hugging Face shape: arguments as a dict."""
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        out = {"id": call_id, **out}
    return out


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, **extra}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(text: str, call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": text, **extra}
    if call_id is not None:
        message["tool_call_id"] = call_id
    return message


@dataclass(frozen=True)
class Conversation:
    id: str
    messages: list[dict[str, Any]]
    # Offered both with and without these tools unless ``tools_only`` is set.
    tools: list[dict[str, Any]] = field(default_factory=lambda: TOOLS)


PARIS = {"city": "Paris"}
ZURICH = {"city": "Zürich", "unit": "c"}
TRICKY_ARGS = {
    "query": 'say "hi" \\ {{ not jinja }} {% raw %} \' <tool_call> </think>',
    "filters": {"site": "example.org/a\\b?q={x}", "n": 3},
}
TRICKY_TEXT = (
    "He said \"hi\" and left.\nPath: C:\\temp\\new {braces} {{ x }} {% if %} 'single'\n\n\ttab </tool_response>"
)

CONVERSATIONS: list[Conversation] = [
    Conversation("user-only", [user("Hi!")]),
    Conversation("system-user", [system("You are terse."), user("Hi!")]),
    Conversation(
        "multi-turn",
        [system("You are terse."), user("Hi!"), assistant("Hello."), user("What is 2+2?"), assistant("4.")],
    ),
    Conversation("multi-turn-no-system", [user("Hi!"), assistant("Hello."), user("And now?")]),
    Conversation(
        "one-tool-call",
        [
            user("Weather in Paris?"),
            assistant("", call("get_weather", PARIS, "call_1")),
            tool('{"temp_c": 18}', "call_1"),
            assistant("18 °C."),
        ],
    ),
    Conversation(
        "tool-call-with-text",
        [
            system("Use tools."),
            user("Weather in Paris?"),
            assistant("Let me check.", call("get_weather", PARIS, "call_1")),
            tool('{"temp_c": 18}', "call_1"),
        ],
    ),
    Conversation(
        "parallel-tool-calls",
        [
            system("Use tools."),
            user("Paris and Zürich?"),
            assistant("", call("get_weather", PARIS, "call_1"), call("get_weather", ZURICH, "call_2")),
            tool('{"temp_c": 18}', "call_1"),
            tool('{"temp_c": 11, "sky": "rain ☔"}', "call_2"),
            assistant("Paris 18 °C, Zürich 11 °C."),
        ],
    ),
    Conversation(
        "ends-with-tool-results",
        [
            user("Paris and Zürich?"),
            assistant("", call("get_weather", PARIS), call("get_weather", ZURICH)),
            tool('{"temp_c": 18}', name="get_weather"),
            tool('{"temp_c": 11}', name="get_weather"),
        ],
    ),
    Conversation(
        "tool-loop-across-turns",
        [
            system("Use tools."),
            user("Weather in Paris?"),
            assistant("", call("get_weather", PARIS, "a")),
            tool('{"temp_c": 18}', "a"),
            assistant("18 °C."),
            user("Search for umbrellas there, then Zürich weather."),
            assistant("", call("search", {"query": "umbrella Paris"}, "b")),
            tool("[]", "b"),
            assistant("Nothing found; checking Zürich.", call("get_weather", ZURICH, "c")),
            tool('{"temp_c": 11}', "c"),
            assistant("Zürich: 11 °C."),
        ],
    ),
    Conversation(
        "reasoning-in-history",
        [
            user("2+2?"),
            assistant("4.", reasoning_content="Add two and two."),
            user("And 3+3?"),
        ],
    ),
    Conversation(
        "reasoning-in-last-turn",
        [
            user("Weather in Paris?"),
            assistant("", call("get_weather", PARIS, "call_1"), reasoning_content="I should call the tool."),
            tool('{"temp_c": 18}', "call_1"),
            assistant("It is 18 °C.", reasoning_content="The tool said 18.\nSo answer."),
        ],
    ),
    Conversation(
        "think-tags-in-history",
        [
            user("2+2?"),
            assistant("<think>\nAdd them.\n</think>\n\n4."),
            user("And 3+3?"),
            assistant("<think>Six.</think>6."),
        ],
    ),
    Conversation(
        "reasoning-alias-fields",
        [
            user("2+2?"),
            assistant("4.", thinking="Via the thinking field."),
            user("3+3?"),
            assistant("6.", reasoning="Via the reasoning field."),
        ],
    ),
    Conversation(
        "unicode-and-emoji",
        [
            system("Réponds en français 🇫🇷."),
            user("Grüße 👋🏽 — 中文, עברית, ελληνικά, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, e\u0301, zero\u200bwidth"),
            assistant("Bonjour 😀 ! ✓", call("search", {"query": "東京 天気 🌧"}, "u")),
            tool('{"résultat": "pluie 🌧"}', "u"),
        ],
    ),
    Conversation(
        "quotes-backslashes-braces",
        [
            system(TRICKY_TEXT),
            user(TRICKY_TEXT),
            assistant(TRICKY_TEXT, call("search", TRICKY_ARGS, "q")),
            tool(TRICKY_TEXT, "q"),
            assistant("{{ '}}' }} \\n \" ' %} {#"),
        ],
    ),
    Conversation(
        "empty-content",
        [system(""), user(""), assistant(""), user("still there?")],
    ),
    Conversation(
        "second-system-message",
        [system("First rules."), user("Hi"), system("Second rules."), user("Again")],
    ),
    Conversation(
        "tool-call-without-id",
        [user("Search it"), assistant("", call("search", {"query": "x", "filters": {"n": 1}}))],
    ),
    Conversation(
        "content-parts",
        [user([{"type": "text", "text": "Describe this."}]), assistant("A cat.")],
    ),
    Conversation(
        "empty-tool-calls-list",
        [user("Hi"), {"role": "assistant", "content": "Hello.", "tool_calls": []}, user("Bye")],
    ),
    Conversation(
        "deepseek-prefix-extra-key",
        [user("Start a poem"), assistant("Roses are", prefix=True)],
    ),
]

GENERATION_PROMPT = (False, True)
THINKING_VARIANTS: list[dict[str, Any]] = [
    {},
    {"enable_thinking": True},
    {"enable_thinking": False},
    {"thinking": True},
    {"thinking": False},
]


def _variant_id(kwargs: dict[str, Any]) -> str:
    return ",".join(f"{key}={value}" for key, value in kwargs.items()) or "default"


@pytest.fixture(scope="module")
def reference() -> Any:
    """transformers' renderer, called the way ``apply_chat_template`` calls it."""
    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import _normalize_chat_messages, render_jinja_template

    def render(
        source: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        add_generation_prompt: bool,
        variables: dict[str, Any],
    ) -> str:
        rendered, _ = render_jinja_template(
            conversations=[_normalize_chat_messages(copy.deepcopy(messages))],
            tools=copy.deepcopy(tools),
            chat_template=source,
            add_generation_prompt=add_generation_prompt,
            **variables,
        )
        return rendered[0]

    return render


def reference_or_error(reference: Any, *args: Any) -> str | Exception:
    try:
        return reference(*args)
    except Exception as exc:  # noqa: BLE001 - any failure of the reference is an expected outcome here
        return exc


def assert_parity(expected: str | Exception, render: Any) -> None:
    """``render()`` equals the reference text, or raises TemplateRenderError where it raised."""
    if isinstance(expected, Exception):
        with pytest.raises(chatcodec.TemplateRenderError):
            render()
    else:
        assert render() == expected


def bundled_source(name: str) -> str:
    return (REPO / "templates" / f"{name}.jinja").read_text(encoding="utf-8")


@pytest.mark.parametrize("variant", THINKING_VARIANTS, ids=_variant_id)
@pytest.mark.parametrize("add_generation_prompt", GENERATION_PROMPT, ids=["no-gen", "gen"])
@pytest.mark.parametrize("with_tools", (False, True), ids=["no-tools", "tools"])
@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: c.id)
@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_template_parity(
    reference: Any,
    name: str,
    conversation: Conversation,
    with_tools: bool,
    add_generation_prompt: bool,
    variant: dict[str, Any],
) -> None:
    tools = conversation.tools if with_tools else None
    codec = chatcodec.load(name)
    expected = reference_or_error(
        reference,
        bundled_source(name),
        conversation.messages,
        tools,
        add_generation_prompt,
        {**BUNDLED_TOKENS[name], **variant},
    )
    assert_parity(
        expected,
        lambda: codec.render(
            copy.deepcopy(conversation.messages), tools=tools, add_generation_prompt=add_generation_prompt, **variant
        ),
    )


ENDS_WITH_ASSISTANT = [c for c in CONVERSATIONS if c.messages[-1]["role"] == "assistant"]


@pytest.mark.parametrize("field", [True, "content", "reasoning_content"], ids=["true", "content", "reasoning"])
@pytest.mark.parametrize("conversation", ENDS_WITH_ASSISTANT, ids=lambda c: c.id)
@pytest.mark.parametrize("name", BUNDLED)
def test_continue_final_message_parity(name: str, conversation: Conversation, field: bool | str) -> None:
    # transformers' prefill option: the text ends inside the last message for the model to go on.
    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import _normalize_chat_messages, render_jinja_template

    try:
        expected: str | Exception = render_jinja_template(
            conversations=[_normalize_chat_messages(copy.deepcopy(conversation.messages))],
            tools=TOOLS,
            chat_template=bundled_source(name),
            continue_final_message=field,
            **BUNDLED_TOKENS[name],
        )[0][0]
    except Exception as exc:  # noqa: BLE001
        expected = exc
    codec = chatcodec.load(name)
    render = lambda: codec.render(copy.deepcopy(conversation.messages), tools=TOOLS, continue_final_message=field)
    if isinstance(expected, Exception):
        with pytest.raises(chatcodec.ChatCodecError):
            render()
    else:
        assert render() == expected


def test_continue_final_message_ends_inside_the_message() -> None:
    messages = [user("Write a haiku"), assistant("Autumn moonlight ")]
    text = chatcodec.load("qwen3").render(messages, continue_final_message=True)
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\nAutumn moonlight ")
    with pytest.raises(chatcodec.InvalidMessageError, match="cannot be used together"):
        chatcodec.load("qwen3").render(messages, continue_final_message=True, add_generation_prompt=True)


# -- the public-template corpus beside the checkout ---------------------------------------------

CORPUS_FILES = CHECKED_TEMPLATES

# Templates that concatenate ``arguments`` with ``+``: they need the JSON text (see SOURCES.md).
STRING_ARGUMENT_TEMPLATES = {
    "DeepSeek-R1-0528-Qwen3-8B",
    "DeepSeek-R1",
    "DeepSeek-V3-0324",
    "DeepSeek-V3-api-tokenizer",
    "DeepSeek-V3.1",
    "llama-3-firefunction-v2",
}
FAMILY_TOKENS: dict[str, dict[str, str]] = {
    "chatml_qwen": {"eos_token": "<|im_end|>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
}
# Hermes tool_use is ChatML on a Llama 3 tokenizer.
TEMPLATE_TOKENS: dict[str, dict[str, str]] = {
    "Hermes-2-Pro-Llama-3-8B-tool_use": {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"},
    "Hermes-3-Llama-3.1-8B-tool_use": {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"},
}
# Globals some templates read without a default. ``date_string`` pins Llama 3's date line,
# which would otherwise come from the clock.
CORPUS_VARIABLES: dict[str, Any] = {
    "date_string": "26 Jul 2024",
    "functions": json.dumps([tool["function"] for tool in TOOLS]),
    "datetime": "2024-07-26",
}
CORPUS_CONVERSATIONS = [
    conversation
    for conversation in CONVERSATIONS
    if conversation.id
    in {
        "system-user",
        "multi-turn",
        "one-tool-call",
        "parallel-tool-calls",
        "tool-loop-across-turns",
        "reasoning-in-last-turn",
        "think-tags-in-history",
        "quotes-backslashes-braces",
        "empty-tool-calls-list",
    }
]


def string_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same conversation with tool-call arguments as JSON text (the OpenAI wire form)."""
    out = copy.deepcopy(messages)
    for message in out:
        for tool_call in message.get("tool_calls", []):
            function = tool_call["function"]
            function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
    return out


def corpus_id(path: Path) -> str:
    return f"{CHECKED_FAMILIES[path.stem]}/{path.stem}"


@pytest.fixture(scope="module")
def corpus_files() -> list[Path]:
    return CORPUS_FILES


def test_corpus_is_complete(corpus_files: list[Path]) -> None:
    # SOURCES.md lists 23 templates; a missing one would silently shrink the parity check.
    assert len(corpus_files) == 23


@pytest.mark.parametrize("add_generation_prompt", GENERATION_PROMPT, ids=["no-gen", "gen"])
@pytest.mark.parametrize("with_tools", (False, True), ids=["no-tools", "tools"])
@pytest.mark.parametrize("conversation", CORPUS_CONVERSATIONS, ids=lambda c: c.id)
@pytest.mark.parametrize(
    "index", range(23), ids=lambda i: corpus_id(CORPUS_FILES[i]) if i < len(CORPUS_FILES) else str(i)
)
def test_corpus_template_parity(
    reference: Any,
    corpus_files: list[Path],
    index: int,
    conversation: Conversation,
    with_tools: bool,
    add_generation_prompt: bool,
) -> None:
    path = corpus_files[index]
    tokens = TEMPLATE_TOKENS.get(path.stem, FAMILY_TOKENS[CHECKED_FAMILIES[path.stem]])
    tools = conversation.tools if with_tools else None
    # transformers gets the argument form the template needs; chatcodec gets the Hugging Face
    # shape and must pick that form by itself.
    reference_messages = (
        string_arguments(conversation.messages) if path.stem in STRING_ARGUMENT_TEMPLATES else conversation.messages
    )
    expected = reference_or_error(
        reference,
        path.read_text(encoding="utf-8"),
        reference_messages,
        tools,
        add_generation_prompt,
        {**tokens, **CORPUS_VARIABLES},
    )
    codec = chatcodec.load(path, special_tokens=tokens)
    assert_parity(
        expected,
        lambda: codec.render(
            copy.deepcopy(conversation.messages),
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            **CORPUS_VARIABLES,
        ),
    )


# -- small templates that exercise one feature of transformers' environment each ------------------

FEATURE_TEMPLATES: dict[str, str] = {
    # Whole messages dumped: key order, dropped None values and reasoning aliases all show.
    "messages-tojson": "{% for m in messages %}{{ m | tojson }}\n{% endfor %}",
    "tojson-options": "{{ tools | tojson(indent=2, sort_keys=true) }}|{{ messages | tojson(separators=(',', ':')) }}",
    "tojson-no-html-escaping": "{{ '<a href=\"x\">&\\'</a>' | tojson }}",
    "reasoning-aliases": (
        "{% for m in messages %}{{ m.role }}:{{ m.reasoning_content }}|{{ m.thinking }}|{{ m.reasoning }}\n{% endfor %}"
    ),
    "loopcontrols": (
        "{% for m in messages %}{% if loop.index0 == 0 %}{% continue %}{% endif %}"
        "{% if m.role == 'tool' %}{% break %}{% endif %}[{{ m.role }}]{% endfor %}"
    ),
    "namespace-and-dict": (
        "{% set ns = namespace(n=0, seen=dict(a=1)) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n }} {{ ns.seen | tojson }} {{ dict.fromkeys(['x', 'y'], 0) | tojson }}"
    ),
    "generation-tag": (
        "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
        "{% else %}{{ m.content }}{% endif %}{% endfor %}"
    ),
    "undefined-and-none": (
        "{{ tools is none }} {{ documents is none }} [{{ not_given }}] {{ not_given is defined }} "
        "{{ messages[0].missing is defined }} {{ add_generation_prompt }}"
    ),
    "whitespace-control": (
        "  {% for m in messages %}\n  {{ m.role }}\n  {% endfor %}\n  {%- if true %}\nend  \n{% endif %}"
    ),
    # A message and its text asked for items and attributes, as templates written for a list
    # of parts do (Llama 3.2 Vision: each character asked for its ``type``).
    "string-items": (
        "{% for m in messages %}{% if m.content is string %}"
        "{{ m.content | selectattr('type', 'equalto', 'image') | list | length }}"
        "{{ m.content['type'] is defined }}{{ m.content['startswith'] is defined }}"
        "{{ m.content['strip']() if m.content['strip'] is defined }}|"
        "{% endif %}{{ m['role'] }}{{ m['missing'] is defined }}{{ m['items'] is defined }}{{ m[0] is defined }}"
        "{% endfor %}"
    ),
    "tool-call-fields": (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c | tojson }}\n"
        "{{ c.function.arguments is mapping }}\n{% endfor %}{% endfor %}"
    ),
}


def test_documents_reach_the_template(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import render_jinja_template

    source = "{% for d in documents %}[{{ d.title }}: {{ d.text }}]{% endfor %}{{ messages[0].content }}"
    documents = [{"title": "Zürich", "text": "Rain ☔"}, {"title": "Paris", "text": "Sun"}]
    messages = [user("Weather?")]
    rendered, _ = render_jinja_template(conversations=[messages], documents=documents, chat_template=source)
    template = tmp_path / "rag.jinja"
    template.write_text(source, encoding="utf-8")
    assert chatcodec.load(template).render(messages, documents=documents) == rendered[0]
    assert rendered[0] == "[Zürich: Rain ☔][Paris: Sun]Weather?"


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: c.id)
@pytest.mark.parametrize("feature", sorted(FEATURE_TEMPLATES))
def test_environment_feature_parity(reference: Any, tmp_path: Path, feature: str, conversation: Conversation) -> None:
    source = FEATURE_TEMPLATES[feature]
    template = tmp_path / f"{feature}.jinja"
    template.write_text(source, encoding="utf-8")
    expected = reference_or_error(reference, source, conversation.messages, TOOLS, True, {})
    codec = chatcodec.load(template)
    assert_parity(
        expected, lambda: codec.render(copy.deepcopy(conversation.messages), tools=TOOLS, add_generation_prompt=True)
    )


# -- OpenAI-shaped input: arguments as JSON text, content None beside tool calls -----------------


def openai_shape(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an OpenAI client sends: JSON-text arguments and ``content: None`` on tool-call turns."""
    out = string_arguments(messages)
    for message in out:
        if message.get("tool_calls") and not message.get("content"):
            message["content"] = None
    return out


def without_none_content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**message, "content": "" if message.get("content") is None else message["content"]} for message in messages
    ]


def openai_reference(
    reference: Any,
    source: str,
    messages: list[dict[str, Any]],
    needs_string_arguments: bool,
    tools: list[dict[str, Any]] | None,
    add_generation_prompt: bool,
    variables: dict[str, Any],
) -> str | Exception:
    """transformers' render of an OpenAI-shaped conversation, given arguments in the form the
    template needs; where the missing content makes the template raise, with content "" instead
    (chatcodec's documented retry)."""
    shaped = openai_shape(messages)
    if not needs_string_arguments:
        for message in shaped:
            for tool_call in message.get("tool_calls", []):
                tool_call["function"]["arguments"] = json.loads(tool_call["function"]["arguments"])
    expected = reference_or_error(reference, source, shaped, tools, add_generation_prompt, variables)
    if isinstance(expected, Exception):
        expected = reference_or_error(
            reference, source, without_none_content(shaped), tools, add_generation_prompt, variables
        )
    return expected


TOOL_CONVERSATIONS = [
    conversation for conversation in CONVERSATIONS if any("tool_calls" in m for m in conversation.messages)
]


@pytest.mark.parametrize("add_generation_prompt", GENERATION_PROMPT, ids=["no-gen", "gen"])
@pytest.mark.parametrize("conversation", TOOL_CONVERSATIONS, ids=lambda c: c.id)
@pytest.mark.parametrize("name", BUNDLED)
def test_openai_shape_renders_like_hf_shape(
    reference: Any, name: str, conversation: Conversation, add_generation_prompt: bool
) -> None:
    codec = chatcodec.load(name)
    hf_text = codec.render(
        copy.deepcopy(conversation.messages), tools=TOOLS, add_generation_prompt=add_generation_prompt
    )
    openai_text = codec.render(
        openai_shape(conversation.messages), tools=TOOLS, add_generation_prompt=add_generation_prompt
    )
    assert openai_text == hf_text
    # And both are what transformers renders for the Hugging Face shape.
    assert hf_text == reference(
        bundled_source(name), conversation.messages, TOOLS, add_generation_prompt, BUNDLED_TOKENS[name]
    )


@pytest.mark.parametrize("name", BUNDLED)
def test_openai_arguments_are_not_double_encoded(name: str) -> None:
    conversation = next(c for c in CONVERSATIONS if c.id == "parallel-tool-calls")
    text = chatcodec.load(name).render(openai_shape(conversation.messages), tools=TOOLS)
    assert '{"city": "Paris"}' in text
    assert '{"city": "Zürich", "unit": "c"}' in text
    assert '\\"city\\"' not in text


def _weather_call(arguments: Any) -> list[dict[str, Any]]:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    return [user("Weather?"), {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_1", "content": "18"}]


# Every template of the repository: an OpenAI-shaped call (its arguments JSON text, spaced as
# json.dumps spaces them) renders as the same call given as a dict. Gemma 4's template takes
# both forms, but writes a string as it stands inside its own ``{key:value}`` syntax: JSON
# text was written there (``call:get_weather{{"city": "Paris"}}``), which reads back broken.
@pytest.mark.parametrize("path", ALL_TEMPLATES, ids=lambda path: path.stem)
def test_every_template_renders_openai_arguments_as_it_renders_a_dict(path: Path) -> None:
    codec = chatcodec.load(path, special_tokens=special_tokens(path))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    try:
        as_dict = codec.render(_weather_call({"city": "Paris"}), tools=tools, on_special_tokens="ignore")
    except chatcodec.ChatCodecError:
        pytest.skip("the template renders no such conversation")
    assert codec.render(_weather_call('{"city": "Paris"}'), tools=tools, on_special_tokens="ignore") == as_dict


def test_string_arguments_are_kept_verbatim_where_the_template_allows_it() -> None:
    # qwen3 prints string arguments as they are (the model's own text survives a round trip) and
    # serializes dicts itself; deepseek always serializes, so text is parsed first.
    messages = [user("hi"), assistant("", call("get_weather", PARIS))]
    messages[1]["tool_calls"][0]["function"]["arguments"] = '{"city":"Paris"}'
    assert '"arguments": {"city":"Paris"}}' in chatcodec.load("qwen3").render(messages)
    assert '<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>' in chatcodec.load("deepseek").render(messages)


@pytest.mark.parametrize("add_generation_prompt", GENERATION_PROMPT, ids=["no-gen", "gen"])
@pytest.mark.parametrize(
    "conversation",
    [c for c in TOOL_CONVERSATIONS if c.id in {"one-tool-call", "tool-loop-across-turns", "reasoning-in-last-turn"}],
    ids=lambda c: c.id,
)
@pytest.mark.parametrize(
    "index", range(23), ids=lambda i: corpus_id(CORPUS_FILES[i]) if i < len(CORPUS_FILES) else str(i)
)
def test_corpus_openai_shape(
    reference: Any, corpus_files: list[Path], index: int, conversation: Conversation, add_generation_prompt: bool
) -> None:
    path = corpus_files[index]
    tokens = TEMPLATE_TOKENS.get(path.stem, FAMILY_TOKENS[CHECKED_FAMILIES[path.stem]])
    expected = openai_reference(
        reference,
        path.read_text(encoding="utf-8"),
        conversation.messages,
        path.stem in STRING_ARGUMENT_TEMPLATES,
        TOOLS,
        add_generation_prompt,
        {**tokens, **CORPUS_VARIABLES},
    )
    codec = chatcodec.load(path, special_tokens=tokens)
    assert_parity(
        expected,
        lambda: codec.render(
            openai_shape(conversation.messages),
            tools=TOOLS,
            add_generation_prompt=add_generation_prompt,
            **CORPUS_VARIABLES,
        ),
    )


# -- reasoning given to a template that reads it only as a content part ----------------------------

MINISTRAL_REASONING = REPO / "tests" / "templates" / "Mistral-Ministral-3-14B-Reasoning-2512.jinja"


def test_reasoning_reaches_a_template_that_reads_it_as_a_content_part(reference: Any) -> None:
    # Ministral 3 Reasoning writes [THINK]…[/THINK] only for a {"type": "thinking"} part of
    # the content; given reasoning_content, transformers' render leaves the reasoning out.
    # chatcodec gives it the part, as it gives each template the argument form it reads.
    tokens = special_tokens(MINISTRAL_REASONING)
    source = MINISTRAL_REASONING.read_text(encoding="utf-8")
    with_field = [user("2+2?"), assistant("4.", reasoning_content="Add them."), user("And 3+3?")]
    as_parts = copy.deepcopy(with_field)
    as_parts[1] = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "Add them."}, {"type": "text", "text": "4."}],
    }
    expected = reference(source, as_parts, None, False, tokens)
    assert "[THINK]Add them.[/THINK]4.</s>" in expected
    assert "Add them." not in reference(source, with_field, None, False, tokens)
    codec = chatcodec.load(MINISTRAL_REASONING, special_tokens=tokens)
    assert codec.render(with_field) == expected
    assert codec.render(as_parts) == expected  # (given as a part already: as it stands)


def test_a_parsed_reasoning_only_message_renders_through_such_a_template() -> None:
    # Output cut short inside the reasoning parses to reasoning and no answer; the template
    # raises for an assistant message with no content, and the part is content.
    codec = chatcodec.load(MINISTRAL_REASONING, special_tokens=special_tokens(MINISTRAL_REASONING))
    prompt = codec.render([user("hi")], add_generation_prompt=True)
    message = codec.parse("[THINK]Let me see", prompt=prompt)
    assert (message.content or "", message.reasoning_content) == ("", "Let me see")
    assert codec.render([user("hi"), message.to_openai()]).endswith("[INST]hi[/INST][THINK]Let me see[/THINK]</s>")


def test_a_conversation_with_reasoning_round_trips_through_such_a_template() -> None:
    codec = chatcodec.load(MINISTRAL_REASONING, special_tokens=special_tokens(MINISTRAL_REASONING))
    conversation = [
        user("2+2?"),
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Add them."}, {"type": "text", "text": "4."}]},
        user("And 3+3?"),
        assistant("6.", reasoning_content="Add again."),
    ]
    report = codec.roundtrip(conversation)
    assert report.losses == []
    assert report.rerendered == report.text
    assert codec.describe()["capabilities"]["reasoning_kept"] == "every turn"


@pytest.mark.parametrize(
    "name", ["Mistral-Devstral-Small-2507-unsloth", "Cohere-North-Mini-Code-Cohere2MoE", "Qwen-Qwen3.5-4B"]
)
def test_templates_that_read_a_reasoning_field_get_it_as_a_field(name: str) -> None:
    from chatcodec.render.jinja import reasoning_in_parts

    path = REPO / "tests" / "templates" / f"{name}.jinja"
    assert not reasoning_in_parts(path.read_text(encoding="utf-8"))
    assert reasoning_in_parts(MINISTRAL_REASONING.read_text(encoding="utf-8"))
