"""Rendering chat templates exactly as Hugging Face transformers does.

``apply_chat_template(tokenize=False)`` compiles the template in an
``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols``
extension and a ``{% generation %}`` tag, replaces ``tojson`` with a ``json.dumps`` wrapper, and
adds ``raise_exception`` and ``strftime_now``. Messages are passed with ``None`` values dropped,
reasoning copied under its alias names, every value rebuilt from plain data, and the
tokenizer's special tokens as variables. This module reproduces that, byte for byte. The
environment itself is stricter than transformers' about what templates may do (they come from
model repositories and are untrusted code): see ``chatcodec.render.sandbox``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError

from chatcodec.errors import InvalidMessageError, TemplateRenderError, TemplateSecurityError
from chatcodec.messages import REASONING_FIELDS
from chatcodec.render.sandbox import (
    ChatTemplateSandbox,
    check_size,
    max_output,
    trusted_values,
    weight,
    within_input_bounds,
)

Clock = Callable[[], datetime]
_clock: contextvars.ContextVar[Clock] = contextvars.ContextVar("chatcodec_clock", default=datetime.now)
# (rendered blocks so far, generation spans) while a render tracks {% generation %} blocks.
_generation_tracking: contextvars.ContextVar[tuple[list[str], list[tuple[int, int]]] | None] = contextvars.ContextVar(
    "chatcodec_generation_tracking", default=None
)


class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: marks text the assistant wrote (for masks)."""

    tags = {"generation"}

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_mark"), [], [], body).set_lineno(lineno)

    def _mark(self, caller: Callable[[], str]) -> str:
        text = caller()
        tracking = _generation_tracking.get()
        if tracking is not None:
            blocks, spans = tracking
            start = sum(len(block) for block in blocks)
            spans.append((start, start + len(text)))
        return text


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # transformers' filter: plain json.dumps, no HTML escaping (Jinja's own tojson escapes <, >, &, ').
    if indent is not None:
        # Every line of the output is indented: the indentation can outweigh the value.
        width = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) else 0
        if not within_input_bounds(value, 1 + max(width, 0)):
            check_size(weight(value) * (1 + max(width, 0)), "a JSON text")
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return _clock.get()().strftime(format)


@lru_cache(maxsize=1)
def environment() -> ChatTemplateSandbox:
    """The environment transformers compiles chat templates in (hardened, see ``sandbox``)."""
    env = ChatTemplateSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """Compile (once per distinct source) a chat template."""
    try:
        return environment().from_string(source)
    except TemplateSyntaxError as exc:
        raise TemplateRenderError(f"syntax error at line {exc.lineno}: {exc.message}") from None
    except RecursionError:
        raise TemplateRenderError("blocks or expressions nested too deeply to compile") from None
    except MemoryError:
        raise TemplateRenderError("too large to compile") from None


def check_syntax(source: str, name: str | None = None) -> None:
    """Raise ``TemplateRenderError`` naming the line if ``source`` is not a valid template."""
    try:
        compile_template(source)
    except TemplateRenderError as exc:
        raise TemplateRenderError(f"template {name!r}: {exc}" if name else f"template: {exc}") from None


ArgumentForm = Literal["dict", "string", "either"]


@dataclass(frozen=True)
class TemplateNeeds:
    """What a template expects of its inputs, read from its syntax tree."""

    arguments: ArgumentForm
    reasoning_fields: tuple[str, ...]
    # Whether the template names ``tools`` at all: one that does not cannot write them (the
    # sandbox gives no other way to the context's variables).
    reads_tools: bool = True


def _mentions_arguments(node: jinja2.nodes.Node) -> bool:
    if isinstance(node, jinja2.nodes.Getattr):
        return node.attr == "arguments"
    if isinstance(node, jinja2.nodes.Getitem):
        return isinstance(node.arg, jinja2.nodes.Const) and node.arg.value == "arguments"
    return False


