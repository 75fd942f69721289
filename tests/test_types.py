"""The package's type annotations hold (mypy), so they stay true as the code changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_errors() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--no-error-summary", str(ROOT / "src" / "chatcodec")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_parsed_messages_are_the_objects_model_construct_gives() -> None:
    """The parser builds its messages without pydantic's per-field lookups; they must be the
    same objects ``model_construct`` builds, down to the fields set and the private state."""
    from chatcodec.messages import FunctionCall, Message, ToolCall, assembled_call, assembled_message

    def state(model: object) -> tuple[object, ...]:
        return tuple(getattr(model, key) for key in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"))

    call = assembled_call("call_1", "f", '{"a": 1}')
    expected_call = ToolCall.model_construct(
        id="call_1", type="function", function=FunctionCall.model_construct(name="f", arguments='{"a": 1}')
    )
    assert state(call.function) == state(expected_call.function)
    assert state(call)[1:] == state(expected_call)[1:] and call == expected_call
    message = assembled_message(None, "hm", [call])
    expected = Message.model_construct(
        role="assistant", content=None, reasoning_content="hm", tool_calls=[expected_call], tool_call_id=None, name=None
    )
    assert state(message)[1:] == state(expected)[1:] and message == expected
    assert message.model_dump() == expected.model_dump()
    assert message.to_openai() == expected.to_openai()
    # Each object has its own private state.
    assert message.__pydantic_private__ is not assembled_message("x", None, None).__pydantic_private__
