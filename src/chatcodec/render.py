"""Rendering chat templates exactly as Hugging Face transformers does.

``apply_chat_template(tokenize=False)`` compiles the template in an
``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols``
extension and a ``{% generation %}`` tag, replaces ``tojson`` with a ``json.dumps`` wrapper, and
adds ``raise_exception`` and ``strftime_now``. Messages are passed with ``None`` values dropped,
reasoning copied under its alias names, and the tokenizer's special tokens as variables. This
module reproduces that, byte for byte, and hardens the sandbox further: templates come from
model repositories and are untrusted code.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import operator
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from chatcodec.errors import TemplateRenderError, TemplateSecurityError

Clock = Callable[[], datetime]
_clock: contextvars.ContextVar[Clock] = contextvars.ContextVar("chatcodec_clock", default=datetime.now)
# (rendered blocks so far, generation spans) while a render tracks {% generation %} blocks.
_generation_tracking: contextvars.ContextVar[tuple[list[str], list[tuple[int, int]]] | None] = (
    contextvars.ContextVar("chatcodec_generation_tracking", default=None)
)

# No legitimate chat template builds strings this long; a template that tries is an attack.
MAX_STRING_PRODUCT = 10_000_000


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


class _NoFileLoader(jinja2.BaseLoader):
    def get_source(self, environment: jinja2.Environment, template: str) -> Any:
        raise SecurityError(f"chat templates may not include, import or extend other files (asked for {template!r})")


class ChatTemplateSandbox(ImmutableSandboxedEnvironment):
    """transformers' sandbox, made to fail loudly instead of quietly.

    Jinja's sandbox turns a forbidden attribute (``__class__``, ``__globals__``...) into an
    undefined value that prints as an empty string; a template doing that is hostile, so it is
    refused at once with a ``SecurityError``.
    """

    intercepted_binops = frozenset(["*", "**"])

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is not allowed")

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and isinstance(count, int):
                    if len(sequence) * count > MAX_STRING_PRODUCT:
                        raise SecurityError("template tried to build a value larger than 10 million items")
            return operator.mul(left, right)
        if operator_name == "**":
            if isinstance(right, int) and abs(right) > 1000:
                raise SecurityError("template tried to raise a number to a power larger than 1000")
            return operator.pow(left, right)
        return super().call_binop(context, operator_name, left, right)


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
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return _clock.get()().strftime(format)


class _TemplateDict:
    # transformers exposes a restricted ``dict``: calling it builds a dict, nothing else is reachable.
    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    # Dunder names on a namespace are a known route out of the sandbox.
    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(f"chat templates may not set underscore-prefixed names on a namespace ({name!r})")


@lru_cache(maxsize=1)
def environment() -> ChatTemplateSandbox:
    env = ChatTemplateSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
        loader=_NoFileLoader(),
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


@lru_cache(maxsize=256)
def compile_template(source: str) -> jinja2.Template:
    """Compile (once per distinct source) a chat template."""
    try:
        return environment().from_string(source)
    except TemplateSyntaxError as exc:
        raise TemplateRenderError(f"template syntax error at line {exc.lineno}: {exc.message}") from None


ArgumentForm = Literal["dict", "string", "either"]


@dataclass(frozen=True)
class TemplateNeeds:
    """What a template expects of its inputs, read from its syntax tree."""

    arguments: ArgumentForm
    reasoning_fields: tuple[str, ...]


def _mentions_arguments(node: jinja2.nodes.Node) -> bool:
    if isinstance(node, jinja2.nodes.Getattr):
        return node.attr == "arguments"
    if isinstance(node, jinja2.nodes.Getitem):
        return isinstance(node.arg, jinja2.nodes.Const) and node.arg.value == "arguments"
    return False


@lru_cache(maxsize=256)
def template_needs(source: str) -> TemplateNeeds:
    """Decide which form of tool-call arguments a template needs.

    A template that tests ``arguments is string`` (or ``is mapping``) takes either form; one that
    pipes them through ``tojson``/``items`` needs a dict (a string would be double-encoded); one
    that concatenates them needs a string (a dict raises ``TypeError``).
    """
    tree = environment().parse(source)
    form: ArgumentForm = "dict"
    tests = [node for node in tree.find_all(jinja2.nodes.Test) if _mentions_arguments(node.node)]
    if any(test.name in ("string", "mapping") for test in tests):
        form = "either"
    else:
        filters = [node for node in tree.find_all(jinja2.nodes.Filter) if _mentions_arguments(node.node)]
        concatenated = [
            node
            for node in tree.find_all((jinja2.nodes.Add, jinja2.nodes.Concat))
            if any(_mentions_arguments(operand) for operand in _operands(node))
        ]
        if filters:
            form = "dict"
        elif concatenated:
            form = "string"
    mentioned = {name.name for name in tree.find_all(jinja2.nodes.Name)}
    mentioned |= {node.attr for node in tree.find_all(jinja2.nodes.Getattr)}
    mentioned |= {
        node.arg.value
        for node in tree.find_all(jinja2.nodes.Getitem)
        if isinstance(node.arg, jinja2.nodes.Const) and isinstance(node.arg.value, str)
    }
    reasoning = tuple(field for field in ("reasoning_content", "thinking", "reasoning") if field in mentioned)
    return TemplateNeeds(arguments=form, reasoning_fields=reasoning)


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


def plain_data(value: Any) -> Any:
    """Rebuild ``value`` from plain JSON-like types, as transformers does for everything a template sees.

    Objects keep methods the sandbox does not know to be dangerous (a ``Path`` can delete files),
    so anything that is not a string, number, bool, None, mapping, list, tuple, dataclass or
    pydantic model becomes an inert placeholder such as ``"<Path>"``.
    """
    if value is None or type(value) in (str, int, float, bool):
        return value
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


def hf_template_messages(messages: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What transformers hands a template: ``None`` values dropped, reasoning aliased.

    transformers copies reasoning to ``thinking`` (gpt-oss templates read that name) and to
    ``reasoning_content``.
    """
    result = []
    for message in messages:
        cleaned = {key: plain_data(value) for key, value in message.items() if value is not None}
        reasoning = next((cleaned[key] for key in ("reasoning_content", "thinking", "reasoning") if key in cleaned), None)
        if reasoning is not None:
            cleaned = {"thinking": reasoning, **cleaned, "reasoning_content": reasoning}
        result.append(cleaned)
    return result


