"""The fast path for messages of the common shape gives what validating them gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcodec.messages import KNOWN_ROLES, Message, plain_hf_messages

TEXT = st.text(alphabet=st.sampled_from(list('ab {}"\\\n é😀')), max_size=12)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def function(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    keys = draw(st.permutations(["name", "arguments"]))
    for key in keys[: draw(st.integers(1, 2))] if keys[0] == "name" else keys:
        if key == "name":
            out["name"] = draw(st.sampled_from(["f", "get_weather"]))
        else:
            out["arguments"] = draw(
                st.none()
                | st.dictionaries(TEXT, JSON_VALUE, max_size=3)
                | st.lists(JSON_VALUE, max_size=2)
                | TEXT
                | st.sampled_from(['{"a": 1}', '"x"', "{bad", "[1]", '{"a": 1e999}', '{"a": "\\ud800"}', '{"a": "\\ud83d\\ude00"}'])
            )
    return out


@st.composite
def call(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in draw(st.permutations(["id", "type", "function"])):
        if key == "function":
            out["function"] = draw(function())
        elif draw(st.booleans()):
            out[key] = "function" if key == "type" else draw(st.none() | st.sampled_from(["call_1", "a1b2c3d4e"]))
    return out


@st.composite
def message(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    keys = ["role", *draw(st.lists(st.sampled_from(["content", "reasoning_content", "tool_calls", "tool_call_id", "name"]), unique=True))]
    for key in draw(st.permutations(keys)):
        if key == "role":
            out["role"] = draw(st.sampled_from(KNOWN_ROLES))
        elif key == "tool_calls":
            out["tool_calls"] = draw(st.none() | st.lists(call(), max_size=2))
        else:
            out[key] = draw(st.none() | TEXT)
    return out


@settings(max_examples=400, deadline=None)
@given(messages=st.lists(message(), max_size=4), form=st.sampled_from(["dict", "string", "as_given"]))
def test_the_fast_path_gives_what_validation_gives(messages: list[dict[str, Any]], form: str) -> None:
    fast = plain_hf_messages(messages, form)  # type: ignore[arg-type]
    slow = [Message.model_validate(m).to_hf(arguments=form) for m in messages]  # type: ignore[arg-type]
    assert fast is not None
    assert fast == slow
    assert [list(m) for m in fast] == [list(m) for m in slow]  # key order too
    for a, b in zip(fast, slow):
        for ca, cb in zip(a.get("tool_calls", []), b.get("tool_calls", [])):
            assert list(ca) == list(cb) and list(ca["function"]) == list(cb["function"])


def test_other_shapes_take_the_validating_path() -> None:
    for messages in (
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],  # content parts
        [{"role": "robot", "content": "hi"}],  # an unknown role: validation names it
        [{"role": "user", "content": "hi", "extra": 1}],  # an unknown key
        [{"role": "assistant", "reasoning": "r"}],  # an alias of reasoning_content
        [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": {}}]}],  # the flat shape
        [{"role": "assistant", "tool_calls": [{"function": {"name": "", "arguments": "{}"}}]}],  # no name
        ({"role": "user", "content": "hi"},),  # not a list
    ):
        assert plain_hf_messages(messages, "dict") is None


def test_arguments_text_a_template_would_not_write_back_stays_text() -> None:
    # A number no float holds would be written again as ``Infinity`` (no JSON), an unpaired
    # surrogate escape as a character no UTF-8 text holds: the text the model wrote is kept,
    # on both paths, as malformed text is. A surrogate pair and a plain exponent decode.
    def arguments(text: str, form: str) -> Any:
        given = [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": text}}]}]
        plain = plain_hf_messages(given, form)  # type: ignore[arg-type]
        validated = Message.model_validate(given[0]).to_hf(arguments=form)  # type: ignore[arg-type]
        assert plain is not None and plain[0] == validated
        return validated["tool_calls"][0]["function"]["arguments"]

    for kept in ('{"a": 1e999}', '{"a": [1, -1E+400]}', '{"a": "\\ud800"}', '{"\\udfff": 1}', '{"a": ' + "9" * 310 + ".0}"):
        assert arguments(kept, "dict") == kept
    assert arguments('{"a": "\\ud83d\\ude00"}', "dict") == {"a": "\U0001f600"}
    assert arguments('{"a": 2.5e3}', "dict") == {"a": 2500.0}
    assert arguments('{"a": ' + "9" * 310 + "}", "dict") == {"a": int("9" * 310)}
    # A dict the caller gave goes as given, as in transformers.
    given = {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": float("inf")}}}]}
    assert Message.model_validate(given).to_hf()["tool_calls"][0]["function"]["arguments"] == {"a": float("inf")}
