"""The Jinja sandbox chat templates run in: transformers' sandbox, made strict.

Chat templates come from model repositories and are untrusted code. transformers compiles them
in Jinja's ``ImmutableSandboxedEnvironment``, which blocks private attributes and mutation but
turns a blocked attribute (``''.__class__``) into an empty string, and lets a template build
values as large as memory allows. This environment renders every legitimate template the same
way, and in addition:

* refuses blocked attributes at once (``SecurityError``) instead of printing nothing;
* refuses ``include``, ``import`` and ``extends`` (there is no file to read);
* refuses to build a value weighing more than ``MAX_SIZE`` (characters of text, or items and
  characters of a nested structure, shared parts counted each time, as printing would count them)
  through the ways a template can grow one: repetition, ``+``, ``~``, format widths, ``replace``,
  ``indent``, huge numeric arguments, nested literals passed to filters or printed.

It does not bound CPU time: ``{% for %}`` loops nested deep enough run for a long time. Render
templates you do not trust under a time limit (a worker process).
"""

from __future__ import annotations

import contextvars
import functools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import jinja2
import jinja2.nodes
import jinja2.runtime
import jinja2.utils
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.exceptions import SecurityError
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment

# No legitimate chat template builds a value this large (about 25 million tokens of text, past any
# context window), or passes a number this large to a function; a template that does is
# attacking the process's memory. One value of this size still fits comfortably in memory.
MAX_SIZE = 100_000_000
MAX_ITEMS = 1_000_000


@dataclass(frozen=True)
class RenderLimits:
    """What one render may build, in characters (see ``render_limits``).

    ``max_value`` bounds any one value a template builds, ``max_output`` the text it writes in
    all; both grow by ``per_input`` characters for each character of the caller's own messages,
    tools and variables (a template may print a conversation a few times over, never a
    thousand). ``max_items`` bounds a list's length. The defaults are far above what any real
    template builds, and far below what would exhaust a machine's memory.
    """

    max_value: int = 10_000_000
    max_output: int = 20_000_000
    per_input: int = 8
    max_items: int = 1_000_000


DEFAULT_LIMITS = RenderLimits()
# The smallest ``max_value`` any render in this process may have: a value no larger passes every
# size check, which can then skip looking up the render's own limits. It only ever shrinks.
_smallest_max_value = min(DEFAULT_LIMITS.max_value, MAX_SIZE)
_limits: contextvars.ContextVar[RenderLimits] = contextvars.ContextVar("chatcodec_render_limits", default=DEFAULT_LIMITS)


class _Budget:
    """The limits of the render under way, and the weights of the caller's values.

    Neither measures the caller's values up front. The limits start at their configured values
    and grow by ``per_input`` for each character of the caller's values the first time a value
    or the output reaches one (the values are measured then, once). A container of the caller's
    (at every depth: the render's variables, ``messages`` and ``tools``, each message and tool,
    and the containers in those, down to a schema's properties) is measured the first
    time a template weighs it, and remembered, so that weighing ``messages`` in a loop stays
    linear. Most renders weigh a few of them, or none.
    """

    __slots__ = ("max_value", "max_output", "known", "_roots", "_values", "_per_input", "_grown")

    def __init__(self, limits: RenderLimits, values: tuple[Any, ...]) -> None:
        # The value limit is capped once here, not at each of the many checks of a render.
        self.max_value = min(limits.max_value, MAX_SIZE)
        self.max_output = limits.max_output
        # Weights by id. Only the caller's containers are remembered: they stay alive for the
        # whole render, so their ids cannot be reused by a value the template builds.
        self.known: dict[int, int] = {}
        self._roots: set[int] | None = None
        self._values = values
        self._per_input = limits.per_input
        self._grown = False

    def is_callers(self, container: object) -> bool:
        """Is ``container`` one of the caller's containers (at any depth, see the class)?"""
        if self._roots is None:
            self._roots = _containers(self._values)
        return id(container) in self._roots

    def bounds(self, value: object, factor: int = 1) -> bool:
        """Could ``factor`` times the weight of ``value`` never pass the limits, because it is
        one of the caller's containers and the limits grow by ``per_input`` times all of them?"""
        return self._per_input >= factor and type(value) in _CONTAINERS and self.is_callers(value)

    def grow(self) -> None:
        """Grow the limits by the caller's values (the first time only)."""
        if self._grown:
            return
        self._grown = True
        size = sum(_measure(value, self.known) for value in self._values)
        self.max_value = min(self.max_value + self._per_input * size, MAX_SIZE)
        self.max_output += self._per_input * size