@lru_cache(maxsize=256)
def template_needs(source: str) -> TemplateNeeds:
    """Decide which form of tool-call arguments a template needs.

    A template that tests ``arguments is string`` (or ``is mapping``) takes either form, unless it
    tells a mapping from other iterables without asking for a string; one that pipes them
    through ``tojson``/``items`` needs a dict (a string would be double-encoded); one that
    concatenates them needs a string (a dict raises ``TypeError``).
    """
    check_syntax(source)
    tree = environment().parse(source)
    form: ArgumentForm = "dict"
    tests = [node for node in tree.find_all(jinja2.nodes.Test) if node.node and _mentions_arguments(node.node)]
    required = _form_not_refused(tree)
    filters = [node for node in tree.find_all(jinja2.nodes.Filter) if node.node and _mentions_arguments(node.node)]
    if required is not None:
        form = required
    elif any(node.name not in environment().filters for node in filters):
        # Text would go through a filter no renderer of transformers' has (llama.cpp's
        # ``fromjson``, StepFun 3.7's ``arguments | fromjson if arguments is string``): a dict
        # takes the template's other way.
        form = "dict"
    elif _string_taken_for_a_list(tests):
        # (vLLM's Gemma 3 pythonic template: a dict's items are keyword arguments, and anything
        # else iterable is a list of positional ones, which a string's characters would become.)
        form = "dict"
    elif any(test.name in ("string", "mapping") for test in tests):
        # Both forms are taken; as given, unless the template writes a mapping in a syntax of
        # its own (Gemma 4's ``key:value`` members) and a string as it stands: JSON text
        # would be written inside that syntax.
        form = "dict" if _mapping_written_otherwise(tree) else "either"
    else:
        concatenated = [
            node
            for node in tree.find_all((jinja2.nodes.Add, jinja2.nodes.Concat))
            if any(_mentions_arguments(operand) for operand in _operands(node))
        ]
        # (``arguments | string`` writes a dict as Python's repr, ``{'city': 'Paris'}``: the
        # template wants text, as vLLM's InternLM2 template, which concatenates it.)
        if any(node.name != "string" for node in filters):
            form = "dict"
        elif concatenated or filters:
            form = "string"
    mentioned = {name.name for name in tree.find_all(jinja2.nodes.Name)}
    mentioned |= {node.attr for node in tree.find_all(jinja2.nodes.Getattr)}
    mentioned |= {
        node.arg.value
        for node in tree.find_all(jinja2.nodes.Getitem)
        if isinstance(node.arg, jinja2.nodes.Const) and isinstance(node.arg.value, str)
    }
    reasoning = tuple(field for field in REASONING_FIELDS if field in mentioned)
    reads_tools = any(name.name == "tools" for name in tree.find_all(jinja2.nodes.Name))
    return TemplateNeeds(arguments=form, reasoning_fields=reasoning, reads_tools=reads_tools)


# Text no template writes of its own: what the reasoning probe below looks for.
_PROBE_REASONING = "zq7 reasoning probe"
_PROBE_ANSWER = "zq7 answer probe"


@lru_cache(maxsize=256)
def reasoning_in_parts(source: str) -> bool:
    """Whether the template writes an assistant's reasoning only from a ``{"type":
    "thinking"}`` part of its content (Mistral's reasoning templates), never from a
    ``reasoning_content`` field: such a template is given the reasoning as that part."""
    if "'thinking'" not in source and '"thinking"' not in source:
        return False
    as_field = {"role": "assistant", "content": _PROBE_ANSWER, "reasoning_content": _PROBE_REASONING}
    as_parts = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": _PROBE_REASONING}, {"type": "text", "text": _PROBE_ANSWER}],
    }
    try:
        written = [render_source(source, [{"role": "user", "content": "u"}, message])[0] for message in (as_field, as_parts)]
    except (TemplateRenderError, InvalidMessageError):
        return False
    return _PROBE_REASONING not in written[0] and _PROBE_REASONING in written[1] and _PROBE_ANSWER in written[1]


