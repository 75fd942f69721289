"""``chatcodec parse`` and ``chatcodec stream``: raw completion text in, OpenAI JSON out."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import chatcodec
from chatcodec.cli import main

QWEN_COMPLETION = (
    "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
)
QWEN_MESSAGE = {
    "role": "assistant",
    "content": "Let me check.",
    "reasoning_content": "The user wants the weather.",
    "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
}
DEEPSEEK_COMPLETION = "Two plus two is four.</think>It is **4**.<｜end▁of▁sentence｜>"
DEEPSEEK_MESSAGE = {"role": "assistant", "content": "It is **4**.", "reasoning_content": "Two plus two is four."}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if "tool_calls" in out:
        calls = out["tool_calls"]
        assert all(call["id"].startswith("call_") for call in calls)
        out["tool_calls"] = [{k: v for k, v in call.items() if k != "id"} for call in calls]
    return out


def accumulate(chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """The message an OpenAI client builds from the chunks (see tests/test_openai.py)."""
    message: dict[str, Any] = {"role": None, "content": ""}
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in chunks:
        (choice,) = chunk["choices"]
        delta = choice["delta"]
        message["role"] = delta.get("role", message["role"])
        message["content"] += delta.get("content") or ""
        if "reasoning_content" in delta:
            message["reasoning_content"] = message.get("reasoning_content", "") + delta["reasoning_content"]
        for fragment in delta.get("tool_calls") or []:
            call = calls.setdefault(fragment["index"], {"type": "function", "function": {"name": "", "arguments": ""}})
            call["function"]["name"] += fragment.get("function", {}).get("name") or ""
            call["function"]["arguments"] += fragment.get("function", {}).get("arguments") or ""
        finish = choice["finish_reason"] or finish
    if calls:
        message["content"] = message["content"] or None
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message, finish


@pytest.fixture
def qwen_file(tmp_path: Path) -> Path:
    path = tmp_path / "completion.txt"
    path.write_text(QWEN_COMPLETION, encoding="utf-8")
    return path


def set_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    # A binary-backed stdin like the real one, so that the exact-bytes path is what runs.
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


# -- parse ---------------------------------------------------------------------------------------


def test_parse_a_file(qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["parse", "--template", "qwen3", str(qwen_file)], capsys)
    assert code == 0 and err == ""
    assert without_ids(json.loads(out)) == QWEN_MESSAGE
    assert out.startswith('{\n  "role": "assistant"')  # pretty-printed


def test_parse_stdin_keeps_text_exactly(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    set_stdin(monkeypatch, "Zeile 1\r\nZeile 2 «ü»<|im_end|>")
    code, out, err = run_cli(["parse", "-t", "qwen3", "-"], capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == {"role": "assistant", "content": "Zeile 1\r\nZeile 2 «ü»"}
    assert "«ü»" in out  # ensure_ascii=False


def test_parse_with_a_prompt_that_opens_reasoning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("<｜begin▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜><think>", encoding="utf-8")
    completion = tmp_path / "completion.txt"
    completion.write_text(DEEPSEEK_COMPLETION, encoding="utf-8")
    code, out, _ = run_cli(["parse", "-t", "deepseek", "--prompt", str(prompt), str(completion)], capsys)
    assert code == 0 and json.loads(out) == DEEPSEEK_MESSAGE
    # Without the prompt, the text before </think> is recognised as reasoning once </think> comes...
    code, out, _ = run_cli(["parse", "-t", "deepseek", str(completion)], capsys)
    assert code == 0 and json.loads(out) == DEEPSEEK_MESSAGE
    # ...and --reasoning says what the prompt would have.
    code, out, _ = run_cli(["parse", "-t", "deepseek", "--reasoning", str(completion)], capsys)
    assert code == 0 and json.loads(out) == DEEPSEEK_MESSAGE


def test_parse_reports_diagnostics_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stdin(monkeypatch, "Hi<|im_end|>junk\nmore")
    code, out, err = run_cli(["parse", "-t", "qwen3"], capsys)
    assert code == 0
    assert json.loads(out) == {"role": "assistant", "content": "Hi"}
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("chatcodec: warning: unexpected_text at character 12: ")


def test_parse_with_tools_keeps_unknown_calls_as_text(
    tmp_path: Path, qwen_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "get_time"}}]), encoding="utf-8")
    code, out, err = run_cli(["parse", "-t", "qwen3", "--tools", str(tools), str(qwen_file)], capsys)
    assert code == 0
    message = json.loads(out)
    assert "tool_calls" not in message and message["content"].endswith("</tool_call>")
    assert "warning: unknown_tool" in err
    tools.write_text(json.dumps({"tools": [{"type": "function", "function": {"name": "get_weather"}}]}))
    code, out, err = run_cli(["parse", "-t", "qwen3", "--tools", str(tools), str(qwen_file)], capsys)
    assert code == 0 and err == "" and without_ids(json.loads(out)) == QWEN_MESSAGE


def test_parse_strict(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    set_stdin(monkeypatch, '<tool_call>\n{"name": "f", "arguments": {"a": }}\n</tool_call><|im_end|>')
    code, out, err = run_cli(["parse", "-t", "qwen3", "--strict"], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("chatcodec: error: ")
    assert "at character" in err


def test_parse_response(qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["parse", "-t", "qwen3", "--response", "--model", "qwen3-8b", str(qwen_file)], capsys)
    assert code == 0
    response = json.loads(out)
    assert response["object"] == "chat.completion" and response["model"] == "qwen3-8b"
    assert response["choices"][0]["finish_reason"] == "tool_calls"
    assert without_ids(response["choices"][0]["message"]) == QWEN_MESSAGE
    openai = pytest.importorskip("openai")
    openai.types.chat.ChatCompletion.model_validate(response)


def test_parse_reasoning_field(qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["parse", "-t", "qwen3", "--reasoning-field", "reasoning", str(qwen_file)], capsys)
    assert code == 0
    assert json.loads(out)["reasoning"] == QWEN_MESSAGE["reasoning_content"]


# -- stream --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["1", "4", "1000"])
def test_stream_lines_accumulate_to_the_message(
    qwen_file: Path, capsys: pytest.CaptureFixture[str], size: str
) -> None:
    code, out, err = run_cli(["stream", "-t", "qwen3", "--chunk", size, str(qwen_file)], capsys)
    assert code == 0 and err == ""
    chunks = [json.loads(line) for line in out.splitlines()]
    assert all(chunk["object"] == "chat.completion.chunk" and chunk["model"] == "qwen3" for chunk in chunks)
    assert len({chunk["id"] for chunk in chunks}) == 1
    message, finish = accumulate(chunks)
    assert message == QWEN_MESSAGE and finish == "tool_calls"
    openai = pytest.importorskip("openai")
    for chunk in chunks:
        openai.types.chat.ChatCompletionChunk.model_validate(chunk)


def test_stream_default_chunk_size_is_four(qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, default, _ = run_cli(["stream", "-t", "qwen3", str(qwen_file)], capsys)
    _, four, _ = run_cli(["stream", "-t", "qwen3", "--chunk", "4", str(qwen_file)], capsys)
    _, five, _ = run_cli(["stream", "-t", "qwen3", "--chunk", "5", str(qwen_file)], capsys)

    def deltas(out: str) -> list[Any]:
        return [json.loads(line)["choices"][0]["delta"].get("reasoning_content") for line in out.splitlines()]

    assert deltas(default) == deltas(four) != deltas(five)


def test_stream_sse(qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["stream", "-t", "qwen3", "--sse", "--model", "m", str(qwen_file)], capsys)
    assert code == 0
    frames = out.split("\n\n")
    assert frames[-1] == "" and frames[-2] == "data: [DONE]"
    assert all(frame.startswith("data: {") and "\n" not in frame for frame in frames[:-2])
    chunks = [json.loads(frame[len("data: ") :]) for frame in frames[:-2]]
    message, finish = accumulate(chunks)
    assert message == QWEN_MESSAGE and finish == "tool_calls" and chunks[0]["model"] == "m"


def test_stream_with_reasoning_and_diagnostics(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_stdin(monkeypatch, DEEPSEEK_COMPLETION + "tail")
    code, out, err = run_cli(["stream", "-t", "deepseek", "--reasoning", "--chunk", "3"], capsys)
    assert code == 0
    message, finish = accumulate([json.loads(line) for line in out.splitlines()])
    assert message == DEEPSEEK_MESSAGE and finish == "stop"
    assert err.splitlines() == [
        "chatcodec: warning: unexpected_text at character "
        f"{len(DEEPSEEK_COMPLETION)}: text after the end of the message; kept as an unparsed span"
    ]


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["parse", "-t", "no-such-template", "FILE"],
        ["parse", "-t", "qwen3", "/no/such/file.txt"],
        ["parse", "-t", "llama3_hermes", "--reasoning", "FILE"],
        ["parse", "-t", "qwen3", "--tools", "FILE", "FILE"],  # the tools file is not JSON
        ["parse", "FILE"],  # --template missing
        ["stream", "-t", "qwen3", "--chunk", "0", "FILE"],
        ["stream", "-t", "qwen3", "--chunk", "many", "FILE"],
    ],
)
def test_errors_are_one_line_and_exit_2(argv: list[str], qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(qwen_file) if arg == "FILE" else arg for arg in argv]
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own usage errors
        code = exit.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "error: " in err and "Traceback" not in err


def test_tools_file_must_be_a_list(tmp_path: Path, qwen_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('{"name": "get_weather"}', encoding="utf-8")
    code, _, err = run_cli(["parse", "-t", "qwen3", "--tools", str(tools), str(qwen_file)], capsys)
    assert code == 2 and err == "chatcodec: error: the tools file must hold a JSON list of tool definitions\n"


def test_subprocess_stream_from_stdin() -> None:
    src = Path(chatcodec.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "chatcodec", "stream", "-t", "qwen3", "--sse", "--chunk", "7", "-"],
        input=QWEN_COMPLETION.encode("utf-8"),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    text = done.stdout.decode("utf-8")
    assert text.endswith("data: [DONE]\n\n")
    chunks = [json.loads(frame[len("data: ") :]) for frame in text.split("\n\n")[:-2]]
    assert accumulate(chunks) == (QWEN_MESSAGE, "tool_calls")
    failed = subprocess.run(
        [sys.executable, "-m", "chatcodec", "parse", "-t", "qwen3", "--strict", "-"],
        input=b"Hi<|im_end|>junk",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert failed.returncode == 2 and failed.stdout == b""
    assert failed.stderr.decode().count("\n") == 1 and b"Traceback" not in failed.stderr


def test_parse_with_reasoning_tags_the_template_never_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "plain.jinja"
    template.write_text(
        "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
        encoding="utf-8",
    )
    completion = tmp_path / "out.txt"
    completion.write_text("<think>Two steps.</think>Done.<|end|>", encoding="utf-8")
    code, out, err = run_cli(["parse", "-t", str(template), str(completion)], capsys)
    assert code == 0 and json.loads(out)["content"] == "<think>Two steps.</think>Done."
    code, out, err = run_cli(["parse", "-t", str(template), "--reasoning-tags", "<think>", "</think>", str(completion)], capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == {"role": "assistant", "content": "Done.", "reasoning_content": "Two steps."}