def _containers(values: Iterable[Any]) -> set[int]:
    """The ids of the lists, tuples and dicts in ``values``, at every depth."""
    found: set[int] = set()
    pending = [value for value in values if type(value) in _CONTAINERS]
    # (One loop, no comprehension per container: a render asks this once, and a conversation
    # holds a few dozen containers, a schema's properties most of them.)
    while pending:
        container = pending.pop()
        if id(container) in found:
            continue
        found.add(id(container))
        for item in container.values() if type(container) is dict else container:
            if type(item) in _CONTAINERS:
                pending.append(item)
    return found


_CONTAINERS = frozenset((dict, list, tuple))

_active: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("chatcodec_active_limits", default=None)


@contextmanager
def render_limits(limits: RenderLimits) -> Iterator[None]:
    """Render under ``limits`` instead of ``DEFAULT_LIMITS`` (within this context)."""
    global _smallest_max_value
    _smallest_max_value = min(_smallest_max_value, limits.max_value)
    token = _limits.set(limits)
    try:
        yield
    finally:
        _limits.reset(token)


def _max_value(reached: int = 0) -> int:
    """The largest value the render under way may build (grown with the caller's input once a
    value of size ``reached`` passes the configured limit)."""
    budget = _active.get()
    if budget is None:
        return MAX_SIZE
    if reached > budget.max_value:
        budget.grow()
    return budget.max_value


def max_output(reached: int = 0) -> int:
    """The most text the render under way may write (grown with the caller's input once the
    text written, ``reached``, passes the configured limit)."""
    budget = _active.get()
    if budget is None:
        return DEFAULT_LIMITS.max_output
    if reached > budget.max_output:
        budget.grow()
    return budget.max_output


MAX_EXPONENT = 1000
MAX_INT_BITS = 100_000
# Digits inside a ``{...}`` replacement field of a format string (a width or precision).
_FORMAT_FIELD_NUMBER = re.compile(r"\{[^{}]*?(\d+)[^{}]*\}")
# Width and precision of a printf-style conversion (``%999999999d``).
_PERCENT_FIELD_NUMBER = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?")


# What Jinja itself hands to filters (``pass_context``...): not template data.
_OPAQUE = (jinja2.runtime.Context, jinja2.nodes.EvalContext, jinja2.Environment)


def weight(value: Any, limit: int = MAX_SIZE) -> int:
    """About how many characters ``value`` prints as; counting stops once past ``limit``.

    Shared parts count each time they occur, because printing repeats them: ``[s] * 1000`` weighs
    a thousand times ``s``.
    """
    # The caller's own containers are measured once (see ``_Budget``), not every time a template
    # passes ``messages`` to a filter.
    budget = _active.get()
    known = budget.known if budget is not None else {}
    total = 0
    pending = [value]
    while pending and total <= limit:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            total += len(item)
        elif kind in _SCALARS:
            total += 1
        elif id(item) in known:
            total += known[id(item)]
        elif isinstance(item, str):
            total += len(item)
        elif isinstance(item, _OPAQUE):
            total += 1
        elif isinstance(item, (list, tuple, Mapping)):
            if budget is not None and budget.is_callers(item):
                total += _measure(item, known)  # remembered, with every container inside it
            elif isinstance(item, Mapping):
                total += len(item) + 1
                if total <= limit:
                    pending.extend(item.keys())
                    pending.extend(item.values())
            else:
                total += len(item) + 1
                if total <= limit:
                    pending.extend(item)
        else:
            total += 1
    return total


