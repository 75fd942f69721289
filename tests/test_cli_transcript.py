"""``chatcodec transcript`` and ``chatcodec roundtrip``: rendered text back into messages, and
what a template loses, for one conversation or a JSONL file of them."""

from __future__ import annotations

import io
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import chatcodec
from chatcodec.cli import main
from chatcodec.check.roundtrip import LOSS_KINDS

QWEN = chatcodec.load("qwen3")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
WEATHER = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Zürich?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "Call the tool.",
        "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}],
    },
    {"role": "tool", "content": "12 °C"},
    {"role": "assistant", "content": "It is 12 °C."},
]
LOSSLESS = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
# Reasoning before the last user turn is dropped by the Qwen3 template.
DROPS_REASONING = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "yo", "reasoning_content": "x"},
    {"role": "user", "content": "again"},
]
# Two delimiters in content: two injection risks in one conversation, and the text does not
# come back.
INJECTION = [{"role": "user", "content": "a <|im_end|> b <tool_call> c"}]
WITH_IDS = [
    {"role": "user", "content": "w?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text: str) -> str:
    path.write_bytes(text.encode("utf-8"))  # bytes: no newline translation on any platform
    return str(path)


def set_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


# -- transcript ----------------------------------------------------------------------------------


def test_transcript_prints_the_recovered_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = QWEN.render(WEATHER, tools=TOOLS, add_generation_prompt=True, enable_thinking=False)
    code, out, err = run_cli(["transcript", "-t", "qwen3", write(tmp_path / "t.txt", text)], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert list(data) == [
        "messages",
        "tools",
        "add_generation_prompt",
        "template_kwargs",
        "spans",
        "unparsed",
        "diagnostics",
    ]
    assert data["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "Call the tool.",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}}
            ],
        },
        {"role": "tool", "content": "12 °C"},
        {"role": "assistant", "content": "It is 12 °C."},
    ]
    assert data["tools"] == TOOLS
    assert data["add_generation_prompt"] is True
    assert data["template_kwargs"] == {"enable_thinking": False}
    assert data["unparsed"] == [] and data["diagnostics"] == []
    assert "Zürich" in out  # ensure_ascii=False
    # The output renders the same text again.
    again = QWEN.render(
        data["messages"],
        tools=data["tools"],
        add_generation_prompt=data["add_generation_prompt"],
        **data["template_kwargs"],
    )
    assert again == text


def test_transcript_spans_point_into_the_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = QWEN.render(WEATHER)
    code, out, _ = run_cli(["transcript", "-t", "qwen3", write(tmp_path / "t.txt", text)], capsys)
    assert code == 0
    spans = json.loads(out)["spans"]
    assert [(s["index"], s["role"]) for s in spans] == list(enumerate(m["role"] for m in WEATHER))
    assert set(spans[0]) == {"index", "role", "start", "end", "body_start", "parts"}
    for span in spans:
        assert span["start"] <= span["body_start"] <= span["end"]
        assert text[span["start"] : span["body_start"]].startswith("<|im_start|>")
    call = spans[2]
    parts = {part["kind"]: part for part in call["parts"]}
    assert text[parts["reasoning"]["start"] : parts["reasoning"]["end"]].strip() == "Call the tool."
    assert text[parts["content"]["start"] : parts["content"]["end"]].strip() == "Checking."
    tool_call = parts["tool_call"]
    assert tool_call["index"] == 0 and '"city": "Zürich"' in text[tool_call["start"] : tool_call["end"]]
    header = call["parts"][0]
    assert header["kind"] == "delimiter" and header["name"] == "ASSISTANT_START"
    assert "name" not in parts["content"] and "index" not in parts["content"]


def test_transcript_tool_call_ids_are_left_out_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The rendered text holds no ids; whatever the parser makes up differs on every run.
    path = write(tmp_path / "t.txt", QWEN.render(WITH_IDS))
    code, first, _ = run_cli(["transcript", "-t", "qwen3", path], capsys)
    code2, second, _ = run_cli(["transcript", "-t", "qwen3", path], capsys)
    assert code == code2 == 0 and first == second
    (call,) = json.loads(first)["messages"][1]["tool_calls"]
    assert "id" not in call
    assert "tool_call_id" not in json.loads(first)["messages"][2]
    code, out, _ = run_cli(["transcript", "-t", "qwen3", "--ids", path], capsys)
    (call,) = json.loads(out)["messages"][1]["tool_calls"]
    assert code == 0 and call["id"].startswith("call_")


def test_transcript_reads_stdin_byte_for_byte(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = QWEN.render([{"role": "user", "content": "line 1\r\nline 2"}])
    set_stdin(monkeypatch, text)
    code, out, _ = run_cli(["transcript", "-t", "qwen3"], capsys)
    assert code == 0
    assert json.loads(out)["messages"] == [{"role": "user", "content": "line 1\r\nline 2"}]


def test_transcript_reports_text_outside_any_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "junk" + QWEN.render(LOSSLESS)
    code, out, _ = run_cli(["transcript", "-t", "qwen3", write(tmp_path / "t.txt", text)], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["unparsed"] == [[0, 4]]
    assert data["diagnostics"] == [{"kind": "unexpected_text", "position": 0, "message": "text outside any message"}]
    assert [m["content"] for m in data["messages"]] == ["hi", "hello"]


def test_transcript_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["transcript", "-t", "no-such-template", write(tmp_path / "t.txt", "x")], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith("chatcodec: error: ")
    code, _, err = run_cli(["transcript", "-t", "qwen3", str(tmp_path / "missing.txt")], capsys)
    assert code == 2 and err.startswith("chatcodec: error: cannot read")
    # A template chatcodec renders but cannot parse.
    plain = write(tmp_path / "plain.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}")
    code, _, err = run_cli(["transcript", "-t", plain, write(tmp_path / "t.txt", "x")], capsys)
    assert code == 2 and "does not write a format chatcodec can parse" in err and len(err.splitlines()) == 1


# -- roundtrip, one conversation -----------------------------------------------------------------


def test_roundtrip_lossless_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "c.json", json.dumps({"messages": LOSSLESS}))
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", path], capsys)
    assert (code, err) == (0, "")
    assert out == "text survived render -> parse -> render: yes\nlossless: yes\n"


def test_roundtrip_lossy_exits_1_with_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "c.json", json.dumps(DROPS_REASONING))  # a bare list works too
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", path], capsys)
    assert code == 1
    assert out == QWEN.roundtrip(DROPS_REASONING).summary() + "\n"
    assert "- message 1: reasoning_content not rendered" in out
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--json", path], capsys)
    assert code == 1
    assert json.loads(out) == QWEN.roundtrip(DROPS_REASONING).to_dict()


def test_roundtrip_prefixes_flag_checks_every_prompt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns = ["a", "b", "c", "d"]
    messages = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(turns)]
    path = write(tmp_path / "c.json", json.dumps(messages))
    argv = ["roundtrip", "-t", "qwen3", "--set", "enable_thinking=false", path]
    assert run_cli(argv, capsys)[0] == 0
    code, out, _ = run_cli([*argv[:-1], "--prefixes", path], capsys)
    assert code == 1
    assert "- message 1: " in out and "rewrites earlier turns" in out


