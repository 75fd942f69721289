"""Templates of our own that write tool calls in the shapes a new model's template brings,
with tags no known call syntax spells: chatcodec learns each syntax from the template
(``tests/test_learned_syntax.py``), and ``fuzz/run.py`` fuzzes what it learned."""

from __future__ import annotations

import chatcodec

# A ChatML template of our own whose calls are written by ``CALLS`` (a Jinja snippet that sees
# ``message.tool_calls``): the shapes a new model's template brings.
TEMPLATE = """{%- for message in messages -%}
<|im_start|>{{ message.role }}
{% if message.content %}{{ message.content }}{% endif %}
{%- if message.tool_calls %}CALLS{% endif %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}"""
CALL = '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}'
SHAPES = {
    # LongCat-Flash-Chat's shape: Hermes' object in tags of its own
    "object between tags": (
        "{% for c in message.tool_calls %}{% if not loop.first %}{{ '\\n' }}{% endif %}<longcat_tool_call>\n"
        + CALL
        + "\n</longcat_tool_call>{% endfor %}",
        "json_in_tags",
        '<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</longcat_tool_call>'
        '\n<longcat_tool_call>\n{"name": "get_time", "arguments": {}}\n</longcat_tool_call>',
    ),
    "list between tags": (
        "<calls>[{% for c in message.tool_calls %}" + CALL + "{% if not loop.last %}, {% endif %}{% endfor %}]</calls>",
        "json_list_in_tags",
        '<calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]</calls>',
    ),
    "objects after a tag": (
        "{% for c in message.tool_calls %}[CALL]" + CALL + "{% endfor %}",
        "json_after_tag",
        '[CALL]{"name": "get_weather", "arguments": {"city": "Paris"}}[CALL]{"name": "get_time", "arguments": {}}',
    ),
    "list after a tag": (
        "<|calls|>[{% for c in message.tool_calls %}" + CALL + "{% if not loop.last %}, {% endif %}{% endfor %}]",
        "json_list_after_tag",
        '<|calls|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]',
    ),
    # LongCat-Flash-Thinking's shape: GLM's key and value tags, its own names
    "parameters in key and value tags": (
        "{% for c in message.tool_calls %}{% if not loop.first %}{{ NL }}{% endif %}<longcat_tool_call>{{ c.function.name }}"
        "{% for k, v in c.function.arguments | items %}{{ NL }}<longcat_arg_key>{{ k }}</longcat_arg_key>{{ NL }}"
        "<longcat_arg_value>{{ v }}</longcat_arg_value>{% endfor %}{{ NL }}</longcat_tool_call>{% endfor %}",
        "xml_parameters",
        "<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Paris</longcat_arg_value>"
        "\n</longcat_tool_call>\n<longcat_tool_call>get_time\n</longcat_tool_call>",
    ),
    # Qwen3-Coder's shape, other tags
    "function and parameter tags": (
        "{% for c in message.tool_calls %}{% if not loop.first %}{{ NL }}{% endif %}<tool>{{ NL }}<fn={{ c.function.name }}>"
        "{% for k, v in c.function.arguments | items %}{{ NL }}<arg={{ k }}>{{ NL }}{{ v }}{{ NL }}</arg>{% endfor %}"
        "{{ NL }}</fn>{{ NL }}</tool>{% endfor %}",
        "xml_parameters",
        "<tool>\n<fn=get_weather>\n<arg=city>\nParis\n</arg>\n</fn>\n</tool>\n<tool>\n<fn=get_time>\n</fn>\n</tool>",
    ),
    # Functionary v3.1's shape, other tags
    "name, then the arguments, in tags": (
        '{% for c in message.tool_calls %}<call name="{{ c.function.name }}">{{ c.function.arguments | tojson }}</call>{% endfor %}',
        "name_then_json",
        '<call name="get_weather">{"city": "Paris"}</call><call name="get_time">{}</call>',
    ),
    # MiniMax's shape, the tags Claude-style fine-tunes write: the calls in a section
    "invokes in a section": (
        "<function_calls>{% for c in message.tool_calls %}{{ NL }}<invoke name=\"{{ c.function.name }}\">"
        "{% for k, v in c.function.arguments | items %}{{ NL }}<parameter name=\"{{ k }}\">{{ v }}</parameter>{% endfor %}"
        "{{ NL }}</invoke>{% endfor %}{{ NL }}</function_calls>",
        "xml_parameters_section",
        '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>'
        '\n<invoke name="get_time">\n</invoke>\n</function_calls>',
    ),
    # Mistral's shape, other tokens: each call runs to the next one or the answer's end
    "name, then the arguments, to the end": (
        "{% for c in message.tool_calls %}[CALL]{{ c.function.name }}[ARGS]{{ c.function.arguments | tojson }}{% endfor %}",
        "name_then_json",
        '[CALL]get_weather[ARGS]{"city": "Paris"}[CALL]get_time[ARGS]{}',
    ),
}


def learned_codec(shape: str) -> chatcodec.Codec:
    calls = SHAPES[shape][0].replace("{{ NL }}", "{{ '\\n' }}")  # (a newline after a block tag is trimmed)
    return chatcodec.load(TEMPLATE.replace("CALLS", calls), special_tokens={"eos_token": "<|im_end|>"})