def render_source(
    source: str,
    messages: list[Mapping[str, Any]],
    *,
    tools: list[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    variables: Mapping[str, Any] | None = None,
    track_generation: bool = False,
) -> tuple[str, list[tuple[int, int]]]:
    """Render a template source with plain dict messages, as transformers does.

    Returns the text and, when ``track_generation`` is set, the ``{% generation %}`` spans.
    Template errors become ``TemplateRenderError`` (``TemplateSecurityError`` for sandbox
    violations) with the template's own message.
    """
    template = compile_template(source)
    context = {
        **plain_data(dict(variables or {})),
        "messages": hf_template_messages(messages),
        "tools": plain_data(list(tools)) if tools is not None else None,
        "documents": None,
        "add_generation_prompt": add_generation_prompt,
    }
    spans: list[tuple[int, int]] = []
    try:
        if not track_generation:
            return template.render(**context), spans
        blocks: list[str] = []
        token = _generation_tracking.set((blocks, spans))
        try:
            for block in template.generate(**context):
                blocks.append(block)
        finally:
            _generation_tracking.reset(token)
        return "".join(blocks), spans
    except SecurityError as exc:
        raise TemplateSecurityError(f"template blocked by the sandbox: {exc}") from None
    except UndefinedError as exc:
        raise TemplateRenderError(f"template error: {exc}") from None
    except TemplateError as exc:
        raise TemplateRenderError(f"template raised: {exc}") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError, OverflowError) as exc:
        raise TemplateRenderError(f"template failed: {type(exc).__name__}: {exc}") from None
    except RecursionError:
        raise TemplateRenderError("template failed: recursion too deep") from None