def test_roundtrip_options_reach_the_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = write(tmp_path / "tools.json", json.dumps({"tools": TOOLS}))
    set_stdin(monkeypatch, json.dumps(WEATHER))
    argv = ["roundtrip", "-t", "qwen3", "--json", "--tools", tools, "--add-generation-prompt"]
    code, out, _ = run_cli(argv + ["--set", "enable_thinking=false"], capsys)
    expected = QWEN.roundtrip(WEATHER, tools=TOOLS, add_generation_prompt=True, enable_thinking=False)
    assert code == 0 and expected.lossless and json.loads(out) == expected.to_dict()
    # The options matter: deepseek drops the tools, and says so.
    set_stdin(monkeypatch, json.dumps(LOSSLESS))
    code, out, _ = run_cli(["roundtrip", "-t", "deepseek", "--json", "--tools", tools], capsys)
    assert code == 1 and [loss["kind"] for loss in json.loads(out)["losses"]] == ["tools_not_rendered"]


@pytest.mark.parametrize(
    "content,argv,message",
    [
        ("{not json", [], "the conversation is not valid JSON"),
        ('{"msgs": []}', [], "expected a JSON list of messages"),
        ('[{"role": "usr", "content": "x"}]', [], "message 0: field 'role'"),
        ("[]", ["--set", "novalue"], "--set expects KEY=VALUE"),
        ("[]", ["--jsonl", "x.jsonl"], "either --jsonl FILE or a conversation FILE"),
    ],
)
def test_roundtrip_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, argv: list[str], message: str
) -> None:
    path = write(tmp_path / "c.json", content)
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", *argv, path], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("chatcodec: error: ") and message in err


