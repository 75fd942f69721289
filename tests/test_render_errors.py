"""Bad input gets one clear error naming the message and the field; template failures name the
template, its line and the message being rendered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chatcodec

CORPUS = Path(__file__).resolve().parent / "templates"


def tool_call(function: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": function}]}


USER = {"role": "user", "content": "hi"}

INVALID_MESSAGES = [
    pytest.param(
        [USER, {"role": "robot", "content": "beep"}],
        "message 1: field 'role': unknown role 'robot' "
        "(expected one of system, developer, user, assistant, tool, ipython)",
        id="unknown-role",
    ),
    pytest.param([{"content": "who am I"}], "message 0: field 'role': Field required", id="missing-role"),
    pytest.param(
        [USER, tool_call({"arguments": "{}"})],
        "message 1: field 'tool_calls.0.function.name': Field required",
        id="tool-call-without-name",
    ),
    pytest.param(
        [USER, tool_call({"name": "", "arguments": "{}"})],
        "message 1: field 'tool_calls.0.function.name': String should have at least 1 character",
        id="tool-call-with-empty-name",
    ),
    pytest.param(
        [tool_call({"name": "get_weather", "arguments": 42})],
        "message 0: field 'tool_calls.0.function.arguments': must be a JSON string or an object, not int",
        id="arguments-wrong-type",
    ),
    pytest.param(
        [{"role": "user", "content": 42}],
        "message 0: field 'content': must be a string, a list of content parts or null, not int",
        id="content-wrong-type",
    ),
    pytest.param(
        [{"role": "user", "content": ["just text"]}],
        "message 0: field 'content': content part 0 must be an object, not str",
        id="content-part-not-object",
    ),
    pytest.param(
        [{"role": "assistant", "tool_calls": {"name": "f"}}],
        "message 0: field 'tool_calls': Input should be a valid list",
        id="tool-calls-not-a-list",
    ),
    pytest.param([USER, "hello"], "message 1: expected an object, got str", id="message-not-an-object"),
    pytest.param(
        {"role": "user", "content": "hi"},
        "messages must be a list of objects, got a single object (wrap the message in a list)",
        id="single-message-not-in-a-list",
    ),
    pytest.param("hello", "messages must be a list, not str", id="messages-a-string"),
]


@pytest.mark.parametrize(("messages", "expected"), INVALID_MESSAGES)
@pytest.mark.parametrize("name", ["qwen3", "deepseek", "llama3_hermes"])
def test_invalid_messages_name_index_and_field(name: str, messages: Any, expected: str) -> None:
    with pytest.raises(chatcodec.InvalidMessageError) as caught:
        chatcodec.load(name).render(messages)
    assert str(caught.value) == expected


INVALID_TOOLS = [
    pytest.param([{"type": "function"}], "tool 0: field 'function': Field required", id="no-function"),
    pytest.param(
        [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"description": "x"}}],
        "tool 1: field 'function.name': Field required",
        id="no-name",
    ),
    pytest.param(["get_weather"], "tool 0: expected an object, got str", id="not-an-object"),
    pytest.param(
        {"type": "function"},
        "tools must be a list of objects, got a single object (wrap the tool definition in a list)",
        id="single",
    ),
]


@pytest.mark.parametrize(("tools", "expected"), INVALID_TOOLS)
def test_invalid_tools_name_index_and_field(tools: Any, expected: str) -> None:
    with pytest.raises(chatcodec.InvalidMessageError) as caught:
        chatcodec.load("qwen3").render([USER], tools=tools)
    assert str(caught.value) == expected


def test_invalid_message_errors_are_value_errors() -> None:
    # Callers catching ValueError (as they would for json or pydantic) catch these too.
    with pytest.raises(ValueError):
        chatcodec.load("qwen3").render([{"role": "robot"}])


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.jinja"
    path.write_text(source, encoding="utf-8")
    return path


RAISING_TEMPLATE = """{%- for message in messages %}
{%- if message.role == 'tool' %}
{{- raise_exception('tool messages are not supported') }}
{%- endif %}
{{- message.content }}
{%- endfor %}"""


def test_raise_exception_names_template_line_and_message(tmp_path: Path) -> None:
    codec = chatcodec.load(write(tmp_path, "no_tools", RAISING_TEMPLATE))
    messages = [USER, {"role": "assistant", "content": "ok"}, {"role": "tool", "content": "42"}]
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        codec.render(messages)
    assert str(caught.value) == (
        "template 'no_tools' raised an error at line 3 (message 2, role 'tool'): tool messages are not supported"
    )
    assert not isinstance(caught.value, chatcodec.TemplateSecurityError)


def test_python_error_inside_template_names_its_type(tmp_path: Path) -> None:
    # The bundled DeepSeek template concatenates content, so content parts (a list) fail there.
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        chatcodec.load("deepseek").render([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    message = str(caught.value)
    assert message.startswith("template 'deepseek' failed at line ")
    assert message.endswith("(message 0, role 'user'): TypeError: can only concatenate str (not \"list\") to str")


def test_undefined_variable_use_is_a_render_error(tmp_path: Path) -> None:
    codec = chatcodec.load(write(tmp_path, "undefined", "line 1\n{{ settings.mode }}"))
    with pytest.raises(
        chatcodec.TemplateRenderError,
        match=r"^template 'undefined' raised an error at line 2: 'settings' is undefined$",
    ):
        codec.render([USER])


def test_syntax_error_is_reported_at_load(tmp_path: Path) -> None:
    path = write(tmp_path, "broken", "fine\n{% for %}\n")
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        chatcodec.load(path)
    assert (
        str(caught.value)
        == "template 'broken': syntax error at line 2: Expected an expression, got 'end of statement block'"
    )


def test_corpus_template_raise_is_reported() -> None:
    path = CORPUS / "Llama-3.1-8B-Instruct.jinja"
    calls = [{"type": "function", "function": {"name": name, "arguments": {}}} for name in ("a", "b")]
    messages = [USER, {"role": "assistant", "content": "", "tool_calls": calls}]
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        chatcodec.load(path).render(messages, date_string="26 Jul 2024")
    message = str(caught.value)
    assert "(message 1, role 'assistant'): This model only supports single tool-calls at once!" in message
    # The line named is the line that raises.
    line = int(message.split(" at line ")[1].split(" ")[0])
    assert (
        'raise_exception("This model only supports single tool-calls at once!")'
        in path.read_text().splitlines()[line - 1]
    )


@pytest.mark.parametrize("family", ["qwen3", "deepseek", "llama3_hermes"])
def test_arguments_that_are_not_json_render_as_the_text_they_are(family: str) -> None:
    # A model does not always write valid JSON (a parsed malformed call keeps its text): the
    # template writes that text, as transformers would.
    codec = chatcodec.load(family)
    text = codec.render([USER, tool_call({"name": "get_weather", "arguments": "{city: Paris}"})])
    assert "{city: Paris}" in text


def test_a_template_reading_text_arguments_by_name_says_which_call(tmp_path: Path) -> None:
    # MiniMax-M3 writes each argument by name (``arguments.items()``): a malformed call's text
    # cannot be written so, and the error says which call's arguments are text.
    codec = chatcodec.load(CORPUS / "MiniMax-M3.jinja")
    fine = tool_call({"name": "get_weather", "arguments": '{"city": "Paris"}'})
    broken = tool_call({"name": "get_weather", "arguments": '{"city": "Paris"'})
    broken["tool_calls"].insert(0, fine["tool_calls"][0])
    assert "Paris" in codec.render([USER, fine])
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        codec.render([USER, broken])
    assert (
        "(message 1, role 'assistant'; its tool call 1's arguments are text, not a JSON object, "
        "and the template reads them as one): 'str object' has no attribute 'items'"
    ) in str(caught.value)
    # A template that writes the arguments as text fails for reasons of its own: no call named.
    path = tmp_path / "text.jinja"
    path.write_text("{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments + '' }}{% endfor %}{% if m.tool_calls %}{{ m.content.items() }}{% endif %}{% endfor %}")
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        chatcodec.load(path).render([USER, broken])
    assert "(message 1, role 'assistant'): 'str object' has no attribute 'items'" in str(caught.value)


def test_a_template_refusing_a_call_in_a_macro_names_the_calls_message() -> None:
    # Found by fuzzing: Muse Glimmer refuses text arguments inside a macro given the call
    # (``render_atem(tc)``), where no message is in sight: the error named no message. The
    # frames that called the macro hold it.
    codec = chatcodec.load(CORPUS / "Muse-Glimmer.jinja")
    broken = tool_call({"name": "get_weather", "arguments": '{"city": "Paris"'})
    with pytest.raises(chatcodec.TemplateRenderError) as caught:
        codec.render([USER, broken])
    assert "(message 1, role 'assistant'; its tool call 0's arguments are text, not a JSON object" in str(caught.value)


# Spark 2.5's template raises unless a call's arguments are a mapping ("normalize JSON strings
# before apply_chat_template"). A template that tests the arguments' form and raises for one
# form is given the other: arguments as an OpenAI request carries them (JSON text) render, as
# do the ones a parse gives back.
@pytest.mark.parametrize(
    ("test", "writes"),
    [
        ("is not mapping", "{{ args.items() | list }}"),
        ("is string", "{{ args.items() | list }}"),
        ("is not string", "{{ args }}"),
        ("is mapping", "{{ args }}"),
    ],
)
def test_arguments_are_given_in_the_form_a_template_does_not_refuse(tmp_path: Path, test: str, writes: str) -> None:
    source = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        f"{{% if c.function.arguments {test} %}}{{{{ raise_exception('wrong form') }}}}{{% endif %}}"
        f"{{% set args = c.function.arguments %}}[{writes}]"
        "{% endfor %}{% endfor %}"
    )
    rendered = _rendered_from_text_and_from_a_dict(_codec_of(tmp_path, source), '{"a": 1}', {"a": 1})
    assert rendered == ("[[('a', 1)]]" if "items" in writes else '[{"a": 1}]')


# StepFun 3.7's template (as llama.cpp ships it) decodes text arguments with ``fromjson``, a
# filter llama.cpp's renderer has and transformers' has not: text arguments would fail there,
# so the template is given a dict and takes its other way.
def test_arguments_are_given_as_a_dict_where_text_would_meet_an_unknown_filter(tmp_path: Path) -> None:
    source = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{% set args = c.function.arguments | fromjson if c.function.arguments is string else c.function.arguments %}"
        "[{{ args.items() | list }}]{% endfor %}{% endfor %}"
    )
    assert _rendered_from_text_and_from_a_dict(_codec_of(tmp_path, source), '{"a": 1}', {"a": 1}) == "[[('a', 1)]]"


# vLLM's Gemma 3 pythonic template (examples/tool_chat_template_gemma3_pythonic.jinja) writes a
# dict's items as keyword arguments and any other iterable as positional ones, and never asks
# whether the arguments are a string: a string would be written one character an argument
# (`f("{", "\"", "a", ...)`). Text arguments are given to it as a dict.
@pytest.mark.parametrize("other", ["iterable", "sequence"])
def test_arguments_are_given_as_a_dict_where_a_string_would_be_read_as_a_list(tmp_path: Path, other: str) -> None:
    source = (
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.name }}("
        "{%- if c.function.arguments is iterable and c.function.arguments is mapping -%}"
        "{%- for key, value in c.function.arguments.items() -%}"
        "{{ key }}={{ value | tojson }}{% if not loop.last %}, {% endif %}"
        "{%- endfor -%}"
        f"{{%- elif c.function.arguments is {other} -%}}"
        "{{ c.function.arguments | map('tojson') | join(', ') }}"
        "{%- endif -%})"
        "{% endfor %}{% endfor %}"
    )
    rendered = _rendered_from_text_and_from_a_dict(_codec_of(tmp_path, source), '{"a": 1, "b": "x"}', {"a": 1, "b": "x"})
    assert rendered == 'f(a=1, b="x")'


def _codec_of(tmp_path: Path, source: str) -> chatcodec.Codec:
    path = tmp_path / "template.jinja"
    path.write_text(source)
    return chatcodec.load(path)


def _rendered_from_text_and_from_a_dict(codec: chatcodec.Codec, text: str, value: dict[str, object]) -> str:
    """A call to ``f`` rendered with its arguments as text; the same as with them as a dict."""
    rendered = codec.render([tool_call({"name": "f", "arguments": text})])
    assert rendered == codec.render([tool_call({"name": "f", "arguments": value})])
    return rendered


def test_a_template_that_needs_the_models_end_token_says_how_to_give_it() -> None:
    codec = chatcodec.load(CORPUS / "Mistral-Small-3.2-24B-Instruct-2506.jinja")
    with pytest.raises(chatcodec.TemplateRenderError) as raised:
        codec.render([USER, {"role": "assistant", "content": "yo"}])
    assert "(message 1, role 'assistant'): 'eos_token' is undefined" in str(raised.value)
    assert "special_tokens={'eos_token': ...}" in str(raised.value)
    # Reading its format says so too, not only that an answer does not render.
    with pytest.raises(chatcodec.UnsupportedTemplateError, match=r"does not render \(.*'eos_token' is undefined"):
        _ = codec.format
    loaded = chatcodec.load(CORPUS / "Mistral-Small-3.2-24B-Instruct-2506.jinja", special_tokens={"bos_token": "<s>", "eos_token": "</s>"})
    assert loaded.render([USER, {"role": "assistant", "content": "yo"}]).endswith("yo</s>")