def reasoning_as_part(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message dict with its reasoning moved into its content, as a thinking part
    before the text (the form ``reasoning_in_parts`` templates read)."""
    reasoning = next((message[key] for key in REASONING_FIELDS if isinstance(message.get(key), str)), None)
    if reasoning is None or message.get("role") != "assistant":
        return message
    content = message.get("content")
    parts: list[Any] = [{"type": "thinking", "thinking": reasoning}]
    if isinstance(content, list):
        if any(isinstance(part, dict) and part.get("type") == "thinking" for part in content):
            return message  # (the caller gave the reasoning as a part already)
        parts += content
    elif content:
        parts.append({"type": "text", "text": content})
    moved = {key: value for key, value in message.items() if key not in REASONING_FIELDS}
    moved["content"] = parts
    return moved


def _form_tests(tree: jinja2.nodes.Template) -> Iterator[tuple[jinja2.nodes.If, jinja2.nodes.Test, bool]]:
    """Each ``if`` that tests whether the arguments are a string or a mapping: the branch, its
    test, and whether the test is negated (``is not mapping``)."""
    for branch in tree.find_all(jinja2.nodes.If):
        test, negated = branch.test, False
        if isinstance(test, jinja2.nodes.Not):
            test, negated = test.node, True
        if isinstance(test, jinja2.nodes.Test) and test.name in ("string", "mapping") and _mentions_arguments(test.node):
            yield branch, test, negated


def _mapping_written_otherwise(tree: jinja2.nodes.Template) -> bool:
    """Does a branch the arguments take as a mapping (``is mapping``, or the other branch of
    ``is string``) write them without ``tojson`` (member by member)? Then only a mapping is
    written in the template's own syntax."""
    for branch, test, negated in _form_tests(tree):
        as_mapping = branch.body if (test.name == "mapping") != negated else [*branch.elif_, *branch.else_]
        mentioned = [
            node for part in as_mapping for node in part.find_all((jinja2.nodes.Getattr, jinja2.nodes.Getitem)) if _mentions_arguments(node)
        ]
        as_json = any(
            node.name == "tojson" and node.node is not None and _mentions_arguments(node.node)
            for part in as_mapping
            for node in part.find_all(jinja2.nodes.Filter)
        )
        if mentioned and not as_json:
            return True
    return False


def _string_taken_for_a_list(tests: list[jinja2.nodes.Test]) -> bool:
    """Do the arguments' tests tell a mapping from any other iterable (``is iterable``, ``is
    sequence``: a string is both) without ever asking whether they are a string?"""
    names = {test.name for test in tests}
    return "mapping" in names and bool(names & {"iterable", "sequence"}) and "string" not in names


def _form_not_refused(tree: jinja2.nodes.Template) -> ArgumentForm | None:
    """The form of the arguments a template takes where it tests them and raises an error for
    the other (Spark 2.5: ``{% if arguments is not mapping %}{{ raise_exception(...) }}``):
    "dict" or "string"; None if it raises for neither."""
    for branch, test, negated in _form_tests(tree):
        raises = any(
            isinstance(call.node, jinja2.nodes.Name) and call.node.name == "raise_exception"
            for node in branch.body
            for call in node.find_all(jinja2.nodes.Call)
        )
        if raises:
            # (``is not mapping`` raises for a string; ``is string`` too; ``is mapping`` for a dict.)
            refuses_string = (test.name == "mapping") == negated
            return "dict" if refuses_string else "string"
    return None


def _operands(node: jinja2.nodes.Node) -> list[jinja2.nodes.Node]:
    if isinstance(node, jinja2.nodes.Add):
        return [node.left, node.right]
    if isinstance(node, jinja2.nodes.Concat):
        return list(node.nodes)
    return []


@contextmanager
def clock(now: Clock) -> Iterator[None]:
    """Make ``strftime_now`` in templates read ``now()`` instead of the system clock."""
    token = _clock.set(now)
    try:
        yield
    finally:
        _clock.reset(token)


_PLAIN = frozenset((str, int, float, bool, type(None)))


def plain_data(value: Any) -> Any:
    """Rebuild ``value`` from plain JSON-like types, as transformers does for everything a template sees.

    Objects keep methods the sandbox does not know to be dangerous (a ``Path`` can delete files),
    so anything that is not a string, number, bool, None, mapping, list, tuple, dataclass or
    pydantic model becomes an inert placeholder such as ``"<Path>"``.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    # Plain dicts and lists of plain values are nearly everything a caller passes: their items
    # are checked inline, without a call each.
    if kind is dict:
        return {
            key if type(key) is str else plain_data(key): item if type(item) in _PLAIN else plain_data(item)
            for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _PLAIN else plain_data(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)  # subclasses (enums...) carry methods: keep only the text
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_data(item) for item in value)
    if _is_numpy_scalar(value):
        return plain_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain_data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump())
    return f"<{type(value).__name__}>"


def _is_numpy_scalar(value: Any) -> bool:
    # numpy is optional: a numpy scalar can only exist if numpy was imported already.
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.generic)


# The names reasoning goes by; transformers fills the first two from whichever is given.


def hf_template_messages(messages: Sequence[Mapping[str, Any]], *, plain: bool = False) -> list[dict[str, Any]]:
    """What transformers hands a template: ``None`` values dropped, reasoning aliased.

    transformers copies reasoning to ``thinking`` (gpt-oss templates read that name) and to
    ``reasoning_content``. ``plain``: the values are plain data already (no copy needed).
    """
    result = []
    for message in messages:
        if plain and isinstance(message, dict):
            cleaned = message  # built without None values, and never changed by a render
        else:
            cleaned = {key: plain_data(value) for key, value in message.items() if value is not None}
        for key in REASONING_FIELDS:
            if key in cleaned:
                reasoning = cleaned[key]
                cleaned = {"thinking": reasoning, **cleaned, "reasoning_content": reasoning}
                break
        result.append(cleaned)
    return result


# A template that writes the model's own tokens reads them from the tokenizer's configuration.
UNDEFINED_SPECIAL_TOKEN = re.compile(r"^'((?:bos|eos|pad|unk|sep|cls|mask)_token)' is undefined$")


def _special_token_hint(exc: TemplateError) -> str:
    found = UNDEFINED_SPECIAL_TOKEN.match(str(exc))
    if found is None:
        return ""
    return (
        f" (the template writes the model's {found.group(1)}: load the model's folder, which holds it, "
        f"or give it: special_tokens={{{found.group(1)!r}: ...}})"
    )


def render_source(
    source: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    variables: Mapping[str, Any] | None = None,
    track_generation: bool = False,
    continue_final_message: bool | str = False,
    name: str | None = None,
    plain_messages: bool = False,
    mapping_arguments: bool = False,
) -> tuple[str, list[tuple[int, int]]]:
    """Render a template source with plain dict messages, as transformers does.

    Returns the text and, when ``track_generation`` is set, the ``{% generation %}`` spans.
    ``continue_final_message`` (True for ``content``, or a field name) ends the text inside the
    last message, so that the model continues it, as transformers' option of that name does.
    Template errors become ``TemplateRenderError`` (``TemplateSecurityError`` for sandbox
    violations) with the template's own message, the template line, and the message being
    rendered when the template failed. ``name`` names the template in those messages.
    ``mapping_arguments``: the template reads each call's arguments as a mapping, so a call's
    arguments left as text (no JSON object) are named where it fails.
    """
    label = f"template {name!r}" if name else "template"
    check_syntax(source, name)
    template = compile_template(source)
    try:
        template_messages = hf_template_messages(messages, plain=plain_messages)
        # ``documents`` (for retrieval templates) is a keyword like any other; transformers
        # passes None when there are none.
        context = {
            "documents": None,
            **plain_data(dict(variables or {})),
            "messages": template_messages,
            "tools": plain_data(list(tools)) if tools is not None else None,
            "add_generation_prompt": add_generation_prompt,
        }
    except RecursionError:
        raise InvalidMessageError("a message, tool or template variable is nested too deeply") from None
    final = None
    if continue_final_message:
        if track_generation:
            raise InvalidMessageError("continue_final_message cannot be combined with generation spans")
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        final = _mark_final_message(template_messages, field, source)
    try:
        with trusted_values(context):
            text, spans = _run(template, context, track_generation)
    except SecurityError as exc:
        raise TemplateSecurityError(f"{label} blocked by the sandbox{_where(exc, context)}: {exc}") from None
    except TemplateError as exc:
        # raise_exception(...) and Jinja's own errors ('x' is undefined, unknown filter...).
        raise TemplateRenderError(
            f"{label} raised an error{_where(exc, context, mapping_arguments)}: {exc}{_special_token_hint(exc)}"
        ) from None
    except RecursionError:
        raise TemplateRenderError(f"{label} failed: recursion too deep") from None
    except MemoryError:
        raise TemplateRenderError(f"{label} failed: out of memory") from None
    except Exception as exc:  # noqa: BLE001 - whatever untrusted template code raises is its failure
        raise TemplateRenderError(f"{label} failed{_where(exc, context, mapping_arguments)}: {type(exc).__name__}: {exc}") from None
    if final is not None:
        text = _cut_at_continue_tag(text, final, label)
    return text, spans


# transformers appends this to the final message, renders, and cuts the text where it appears.
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _mark_final_message(messages: list[dict[str, Any]], field: str, source: str) -> str:
    """Tag the end of the last message's ``field`` (every reasoning alias copy of it); return its text."""
    if not messages:
        raise InvalidMessageError("continue_final_message is set but the conversation is empty")
    # A copy is tagged: the dicts may be the caller's or shared with a retry.
    last = messages[-1] = dict(messages[-1])
    final = last.get(field)
    if final is None:
        raise InvalidMessageError(f'continue_final_message is set but the final message has no "{field}"')
    fields = [field]
    if field in REASONING_FIELDS:
        fields = [name for name in REASONING_FIELDS if last.get(name) == final]
    if not any(name in source for name in fields):
        raise InvalidMessageError(f'continue_final_message is set to "{field}", which the template never reads')
    if isinstance(final, (list, tuple)):
        # Content parts: continue the last text part.
        parts = last[field] = list(final)
        for index in reversed(range(len(parts))):
            part = parts[index]
            if isinstance(part, dict) and "text" in part:
                text = str(part["text"])
                parts[index] = {**part, "text": text + CONTINUE_TAG}
                return text
        raise InvalidMessageError("continue_final_message is set but the final message has no text part")
    for name in fields:
        last[name] = last[name] + CONTINUE_TAG
    return str(final)


def _cut_at_continue_tag(text: str, final: str, label: str) -> str:
    tag = CONTINUE_TAG.strip()
    if final.strip() not in text or tag not in text:
        raise TemplateRenderError(
            f"{label} does not render the final message as given, so it cannot be continued "
            f"(continue_final_message): {final.strip()[:80]!r}"
        )
    at = text.rindex(tag)
    if text[at : at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return text[:at]
    # The template trimmed the message's trailing space (and the tag's): trim the same way.
    return text[:at].rstrip()


def _run(
    template: jinja2.Template, context: dict[str, Any], track_generation: bool
) -> tuple[str, list[tuple[int, int]]]:
    spans: list[tuple[int, int]] = []
    blocks: list[str] = []
    limit = max_output()
    written = 0
    token = _generation_tracking.set((blocks, spans)) if track_generation else None
    try:
        # The text is counted as it is written: a loop of modest values adds up too.
        for block in template.generate(**context):
            written += len(block)
            if written > limit and written > (limit := max_output(written)):
                raise SecurityError(f"template wrote more than {limit:,} characters (the max_output limit)")
            blocks.append(block)
    finally:
        if token is not None:
            _generation_tracking.reset(token)
    return "".join(blocks), spans


def _where(exc: BaseException, context: Mapping[str, Any], mapping_arguments: bool = False) -> str:
    """`` at line N (message I, role R)``: where in the template, and on which message, it failed.

    Jinja rewrites tracebacks so that template frames carry the template's line number and its
    variables; the message being rendered is the variable that *is* one of the message dicts.
    """
    frames: list[tuple[int, Mapping[str, Any]]] = []
    traceback = exc.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == "<template>":
            frames.append((traceback.tb_lineno, traceback.tb_frame.f_locals))
        traceback = traceback.tb_next
    if not frames:
        return ""
    where = f" at line {frames[-1][0]}"
    messages = context["messages"]
    # The innermost frame that holds a message, or one of a message's calls (a macro given a
    # call: ``render_call(tool_call)``), says which message it was.
    for _, frame_locals in reversed(frames):
        for value in frame_locals.values():
            index = _message_holding(value, messages)
            if index is not None:
                why = _text_arguments(messages[index]) if mapping_arguments else ""
                return f"{where} (message {index}, role {messages[index].get('role')!r}{why})"
    return where


def _message_holding(value: object, messages: Any) -> int | None:
    """The index of the message that is ``value``, or holds it as a tool call or a call's
    function (None for any other value)."""
    if not isinstance(value, Mapping):
        return None
    for index, message in enumerate(messages):
        if value is message:
            return index
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        for call in calls if isinstance(calls, list) else ():
            if value is call or (isinstance(call, Mapping) and value is call.get("function")):
                return index
    return None


def _text_arguments(message: Mapping[str, Any]) -> str:
    """Why a template that reads a call's arguments as a mapping may have failed on the
    message: a call's arguments are the text a model wrote, which is no JSON object (a
    malformed call kept as written)."""
    for index, call in enumerate(message.get("tool_calls") or ()):
        arguments = call.get("function", {}).get("arguments") if isinstance(call, Mapping) else None
        if isinstance(arguments, str):
            return f"; its tool call {index}'s arguments are text, not a JSON object, and the template reads them as one"
    return ""