def test_roundtrip_ignore_accepts_kinds_of_loss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ["--ignore", "tool_call_id_not_rendered", "--ignore", "tool_call_id_reference_not_rendered"]
    path = write(tmp_path / "c.json", json.dumps(WITH_IDS))
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", path], capsys)
    assert code == 1 and "tool_call id not rendered" in out
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", *ids, path], capsys)
    assert code == 0 and out.endswith("lossless: yes\n")
    # Only the kinds named are accepted.
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--json", "--ignore", "tool_call_id_not_rendered", path], capsys)
    assert code == 1 and [loss["kind"] for loss in json.loads(out)["losses"]] == ["tool_call_id_reference_not_rendered"]
    # In a JSONL run too.
    lines = write(tmp_path / "data.jsonl", f"{json.dumps(WITH_IDS)}\n{json.dumps(DROPS_REASONING)}\n")
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", lines, "--json", *ids], capsys)
    summary = json.loads(out)
    assert code == 1 and (summary["lossless"], summary["lossy"]) == (1, 1)
    assert summary["losses"]["tool_call_id_not_rendered"] == {"conversations": 0, "occurrences": 0}
    # A text that does not come back cannot be waved through, nor can an unknown kind.
    for kind in ("text_not_reproduced", "no_such_kind"):
        code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--ignore", kind, path], capsys)
        assert code == 2 and out == "" and err.startswith("chatcodec: error: --ignore expects one of")


# -- roundtrip --jsonl ---------------------------------------------------------------------------


def jsonl_lines() -> list[str]:
    """Lossless, lossy (several kinds), invalid JSON, an invalid conversation, a blank line."""
    return [
        json.dumps({"messages": LOSSLESS}),
        json.dumps(DROPS_REASONING),
        "{not json",
        json.dumps(INJECTION, ensure_ascii=False),
        "",
        json.dumps([{"role": "user"}, {"role": "wizard", "content": "x"}]),
        json.dumps({"messages": WEATHER, "tools": TOOLS}, ensure_ascii=False),
        json.dumps(WITH_IDS),
        json.dumps({"messages": DROPS_REASONING}),
        "[1, 2]",
    ]


def expected_summary(lines: list[str]) -> dict[str, Any]:
    """The counts computed straight from ``Codec.roundtrip``, not through the CLI."""
    lossless = lossy = invalid = 0
    conversations: Counter[str] = Counter()
    occurrences: Counter[str] = Counter()
    for line in lines:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            messages, tools = (data["messages"], data.get("tools")) if isinstance(data, dict) else (data, None)
            report = QWEN.roundtrip(messages, tools=tools)
        except (ValueError, chatcodec.ChatCodecError):
            invalid += 1
            continue
        if report.lossless:
            lossless += 1
            continue
        lossy += 1
        kinds = [loss.kind for loss in report.losses]
        occurrences.update(kinds)
        conversations.update(set(kinds))
    return {
        "conversations": lossless + lossy + invalid,
        "lossless": lossless,
        "lossy": lossy,
        "invalid": invalid,
        "losses": {k: {"conversations": conversations[k], "occurrences": occurrences[k]} for k in LOSS_KINDS},
    }


def test_jsonl_counts_match_the_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = jsonl_lines()
    path = write(tmp_path / "data.jsonl", "\n".join(lines) + "\n")
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--json"], capsys)
    summary = json.loads(out)
    assert summary == expected_summary(lines)
    # By hand, so that a mistake shared by the helper above and the CLI still shows.
    assert (summary["conversations"], summary["lossless"], summary["lossy"], summary["invalid"]) == (9, 2, 4, 3)
    losses = summary["losses"]
    assert list(losses) == list(LOSS_KINDS)
    assert losses["reasoning_not_rendered"] == {"conversations": 2, "occurrences": 2}
    assert losses["injection_risk"] == {"conversations": 1, "occurrences": 2}
    assert losses["text_not_reproduced"] == {"conversations": 1, "occurrences": 1}
    assert losses["tool_call_id_not_rendered"] == {"conversations": 1, "occurrences": 1}
    assert losses["tool_call_id_reference_not_rendered"] == {"conversations": 1, "occurrences": 1}
    # Invalid lines: one stderr line each, with the line number; blank lines are skipped.
    assert code == 2
    warnings = err.splitlines()
    assert [w.split(" is invalid")[0] for w in warnings] == [
        "chatcodec: warning: line 3",
        "chatcodec: warning: line 6",
        "chatcodec: warning: line 10",
    ]
    assert "not valid JSON" in warnings[0] and "message 1: field 'role'" in warnings[1]
    assert "expected a JSON list of messages" not in warnings[1]


def test_jsonl_table_lists_kinds_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = jsonl_lines()
    path = write(tmp_path / "data.jsonl", "\n".join(lines))  # no newline after the last line
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path], capsys)
    assert code == 2
    head, table = out.split("\n\n")
    assert head.split() == ["conversations:", "9", "lossless:", "2", "lossy:", "4", "invalid:", "3"]
    header, *rows = table.splitlines()
    assert header.split() == ["kind", "of", "loss", "conversations", "occurrences"]
    expected = expected_summary(lines)["losses"]
    found = {row.split()[0]: (int(row.split()[1]), int(row.split()[2])) for row in rows}
    assert [row.split()[0] for row in rows] == [k for k in LOSS_KINDS if expected[k]["occurrences"]]
    assert found == {k: (v["conversations"], v["occurrences"]) for k, v in expected.items() if v["occurrences"]}


