"""``chatcodec render``, ``chatcodec templates`` and ``chatcodec demo``."""

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

REPO = Path(__file__).resolve().parents[1]

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Zürich?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"temp_c": 11}'},
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_json(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_templates_lists_the_bundled_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "templates") == (0, "deepseek\nllama3_hermes\nqwen3\n", "")


@pytest.mark.parametrize("name", ["qwen3", "deepseek", "llama3_hermes"])
def test_render_object_with_tools(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    path = write_json(tmp_path / "conversation.json", {"messages": MESSAGES, "tools": TOOLS})
    code, out, err = run(capsys, "render", "--template", name, "--add-generation-prompt", path)
    assert (code, err) == (0, "")
    # Exactly the rendered text: no newline added when stdout is not a terminal.
    assert out == chatcodec.load(name).render(MESSAGES, tools=TOOLS, add_generation_prompt=True)


def test_render_bare_list_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps([{"role": "user", "content": "Hi!"}])))
    code, out, err = run(capsys, "render", "-t", "qwen3", "--add-generation-prompt", "--set", "enable_thinking=false")
    assert (code, err) == (0, "")
    assert out == "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"


def test_dash_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(MESSAGES[:2])))
    code, out, _ = run(capsys, "render", "-t", "deepseek", "-")
    assert code == 0
    assert out == chatcodec.load("deepseek").render(MESSAGES[:2])


def test_tools_file_replaces_the_conversation_tools(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    conversation = write_json(tmp_path / "conversation.json", {"messages": MESSAGES[:2], "tools": []})
    for tools_file in (write_json(tmp_path / "list.json", TOOLS), write_json(tmp_path / "obj.json", {"tools": TOOLS})):
        code, out, _ = run(capsys, "render", "-t", "qwen3", "--tools", tools_file, conversation)
        assert code == 0
        assert out == chatcodec.load("qwen3").render(MESSAGES[:2], tools=TOOLS)
        assert '"name": "get_weather"' in out


def test_set_values_are_json_or_strings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    template = tmp_path / "vars.jinja"
    template.write_text("{{ flag is sameas true }} {{ count + 1 }} {{ label }} {{ items | length }}", encoding="utf-8")
    conversation = write_json(tmp_path / "c.json", MESSAGES[:2])
    sets = ["flag=true", "count=41", "label=plain text", 'items=["a", "b"]']
    code, out, _ = run(
        capsys, "render", "-t", str(template), *[arg for s in sets for arg in ("--set", s)], conversation
    )
    assert (code, out) == (0, "True 42 plain text 2")


def test_template_name_in_a_model_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "model"
    (folder / "additional_chat_templates").mkdir(parents=True)
    (folder / "chat_template.jinja").write_text("default", encoding="utf-8")
    (folder / "additional_chat_templates" / "rag.jinja").write_text("rag {{ messages | length }}", encoding="utf-8")
    conversation = write_json(tmp_path / "c.json", MESSAGES[:2])
    assert run(capsys, "render", "-t", str(folder), conversation)[1] == "default"
    assert run(capsys, "render", "-t", str(folder), "--template-name", "rag", conversation)[1] == "rag 2"


def error_cases(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """argv (conversation file last) and the expected one-line error."""
    good = write_json(tmp_path / "good.json", MESSAGES[:2])
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"messages": [', encoding="utf-8")
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('[{"role": "user", "content": "Zürich"}]'.encode("latin-1"))
    raising = tmp_path / "raising.jinja"
    raising.write_text("{{ raise_exception('no system messages, please') }}", encoding="utf-8")
    return {
        "bad JSON": (["-t", "qwen3", str(bad_json)], "the conversation is not valid JSON: Expecting value at line 1"),
        "not UTF-8": (["-t", "qwen3", str(latin1)], f"cannot read {latin1}: not UTF-8 text"),
        "missing file": (["-t", "qwen3", str(tmp_path / "nope.json")], "cannot read"),
        "wrong shape": (
            ["-t", "qwen3", write_json(tmp_path / "shape.json", {"role": "user"})],
            'expected a JSON list of messages or an object {"messages": [...], "tools": [...]}',
        ),
        "unknown template": (["-t", "qwen4", good], "unknown template 'qwen4'"),
        "invalid message": (
            ["-t", "qwen3", write_json(tmp_path / "role.json", [{"role": "robot", "content": "x"}])],
            "message 0: field 'role': unknown role 'robot'",
        ),
        "template raising": (
            ["-t", str(raising), good],
            "template 'raising' raised an error at line 1: no system messages, please",
        ),
        "bad --set": (["-t", "qwen3", "--set", "novalue", good], "--set expects KEY=VALUE, got 'novalue'"),
        "missing --template": ([good], "the following arguments are required: --template/-t"),
    }


ERROR_NAMES = [
    "bad JSON",
    "not UTF-8",
    "missing file",
    "wrong shape",
    "unknown template",
    "invalid message",
    "template raising",
    "bad --set",
    "missing --template",
]


@pytest.mark.parametrize("case", ERROR_NAMES)
def test_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    argv, expected = error_cases(tmp_path)[case]
    try:
        code = main(["render", *argv])
    except SystemExit as exited:  # argparse's own usage errors exit from inside
        code = int(exited.code or 0)
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert expected in err


def test_demo_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "demo")
    assert (code, err) == (0, "")
    for name in chatcodec.bundled_template_names():
        assert name in out


def test_console_entry_point_as_a_subprocess(tmp_path: Path) -> None:
    conversation = write_json(tmp_path / "c.json", {"messages": MESSAGES, "tools": TOOLS})
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, "-m", "chatcodec", "render", "-t", "llama3_hermes", "--add-generation-prompt"]
    done = subprocess.run([*command, conversation], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    expected = chatcodec.load("llama3_hermes").render(MESSAGES, tools=TOOLS, add_generation_prompt=True)
    assert done.stdout.decode("utf-8") == expected
    failed = subprocess.run([*command, "-"], input=b'[{"role": "user"', capture_output=True, env=env, timeout=60)
    assert failed.returncode == 2
    assert failed.stdout == b""
    assert failed.stderr.decode() == (
        "chatcodec: error: the conversation is not valid JSON: Expecting ',' delimiter at line 1 column 17\n"
    )


def test_render_in_a_child_process_with_a_deadline(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps(MESSAGES[:2]))
    code, out, _ = run(capsys, "render", "-t", "qwen3", "--timeout", "5", str(conversation))
    assert code == 0 and out == chatcodec.load("qwen3").render(MESSAGES[:2])
    slow = tmp_path / "slow.jinja"
    slow.write_text("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}")
    code, out, err = run(capsys, "render", "-t", str(slow), "--timeout", "0.5", str(conversation))
    assert (code, out) == (2, "")
    assert err == "chatcodec: error: slow: rendering took longer than the 0.5 s time limit\n"


@pytest.mark.parametrize("option, value", [("--timeout", "0"), ("--timeout", "soon"), ("--memory-mb", "-5")])
def test_isolation_limits_must_be_positive(capsys: pytest.CaptureFixture[str], option: str, value: str) -> None:
    with pytest.raises(SystemExit) as exited:  # argparse's own usage errors exit from inside
        main(["render", "-t", "qwen3", option, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {option}:" in err