@contextmanager
def trusted_values(*values: Any) -> Iterator[None]:
    """Render with ``values`` as the caller's own (measured once, when first needed: see
    ``_Budget``) and the limits they grow."""
    token = _active.set(_Budget(_limits.get(), values))
    try:
        yield
    finally:
        _active.reset(token)


_SCALARS = (int, float, bool, type(None))


def _measure(value: Any, known: dict[int, int]) -> int:
    # Messages are mostly dicts of strings: those are counted inline, without a call each.
    kind = type(value)
    if kind is str:
        return len(value)
    if kind in _SCALARS:
        return 1
    found = known.get(id(value))
    if found is not None:
        return found
    if kind is dict or (kind is not list and kind is not tuple and isinstance(value, Mapping)):
        total = len(value) + 1
        for key, item in value.items():
            total += len(key) if type(key) is str else _measure(key, known)
            item_kind = type(item)
            total += len(item) if item_kind is str else 1 if item_kind in _SCALARS else _measure(item, known)
    elif kind is list or kind is tuple or isinstance(value, (list, tuple)):
        total = len(value) + 1
        for item in value:
            item_kind = type(item)
            total += len(item) if item_kind is str else 1 if item_kind in _SCALARS else _measure(item, known)
    else:
        return 1
    known[id(value)] = total
    return total


def check_size(size: int, what: str = "a value") -> None:
    if size <= _smallest_max_value:
        return
    limit = _max_value(size)
    if size > limit:
        raise SecurityError(f"template tried to build {what} larger than {limit:,} characters (the max_value limit)")


def check_items(count: int) -> None:
    # Lists as long as a long text are still no template's business, and slow to measure.
    limit = min(_limits.get().max_items, MAX_ITEMS)
    if count > limit:
        raise SecurityError(f"template tried to build a list of more than {limit:,} items (the max_items limit)")


def within_input_bounds(value: Any, factor: int = 1) -> bool:
    """Is ``value`` one of the caller's containers, ``factor`` times whose weight the limits
    always allow (see ``_Budget.bounds``)?"""
    budget = _active.get()
    return budget is not None and budget.bounds(value, factor)


def check_weight(*values: Any) -> None:
    total = 0
    budget = _active.get()
    for value in values:
        # Plain strings are by far the most common operands: measure them without a call.
        if type(value) is str:
            total += len(value)
        elif budget is not None and budget.bounds(value):
            # The caller's own container (``messages``, a tool, a message): the limits grow by
            # ``per_input`` (at least 1) times the caller's input once reached, so its weight
            # could never make this check fail. Not measuring it saves a walk per filter call
            # (``tool | tojson`` for each tool).
            continue
        else:
            total += weight(value)
    check_size(total)


