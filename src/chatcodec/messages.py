"""Chat messages, tool calls and tool definitions in the OpenAI chat shape.

Both wire shapes are accepted on input:

* OpenAI: ``function.arguments`` is a JSON *string*; reasoning is ``reasoning_content``.
* Hugging Face: ``function.arguments`` is a dict; reasoning may be ``thinking`` or ``reasoning``.

Internally arguments are always kept as JSON text (the OpenAI wire form), because that is the
only form that can hold exactly what a model wrote. A dict given on input is remembered as such,
so that rendering can hand it back unchanged to templates that serialize it themselves.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from chatcodec.errors import InvalidMessageError
from chatcodec.parse.json_scan import FINITE_DECODER
from chatcodec.schema_refs import with_local_refs_resolved

KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool", "ipython")
Role = Literal["system", "developer", "user", "assistant", "tool", "ipython"]
# The names a message's reasoning goes by; the first is the one templates read most.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


# Tool call ids need to be unique, not secret: a generator seeded once from the system's
# randomness gives 96 random bits per id without a system call each time.
_ids = random.Random(secrets.randbits(128))


def new_tool_call_id() -> str:
    """A fresh OpenAI-style tool call id (``call_`` + 24 random hexadecimal characters)."""
    # (Twelve random bytes as hex: the same 96 bits as formatting an int, in half the time.)
    return "call_" + _ids.randbytes(12).hex()


_ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def new_mistral_tool_call_id() -> str:
    """A fresh tool call id in Mistral's shape: nine letters and digits, the only ids its
    templates render (Mistral Small 3.2's refuses any other)."""
    return "".join(_ids.choices(_ALPHANUMERIC, k=9))


# How each family of models writes a call's id, where a call needs one made up.
ToolCallIdShape = Literal["openai", "mistral"]
NEW_TOOL_CALL_IDS: dict[ToolCallIdShape, Callable[[], str]] = {"openai": new_tool_call_id, "mistral": new_mistral_tool_call_id}


class FunctionCall(BaseModel):
    """The function part of a tool call. ``arguments`` is JSON text, exactly as written."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str = "{}"
    # True when the arguments were given as a dict (Hugging Face shape) rather than as text.
    _given_as_dict: bool = PrivateAttr(default=False)
    _given_keys: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _accept_dict_arguments(cls, data: Any, handler: Any) -> FunctionCall:
        if not isinstance(data, dict):
            return handler(data)  # an instance keeps what it remembered
        given_as_dict = False
        given_keys = tuple(data)
        if "arguments" in data:
            arguments = data["arguments"]
            if arguments is None:
                data = {**data, "arguments": "{}"}
            elif isinstance(arguments, (dict, list)):
                given_as_dict = True
                data = {**data, "arguments": json.dumps(arguments, ensure_ascii=False)}
        call = handler(data)
        call._given_as_dict = given_as_dict
        call._given_keys = given_keys
        return call

    # (Not ``Field(min_length=1)``: a length constraint has pydantic-core convert the string,
    # which fails on a lone surrogate, and a name the model wrote with one must read back.)
    @field_validator("name")
    @classmethod
    def _name_is_not_empty(cls, value: str) -> str:
        return _not_empty(value)

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_are_text(cls, value: Any) -> Any:
        # Arguments are the text the model wrote, which is not always valid JSON (OpenAI says
        # as much): a malformed call parsed from a completion keeps its text, and its
        # ``parsed_arguments`` is None.
        if not isinstance(value, str):
            raise ValueError(f"must be a JSON string or an object, not {type(value).__name__}")
        return value

    @property
    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (``None`` if they are not valid JSON, or JSON the
        json module cannot decode: nested past the recursion limit, or an integer longer than
        ``sys.get_int_max_str_digits()``; the parser reports such arguments as malformed too)."""
        try:
            return json.loads(self.arguments)
        except (ValueError, RecursionError):
            return None


class ToolCall(BaseModel):
    # Unknown keys (``index`` from streamed OpenAI deltas...) are kept and handed to the template.
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall
    # The keys of the dict this was built from, in order (None when built in code).
    _given_keys: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _accept_flat_shape(cls, data: Any, handler: Any) -> ToolCall:
        if not isinstance(data, dict):
            return handler(data)  # an instance keeps what it remembered
        given_keys: tuple[str, ...] | None = tuple(data)
        # Some producers write {"name": ..., "arguments": ...} without the "function" wrapper.
        if "function" not in data and "name" in data:
            data = dict(data)
            function = {"name": data.pop("name"), "arguments": data.pop("arguments", None)}
            data["function"] = function
            given_keys = None
        call = handler(data)
        call._given_keys = given_keys
        return call


class Message(BaseModel):
    """One chat message. Unknown keys are kept and handed to the template unchanged."""

    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    # The keys of the dict this was built from, in order, and the name reasoning came under:
    # templates that dump a whole message see it exactly as the caller wrote it.
    _given_keys: tuple[str, ...] | None = PrivateAttr(default=None)
    _reasoning_key: str = PrivateAttr(default="reasoning_content")
    # ``tool_calls: []`` is kept as None, but some templates test ``'tool_calls' in message``.
    _empty_tool_calls_given: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _accept_reasoning_aliases(cls, data: Any, handler: Any) -> Message:
        if not isinstance(data, dict):
            return handler(data)  # an instance keeps what it remembered
        given_keys = tuple(data)
        reasoning_key = "reasoning_content"
        if data.get("reasoning_content") is None:
            for alias in REASONING_FIELDS[1:]:
                value = data.get(alias)
                if isinstance(value, str):
                    data = {k: v for k, v in data.items() if k != alias}
                    data["reasoning_content"] = value
                    reasoning_key = alias
                    break
        message = handler(data)
        message._given_keys = given_keys
        message._reasoning_key = reasoning_key
        message._empty_tool_calls_given = data.get("tool_calls") == []
        return message

    @field_validator("content", mode="before")
    @classmethod
    def _content_is_text_or_parts(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)):
            for index, part in enumerate(value):
                if not isinstance(part, dict):
                    raise ValueError(f"content part {index} must be an object, not {type(part).__name__}")
            return list(value)
        raise ValueError(f"must be a string, a list of content parts or null, not {type(value).__name__}")

    @field_validator("tool_calls")
    @classmethod
    def _empty_tool_calls_are_none(cls, value: list[ToolCall] | None) -> list[ToolCall] | None:
        return value or None

    @property
    def text(self) -> str:
        """The content as plain text (text parts joined), ``""`` when there is none."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(part.get("text", "")) for part in self.content)

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI chat message dict (arguments as JSON strings)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.reasoning_content is not None:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id or new_tool_call_id(),
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        out.update(self.model_extra or {})
        return out

    def to_hf(self, arguments: Literal["dict", "string", "as_given"] = "dict") -> dict[str, Any]:
        """The message as a Hugging Face chat dict: keys with no value are left out.

        ``arguments`` chooses how tool-call arguments are written: ``"dict"`` (the Hugging Face
        convention), ``"string"`` (JSON text), or ``"as_given"`` (whichever form they came in).
        Keys come in the order the message was given in (reasoning under the name it was given
        as), so that a template dumping a whole message sees what transformers would show it.
        """
        fields: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            self._reasoning_key: self.reasoning_content,
            "tool_calls": [_tool_call_to_hf(call, arguments) for call in self.tool_calls or ()]
            if self.tool_calls or self._empty_tool_calls_given
            else None,
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            **(self.model_extra or {}),
        }
        present = {key: value for key, value in fields.items() if value is not None}
        return _in_given_order(present, self._given_keys)


_PLAIN_MESSAGE_KEYS = frozenset({"role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name"})
_PLAIN_CALL_KEYS = frozenset({"id", "type", "function"})
_PLAIN_FUNCTION_KEYS = frozenset({"name", "arguments"})


def plain_hf_messages(messages: Any, arguments: Literal["dict", "string", "as_given"]) -> list[dict[str, Any]] | None:
    """``[Message.model_validate(m).to_hf(arguments) for m in messages]`` for messages of the
    common shape (known keys, string fields, tool calls with a name and arguments), without
    building models; None when any message is of another shape (then validate them)."""
    if type(messages) is not list:
        return None
    out: list[dict[str, Any]] = []
    for message in messages:
        if type(message) is not dict or not message.keys() <= _PLAIN_MESSAGE_KEYS:
            return None
        if message.get("role") not in KNOWN_ROLES:
            return None
        converted: dict[str, Any] = {}
        for key, value in message.items():
            if value is None:
                continue
            if key == "tool_calls":
                calls = _plain_calls(value, arguments)
                if calls is None:
                    return None
                value = calls
            elif type(value) is not str:
                return None
            converted[key] = value
        out.append(converted)
    return out


def _plain_calls(calls: Any, form: str) -> list[dict[str, Any]] | None:
    if type(calls) is not list:
        return None
    out: list[dict[str, Any]] = []
    for call in calls:
        if type(call) is not dict or not call.keys() <= _PLAIN_CALL_KEYS or call.get("type", "function") != "function":
            return None
        function = call.get("function")
        if type(function) is not dict or not function.keys() <= _PLAIN_FUNCTION_KEYS:
            return None
        name = function.get("name")
        if type(name) is not str or not name:
            return None
        given = function.get("arguments")
        given_as_dict = isinstance(given, (dict, list))
        if given is None:
            text = "{}"
        elif given_as_dict:
            try:
                text = json.dumps(given, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                return None
        elif type(given) is str:
            text = given
        else:
            return None
        value: Any = text
        if given_as_dict and form != "string":
            # (A plain copy of what the caller gave, as transformers' JSON round trip makes it.)
            try:
                parsed = json.loads(text)
            except RecursionError:
                parsed = None
        else:
            parsed = object_of(text) if form == "dict" else None
        if isinstance(parsed, dict):
            value = parsed
        converted: dict[str, Any] = {}
        for key in call:
            if key == "function":
                converted[key] = {k: (name if k == "name" else value) for k in function}
                if "arguments" not in function:
                    converted[key]["arguments"] = value
            elif call[key] is not None:
                if key == "id" and type(call[key]) is not str:
                    return None
                converted[key] = call[key]
        out.append(converted)
    return out


# A JSON escape of half a surrogate pair: decoded alone, it is no character UTF-8 can write.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def object_of(text: str) -> dict[str, Any] | None:
    """Arguments given as JSON text, as the dict a template writes again; None where the text
    is no JSON object, or is one whose decoded value would not be written back as JSON text of
    the same value (``1e999`` would be written ``Infinity``; ``"\\ud800"`` becomes a character
    no UTF-8 text holds). Such text, as malformed text, stays the text the model wrote."""
    try:
        parsed = FINITE_DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(parsed, ensure_ascii=False).encode("utf-8")
        except (ValueError, RecursionError):
            return None
    return parsed


def _in_given_order(fields: dict[str, Any], given_keys: tuple[str, ...] | None) -> dict[str, Any]:
    """``fields`` with the keys the caller gave first, in the caller's order."""
    if given_keys is None:
        return fields
    ordered = {key: fields[key] for key in given_keys if key in fields}
    ordered.update((key, value) for key, value in fields.items() if key not in ordered)
    return ordered


