"""Bad input to the command line: one line on stderr and exit code 2, never a traceback.

Run as a real process, with a C locale, so that the streams' encoding is the command's to set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONVERSATION = '[{"role": "user", "content": "hi"}]'


def run(args: list[str], stdin: str, env_locale: str = "C") -> subprocess.CompletedProcess[bytes]:
    env = {"LC_ALL": env_locale, "LANG": env_locale, "PYTHONIOENCODING": ""}
    return subprocess.run(
        [sys.executable, "-m", "chatcodec", *args], input=stdin.encode("utf-8"), capture_output=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    "args,stdin,expected",
    [
        (["render", "-t", "qwen3", "--set", "tools=[]"], CONVERSATION, "--set tools=... is not a template variable here"),
        (["render", "-t", "qwen3", "--set", "add_generation_prompt=true"], CONVERSATION, "use --add-generation-prompt"),
        (["render", "-t", "qwen3", "--set", "two words=1"], CONVERSATION, "a template variable is a name"),
        (["render", "-t", "qwen3"], "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (["render", "-t", "qwen3"], '[{"role": "user", "content": "\\ud800"}]', "UTF-8 cannot write"),
        (["render", "-t", "qwen3"], "{not json", "is not valid JSON"),
        (["render", "-t", "qwen3"], '[{"role": "user", "content": ' + "9" * 5000 + "}]", "cannot be read"),
        (["render", "-t", "no/such/folder"], CONVERSATION, "template not found"),
    ],
    ids=["set tools", "set generation prompt", "set a bad name", "deep JSON", "lone surrogate", "bad JSON", "long number", "no template"],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], stdin: str, expected: str) -> None:
    result = run(args, stdin)
    err = result.stderr.decode("utf-8")
    assert result.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith("chatcodec: error: ") and expected in err
    assert "Traceback" not in err


def test_utf8_out_whatever_the_locale() -> None:
    result = run(["render", "-t", "qwen3"], '[{"role": "user", "content": "café 日本 😀"}]')
    assert result.returncode == 0, result.stderr
    assert "café 日本 😀" in result.stdout.decode("utf-8")


def test_a_bad_line_in_a_batch_is_counted_and_the_run_goes_on(tmp_path: Path) -> None:
    lines = [
        json.dumps({"messages": [{"role": "user", "content": "hi"}]}),
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"messages": [{"role": "user", "content": "\ud800"}]}),
        json.dumps({"messages": [{"role": "user", "content": "bye"}]}),
        '{"messages": [{"role": "user", "content": ' + "9" * 5000 + "}]}",  # past Python's digit limit
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    result = run(["roundtrip", "-t", "qwen3", "--jsonl", str(data), "--json"], "")
    assert "Traceback" not in result.stderr.decode("utf-8", "replace")
    summary = json.loads(result.stdout.decode("utf-8"))
    # The deep line and the long number are invalid; a lone surrogate in content is still a
    # conversation to check.
    assert (summary["conversations"], summary["invalid"], summary["lossless"]) == (5, 2, 3), summary