def check_number(value: Any, where: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > (limit := _max_value(abs(value))):
        raise SecurityError(f"template passed the number {value} to {where}; more than {limit:,} is refused")


def _check_int_bits(bits: int) -> None:
    # Integers that grow by repeated squaring or multiplication eat memory and time too.
    if bits > MAX_INT_BITS:
        raise SecurityError(f"template tried to build a number of more than {MAX_INT_BITS:,} bits")


def check_format_string(text: str, arguments: Any = ()) -> None:
    # A width or precision in a format string allocates that many characters, each field its
    # own: the sum counts. A ``*`` width (``'%*s' % (n, x)``) or a nested ``{:{}}`` one comes
    # from the arguments, so every number among them counts as a width too.
    total = len(text)
    for match in _FORMAT_FIELD_NUMBER.finditer(text):
        total += int(match.group(1))
    if "%" in text:
        for match in _PERCENT_FIELD_NUMBER.finditer(text):
            total += sum(int(digits) for digits in match.groups() if digits)
    if "*" in text or "{" in text:
        values = arguments if isinstance(arguments, (tuple, list)) else (arguments,)
        total += sum(abs(value) for value in values if isinstance(value, int) and not isinstance(value, bool))
    check_size(total, "a formatted string")


def _check_join(separator: Any, items: Any) -> None:
    # Only sized collections are measured: a generator cannot be looked at without consuming it.
    if isinstance(items, (list, tuple)) and isinstance(separator, str):
        check_size(weight(items) + len(separator) * len(items), "a string")


def _check_replace(text: Any, old: Any, new: Any) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
        occurrences = text.count(old) if old else len(text) + 1
        check_size(len(text) + occurrences * (len(new) - len(old)), "a string")


def _check_str_method(text: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse ``str`` method calls whose result would be huge."""
    if method in ("format", "format_map"):
        check_format_string(text, (*args, *kwargs.values()))
    elif method in ("ljust", "rjust", "center", "zfill") and args and isinstance(args[0], int):
        check_size(max(len(text), args[0]), "a padded string")
    elif method == "join" and args:
        _check_join(text, args[0])
    elif method == "replace" and len(args) >= 2:
        _check_replace(text, args[0], args[1])
    elif method == "expandtabs":
        tab_size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(tab_size, int):
            check_size(len(text) + text.count("\t") * tab_size, "a string")


def sandboxed_range(*args: int) -> range:
    # Jinja's sandbox refuses ranges over 100,000 numbers with an OverflowError; say it is the sandbox.
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise SecurityError(
            f"template asked for a range of {len(result):,} numbers; more than {MAX_RANGE:,} is refused"
        )
    return result


sandboxed_range.__name__ = "range"  # what templates call it, for error messages


class _GuardedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` through the environment, so that it is size-checked like ``a + b``,
    and ``a + b`` straight to its check (not through ``call_binop``'s dispatch on the operator:
    a template adds up hundreds of strings)."""

    @optimizeconst
    def visit_Add(self, node: jinja2.nodes.BinExpr, frame: Frame) -> None:
        self.write("environment.checked_add(")
        self.visit(node.left, frame)
        self.write(", ")
        self.visit(node.right, frame)
        self.write(")")

    @optimizeconst
    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class NoFileLoader(jinja2.BaseLoader):
    def get_source(self, environment: jinja2.Environment, template: str) -> Any:
        raise SecurityError(f"chat templates may not include, import or extend other files (asked for {template!r})")


_DICT_ATTRIBUTES = frozenset(dir(dict))
_STR_ATTRIBUTES = frozenset(dir(str))
_SAFE_ATTRIBUTES: dict[tuple[type, str], bool] = {}
_SAFE_ATTRIBUTES_SIZE = 4096  # attribute names come from templates: bounded all the same


class ChatTemplateSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox that refuses, rather than hides, what it blocks, and bounds sizes."""

    code_generator_class = _GuardedCodeGenerator
    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._check_output, loader=NoFileLoader(), **options)
        self.globals["range"] = sandboxed_range
        self.globals["lipsum"] = _guard(self.globals["lipsum"], _check_lipsum)  # type: ignore[arg-type]
        self.globals["dict"] = TemplateDict()
        self.globals["namespace"] = TemplateNamespace
        for name, check in _FILTER_CHECKS.items():
            self.filters[name] = _guard(self.filters[name], check)
        self.filters = _CheckedFilters(self.filters)

    @staticmethod
    def _check_output(value: Any) -> Any:
        # ``{{ value }}`` prints ``str(value)``: a small nested literal can print as gigabytes.
        if not isinstance(value, str):
            check_weight(value)
        return value

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is not allowed")

    def getattr(self, obj: Any, attribute: str) -> Any:
        # ``message.role`` on a plain dict: Jinja tries the attribute first and falls back to the
        # item through an AttributeError. A name that is no dict attribute can only be the item,
        # so it is looked up directly (the same result, without raising and catching).
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        # Answered as Jinja's sandbox answers, without the exceptions it raises and catches on
        # the way where the answer is known: ``message['role']`` on a plain dict (most lookups),
        # a key it lacks that names no dict method, and ``content | selectattr('type', ...)`` on
        # a message whose content is text, which asks each character for its ``type`` (Llama 3.2
        # Vision's templates): a string has no item named by a string, nor an attribute but its
        # methods.
        kind = type(obj)
        if kind is dict:
            try:
                return obj[argument]
            except (TypeError, LookupError):
                if type(argument) is str and argument not in _DICT_ATTRIBUTES:
                    return self.undefined(obj=obj, name=argument)
        elif kind is str and type(argument) is str and argument not in _STR_ATTRIBUTES:
            return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # Jinja's answer depends on the object's type and the name alone (which types are
        # internal or known mutable, which names are private): asked once per pair.
        key = (type(obj), attr)
        known = _SAFE_ATTRIBUTES.get(key)
        if known is None:
            known = bool(super().is_safe_attribute(obj, attr, value))
            if len(_SAFE_ATTRIBUTES) < _SAFE_ATTRIBUTES_SIZE:
                _SAFE_ATTRIBUTES[key] = known
        return known

    def checked_add(self, left: Any, right: Any) -> Any:
        """``left + right``, refused where the sum would pass the limits."""
        if isinstance(left, str) and isinstance(right, str):
            # Most additions join two strings (or Markup, which ``tojson`` returns): their
            # size is their lengths, checked inline (a template adds up hundreds of them).
            size = len(left) + len(right)
            if size > _smallest_max_value:
                check_size(size)
        elif isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            check_weight(left, right)
        return left + right

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "+":
            return self.checked_add(left, right)
        if operator_name == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and isinstance(count, int):
                    check_size(weight(sequence) * count)
                    if not isinstance(sequence, str):
                        check_items(len(sequence) * count)
            if isinstance(left, int) and isinstance(right, int):
                _check_int_bits(left.bit_length() + right.bit_length())
            return operator.mul(left, right)
        if operator_name == "**":
            if isinstance(right, int) and abs(right) > MAX_EXPONENT:
                raise SecurityError(f"template tried to raise a number to a power larger than {MAX_EXPONENT}")
            if isinstance(left, int) and isinstance(right, int):
                _check_int_bits(left.bit_length() * abs(right))
            return operator.pow(left, right)
        if operator_name == "%":
            if isinstance(left, str):
                check_format_string(left, right)
                check_weight(left, right)
            return operator.mod(left, right)
        return super().call_binop(context, operator_name, left, right)

    def checked_concat(self, values: tuple[Any, ...]) -> str:
        """``a ~ b ~ ...`` (what Jinja's ``str_join`` does), size-checked before joining."""
        check_weight(*values)
        return "".join(str(value) for value in values)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if type(__obj) is _Macro:
            # A macro is template code, whose every step is checked (what it builds, what it
            # writes): what it is given needs no look, and it is safe to call (what Jinja's
            # sandbox asks of it: no str.format method, no unsafe marks). Templates call one
            # per tool, per parameter, per message: this is most of their calls.
            return __context.call(__obj, *args, **kwargs)
        # Jinja passes the loop's and block's variables along as ``_loop_vars`` / ``_block_vars``
        # (``Context.call`` takes them off): they are no arguments the template gave.
        values = (*args, *(value for key, value in kwargs.items() if key not in _JINJA_CALL_KEYS)) if kwargs else args
        total = 0
        for value in values:
            kind = type(value)
            if kind is str:
                total += len(value)
                continue
            if kind is not bool and isinstance(value, int):
                check_number(value, getattr(__obj, "__name__", "a function"))
            total += weight(value)
        if total > _smallest_max_value:
            check_size(total)
        # Only a few str methods build something larger than what they are given (their name
        # is asked first: a template calls ``strip``, ``split``, ``startswith`` far more often).
        # The sandbox hands out str.format wrapped; the wrapped method says which string it is on.
        if getattr(__obj, "__name__", None) in _AMPLIFYING_STR_METHODS:
            method = getattr(__obj, "__wrapped__", __obj)
            receiver = getattr(method, "__self__", None)
            if isinstance(receiver, str):
                _check_str_method(receiver, getattr(method, "__name__", ""), args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)


_JINJA_CALL_KEYS = frozenset({"_loop_vars", "_block_vars"})
_Macro = jinja2.runtime.Macro
# The str methods ``_check_str_method`` bounds.
_AMPLIFYING_STR_METHODS = frozenset(
    {"format", "format_map", "ljust", "rjust", "center", "zfill", "join", "replace", "expandtabs"}
)


class TemplateDict:
    # transformers exposes a restricted ``dict``: calling it builds a dict, nothing else is reachable.
    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(jinja2.utils.Namespace):
    # Underscore names on a namespace are a known route out of the sandbox.
    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(f"chat templates may not set underscore-prefixed names on a namespace ({name!r})")


def _guard(original: Callable[..., Any], check: Callable[..., None]) -> Callable[..., Any]:
    """``original`` with ``check`` run on its arguments first (Jinja's pass_* marker is kept)."""

    plain_size_check = check is _check_filter_input

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if plain_size_check and not kwargs:
            # Most filters get a string or two: their size is their length, summed inline.
            total = 0
            for value in args:
                if type(value) is not str:
                    break
                total += len(value)
            else:
                check_size(total)
                return original(*args)
        check(*args, **kwargs)
        return original(*args, **kwargs)

    return guarded


def _check_filter_input(*args: Any, **kwargs: Any) -> None:
    # A filter's output is about as large as its input (the amplifiers have their own checks).
    check_weight(*args, *kwargs.values())


# Filters whose result is a number or one of the values given (``messages | length``,
# ``x | default(y)``): they build nothing, and what a template prints is checked when it is
# printed. Weighing their input (a whole conversation) for each call would be wasted.
SMALL_RESULT_FILTERS = frozenset(
    {"length", "count", "first", "last", "min", "max", "abs", "int", "float", "round", "wordcount", "default", "d"}
)


class _CheckedFilters(dict):  # type: ignore[type-arg]
    """The filter table; every filter, including ones added later, checks its input's size
    first, but those that build nothing (``SMALL_RESULT_FILTERS``)."""

    def __setitem__(self, name: str, function: Callable[..., Any]) -> None:
        super().__setitem__(name, function if name in SMALL_RESULT_FILTERS else _guard(function, _check_filter_input))

    def __init__(self, filters: Mapping[str, Callable[..., Any]]) -> None:
        super().__init__()
        for name, function in filters.items():
            self[name] = function


def _check_join_filter(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> None:
    _check_join(d, value)


def _check_replace_filter(eval_ctx: Any, s: Any, old: Any, new: Any, count: Any = None) -> None:
    _check_replace(s, old, new)


def _check_format_filter(value: Any, *args: Any, **kwargs: Any) -> None:
    if isinstance(value, str):
        check_format_string(value, (*args, *kwargs.values()))


def _check_indent_filter(s: Any, width: Any = 4, first: bool = False, blank: bool = False) -> None:
    check_number(width, "indent")
    if isinstance(s, str):
        # Every line gets the indentation.
        indentation = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        check_size(len(s) + (s.count("\n") + 1) * max(indentation, 0), "an indented string")


def _check_width_filter(value: Any, width: Any = 80) -> None:
    check_number(width, "center")
    if isinstance(width, int):
        check_size(width, "a centered string")


def _check_list_filter(*args: Any) -> None:
    # A string becomes a list of one-character strings, each a Python object. (Jinja hands
    # its async-aware filters the context first: the value is the last argument.)
    if args and isinstance(args[-1], str):
        check_items(len(args[-1]))


def _check_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> None:
    if isinstance(n, int) and isinstance(max, int):
        check_size(n * max * 10, "placeholder text")


_FILTER_CHECKS: dict[str, Callable[..., None]] = {
    "join": _check_join_filter,
    "replace": _check_replace_filter,
    "format": _check_format_filter,
    "indent": _check_indent_filter,
    "center": _check_width_filter,
    "list": _check_list_filter,
}