def _tool_call_to_hf(call: ToolCall, arguments: str) -> dict[str, Any]:
    function = call.function
    as_dict = arguments == "dict" or (arguments == "as_given" and function._given_as_dict)
    value: Any = function.arguments
    if as_dict:
        parsed = function.parsed_arguments if function._given_as_dict else object_of(function.arguments)
        value = parsed if isinstance(parsed, dict) else function.arguments
    function_fields = _in_given_order({"name": function.name, "arguments": value}, function._given_keys)
    fields: dict[str, Any] = {"id": call.id, "type": call.type, "function": function_fields, **(call.model_extra or {})}
    if call._given_keys is not None and "type" not in call._given_keys:
        # Not given, so not shown: transformers hands the template only what the caller wrote.
        del fields["type"]
    present = {key: field for key, field in fields.items() if field is not None}
    return _in_given_order(present, call._given_keys)


def _not_empty(value: str) -> str:
    if not value:
        raise PydanticCustomError("string_too_short", "String should have at least 1 character", {"min_length": 1})
    return value


class FunctionDefinition(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(BaseModel):
    """A tool definition. The dict it was built from is kept, key order included, for rendering."""

    model_config = ConfigDict(extra="allow")

    type: str = "function"
    function: FunctionDefinition
    _source: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_source(cls, data: Any, handler: Any) -> Tool:
        if not isinstance(data, dict):
            return handler(data)  # an instance keeps its source
        if "function" not in data and "name" in data:
            # A bare function schema, as some callers pass it.
            data = {"type": "function", "function": data}
        tool = handler(data)
        tool._source = data
        return tool

    def to_dict(self) -> dict[str, Any]:
        """The tool exactly as it was given (or as built)."""
        return self._source or self.model_dump(exclude_none=True)


def parse_messages(messages: Any) -> list[Message]:
    """Validate a list of message dicts (or ``Message`` objects).

    Raises ``InvalidMessageError`` naming the message index and field of the first problem.
    """
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    messages = _as_list(messages, "messages", "message")
    result: list[Message] = []
    for index, raw in enumerate(messages):
        if isinstance(raw, Message):
            result.append(raw)
            continue
        if hasattr(raw, "model_dump"):
            raw = raw.model_dump(exclude_none=True)
        if not isinstance(raw, dict):
            raise InvalidMessageError(f"message {index}: expected an object, got {type(raw).__name__}")
        if "role" in raw and raw["role"] not in KNOWN_ROLES:
            raise InvalidMessageError(
                f"message {index}: field 'role': unknown role {raw['role']!r} "
                f"(expected one of {', '.join(KNOWN_ROLES)})"
            )
        try:
            result.append(Message.model_validate(raw))
        except ValidationError as exc:
            raise InvalidMessageError(_describe_validation_error(f"message {index}", exc)) from None
        except RecursionError:
            raise InvalidMessageError(f"message {index}: nested too deeply") from None
    return result


def parse_tools(tools: Any) -> list[Tool] | None:
    """Validate a list of tool definitions; ``None`` stays ``None``."""
    if tools is None:
        return None
    tools = _as_list(tools, "tools", "tool definition")
    return [_validated_tool(raw, index) for index, raw in enumerate(tools)]


def _validated_tool(raw: Any, index: int) -> Tool:
    """Tool definition ``raw``, the ``index``-th of its list, as a model (errors name it)."""
    if isinstance(raw, Tool):
        return raw
    if not isinstance(raw, Mapping):
        raise InvalidMessageError(f"tool {index}: expected an object, got {type(raw).__name__}")
    try:
        return Tool.model_validate(raw)
    except ValidationError as exc:
        raise InvalidMessageError(_describe_validation_error(f"tool {index}", exc)) from None
    except RecursionError:
        raise InvalidMessageError(f"tool {index}: nested too deeply") from None


def tool_dicts(tools: Any) -> list[dict[str, Any]] | None:
    """``[tool.to_dict() for tool in parse_tools(tools)]``: the definitions as given, validated.
    Definitions of the common shape (plain dicts, a non-empty string name, a string description,
    a dict of parameters) are checked without building models."""
    if tools is None:
        return None
    plain = _plain_tool_dicts(tools)
    if plain is not None:
        return plain
    return [tool.to_dict() for tool in parse_tools(tools) or []]


def _plain_tool_dicts(tools: Any) -> list[dict[str, Any]] | None:
    # Every value accepted here is one ``Tool.model_validate`` accepts unchanged; anything else
    # goes through it, for its conversions and its error messages.
    if type(tools) is not list:
        return None
    out: list[dict[str, Any]] = []
    for raw in tools:
        plain = plain_tool_dict(raw)
        if plain is None:
            return None
        out.append(plain)
    return out


def plain_tool_dict(raw: Any) -> dict[str, Any] | None:
    """``raw`` as ``{"type": ..., "function": {...}}`` where it is a tool definition of the common
    shape (a plain dict, a non-empty string name, a string description, a dict of parameters
    with string keys), which ``Tool.model_validate`` would accept unchanged; else None."""
    if type(raw) is not dict:
        return None
    if "function" not in raw and "name" in raw:
        raw = {"type": "function", "function": raw}  # a bare function schema
    function = raw.get("function")
    if type(function) is not dict or type(raw.get("type", "")) is not str:
        return None
    name = function.get("name")
    description = function.get("description")
    parameters = function.get("parameters")
    if type(name) is not str or not name or (description is not None and type(description) is not str):
        return None
    if parameters is not None and (type(parameters) is not dict or not _ONLY_STR.issuperset(map(type, parameters))):
        return None
    return raw


_ONLY_STR = frozenset({str})


def tool_names_and_schemas(tools: Any) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """What a parser needs of a request's tools: their names, and each one's parameter
    properties by name (what converts arguments written as text to JSON). Names may be given
    as strings; definitions of the common shape are read without building models, the rest
    are validated (and a bad one raises ``InvalidMessageError`` naming it)."""
    if type(tools) is not list:
        tools = _as_list(tools, "tools", "tool definition")
    if set(map(type, tools)) == {str}:
        return list(tools), {}  # names alone: what a server that knows its tools passes
    names: list[str] = []
    schemas: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(tools):
        if isinstance(tool, str):
            names.append(tool)
            continue
        plain = plain_tool_dict(tool)
        if plain is not None:
            name = plain["function"]["name"]
            parameters = plain["function"].get("parameters") or {}
        else:
            function = _validated_tool(tool, index).function
            name = function.name
            parameters = function.parameters or {}
        names.append(name)
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        schemas[name] = with_local_refs_resolved(properties, parameters) if isinstance(properties, dict) else {}
    return names, schemas


def _as_list(values: Any, what: str, item: str) -> list[Any]:
    """A list of the items of ``values``; a single object or a string is a mistake worth naming."""
    if isinstance(values, Mapping):
        raise InvalidMessageError(f"{what} must be a list of objects, got a single object (wrap the {item} in a list)")
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidMessageError(f"{what} must be a list, not {type(values).__name__}")
    return list(values)


def _describe_validation_error(where: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    location = ".".join(str(part) for part in first["loc"] if part not in ("function-after", "function-wrap"))
    message = first["msg"]
    message = message.removeprefix("Value error, ")
    if location:
        return f"{where}: field '{location}': {message}"
    return f"{where}: {message}"


# -- messages the parser builds -------------------------------------------------------------------

_PRIVATE_DEFAULTS: dict[type, dict[str, Any]] = {}
_new = object.__new__
# The slots' own setters (pydantic models refuse plain attribute assignment of them): faster
# than ``object.__setattr__`` by name, which looks each one up, and a parse builds a call object
# and its function per call.
_BASE_SLOTS = vars(BaseModel)
_set_dict = _BASE_SLOTS["__dict__"].__set__
_set_fields_set = _BASE_SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _BASE_SLOTS["__pydantic_extra__"].__set__
_set_private = _BASE_SLOTS["__pydantic_private__"].__set__


def _private_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    private = _PRIVATE_DEFAULTS.get(cls)
    if private is None:
        private = _PRIVATE_DEFAULTS[cls] = {
            name: attribute.get_default() for name, attribute in cls.__private_attributes__.items()
        }
    return private


def _assembled(cls: type[BaseModel], fields: dict[str, Any], extra: dict[str, Any] | None) -> Any:
    """An instance of ``cls`` from values the parser made and knows valid: what
    ``model_construct`` gives with every field passed, without its per-field lookups (a parse
    builds a message and a call object per call, so this is on the one-shot hot path)."""
    built = _new(cls)
    _set_dict(built, fields)
    _set_fields_set(built, set(fields))
    _set_extra(built, extra)
    _set_private(built, dict(_private_defaults(cls)))
    return built


def assembled_call(call_id: str | None, name: str, arguments: str) -> ToolCall:
    """A parsed tool call (see ``_assembled``; both objects built inline, one per call)."""
    function = _new(FunctionCall)
    _set_dict(function, {"name": name, "arguments": arguments})
    _set_fields_set(function, {"name", "arguments"})
    _set_extra(function, None)
    _set_private(function, dict(_FUNCTION_PRIVATE))
    call = _new(ToolCall)
    _set_dict(call, {"id": call_id, "type": "function", "function": function})
    _set_fields_set(call, {"id", "type", "function"})
    _set_extra(call, {})
    _set_private(call, dict(_CALL_PRIVATE))
    result: ToolCall = call
    return result


def assembled_message(content: str | None, reasoning: str | None, tool_calls: list[ToolCall] | None) -> Message:
    """A parsed assistant message (see ``_assembled``)."""
    fields = {
        "role": "assistant",
        "content": content,
        "reasoning_content": reasoning,
        "tool_calls": tool_calls,
        "tool_call_id": None,
        "name": None,
    }
    message: Message = _assembled(Message, fields, {})
    return message


_FUNCTION_PRIVATE = _private_defaults(FunctionCall)
_CALL_PRIVATE = _private_defaults(ToolCall)