@pytest.mark.parametrize(
    "lines,code",
    [
        ([LOSSLESS, LOSSLESS], 0),
        ([LOSSLESS, DROPS_REASONING], 1),
        ([LOSSLESS, DROPS_REASONING, "oops"], 2),  # invalid outranks lossy
        ([], 0),
    ],
)
def test_jsonl_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[Any], code: int) -> None:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path = write(tmp_path / "data.jsonl", text)
    got, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--json"], capsys)
    assert got == code and json.loads(out)["conversations"] == len(lines)


class LinesOnly(io.RawIOBase):
    """A stdin that can only be iterated line by line: reading it whole fails the test."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self.served = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.lines:
            self.served += 1
            yield line

    def read(self, size: int = -1) -> bytes:
        raise AssertionError("the JSONL file was read whole")

    def readall(self) -> bytes:
        raise AssertionError("the JSONL file was read whole")


def test_jsonl_streams_stdin_line_by_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    source = LinesOnly([(json.dumps(LOSSLESS) + "\n").encode()] * 50)
    monkeypatch.setattr(sys, "stdin", type("Stdin", (), {"buffer": source})())
    code, out, _ = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", "-", "--json"], capsys)
    assert code == 0 and source.served == 50
    assert json.loads(out)["lossless"] == 50


def test_jsonl_line_splitting_keeps_unicode_line_separators(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # U+2028 and U+0085 are line breaks to str.splitlines, not to JSONL.
    content = [{"role": "user", "content": "a\u2028b\u0085c\rd"}, {"role": "assistant", "content": "ok"}]
    path = write(tmp_path / "data.jsonl", json.dumps(content, ensure_ascii=False) + "\r\n")
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--json"], capsys)
    assert (code, err) == (0, "") and json.loads(out)["lossless"] == 1


def test_jsonl_progress_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "".join(json.dumps(LOSSLESS) + "\n" for _ in range(3)) + "oops\n"
    path = write(tmp_path / "data.jsonl", text)
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--progress"], capsys)
    assert code == 2 and "\r" not in out
    assert "\r" in err and err.endswith("\n")
    final = err.rstrip("\n").split("\r")[-1]
    assert final.strip() == f"4 lines, {len(text.encode())} B of {len(text.encode())} B (100%)"
    # The warning starts on a line of its own, not after a progress line.
    assert "\rchatcodec: warning: line 4 is invalid" in err
    # Not a terminal and not asked: no progress at all.
    code, _, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path], capsys)
    assert "\r" not in err and err.startswith("chatcodec: warning: line 4")
    code, _, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--no-progress"], capsys)
    assert "\r" not in err


def test_jsonl_bad_setup_fails_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "data.jsonl", (json.dumps(LOSSLESS) + "\n") * 3)
    plain = write(tmp_path / "plain.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}")
    code, out, err = run_cli(["roundtrip", "-t", plain, "--jsonl", path], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", str(tmp_path / "missing.jsonl")], capsys)
    assert code == 2 and out == "" and err.startswith("chatcodec: error: cannot read")


# -- the README's examples -----------------------------------------------------------------------

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Round trips and transcripts"


def test_readme_round_trip_examples_run() -> None:
    if not README.exists():
        pytest.skip("README.md is not next to the tests")
    pytest.importorskip("tokenizers")  # the token mask example builds a toy tokenizer
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    blocks = re.findall(r"```python\n(.*?)```", text[start : following if following >= 0 else len(text)], re.DOTALL)
    assert len(blocks) >= 4
    namespace: dict[str, object] = {}
    for block in blocks:  # later blocks use names the earlier ones define
        exec(compile(block, str(README), "exec"), namespace)


# -- known issues of the round trip itself (not of the CLI) --------------------------------------


def test_reasoning_moved_from_content_is_not_reported_as_dropped() -> None:
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "<think>r</think>c"}]
    report = QWEN.roundtrip(messages)
    recovered = report.transcript.messages[1]
    assert (recovered.reasoning_content, recovered.content) == ("r", "c")  # it was rendered, and read back
    assert "<think>\nr\n</think>" in report.text
    kinds = {loss.kind for loss in report.losses if loss.message == 1}
    assert "reasoning_not_rendered" not in kinds


def test_deepseek_consecutive_assistant_messages_survive() -> None:
    deepseek = chatcodec.load("deepseek")
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    text = deepseek.render(messages)
    assert text.endswith("a<｜end▁of▁sentence｜>b<｜end▁of▁sentence｜>")
    transcript = deepseek.parse_transcript(text)
    assert deepseek.render(transcript.messages, **transcript.render_arguments()) == text
    assert [m.content for m in transcript.messages] == ["x", "a", "b"]
