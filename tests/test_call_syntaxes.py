"""The README's table of call syntaxes, cell by cell, on the bundled template each row names.

A "yes" is checked by running the claim; a "no: reason" by checking that the claim indeed fails
and that the reason is the one the template tests give for it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import test_templates as corpus

import chatcodec
from chatcodec.formats.calls import CANDIDATES
from chatcodec.formats.named import NAMED

README = Path(__file__).resolve().parent.parent / "README.md"
TEMPLATES = Path(__file__).resolve().parent / "templates"
COLUMNS = ("call syntax", "as the model writes it", "models", "tested on", "stream", "one-shot", "transcript", "round trip")
# Syntaxes known but read in no bundled template yet (the README says why, below the table).
# Syntaxes no repository template writes as it stands (Hy3's tags spelled bare, as its preview
# tokenizer does: tested in test_recent_families.py on the Hy3 template with its suffix empty).
WITHOUT_A_ROW: set[str] = {"hunyuan_bare"}


def table_rows() -> list[dict[str, str]]:
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- call-syntaxes -->")[1].split("<!-- /call-syntaxes -->")[0]
    lines = [line for line in block.strip().splitlines() if line.startswith("|")]
    header = _cells(lines[0])
    assert tuple(header) == COLUMNS
    return [dict(zip(COLUMNS, _cells(line))) for line in lines[2:]]


def _cells(line: str) -> list[str]:
    # Split on pipes that are not escaped (``\|`` inside code spans).
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


ROWS = table_rows()


def _template(row: dict[str, str]) -> Path:
    return TEMPLATES / (row["tested on"].strip("`") + ".jinja")


def _reason(cell: str) -> str | None:
    """None for "yes", the reason for "no: reason"."""
    if cell == "yes":
        return None
    assert cell.startswith("no: "), cell
    return cell[len("no: ") :]


def test_every_call_syntax_has_a_row() -> None:
    names = [row["call syntax"].strip("`") for row in ROWS]
    known = {syntax.name for syntax in CANDIDATES} | {found.calls.name for found in NAMED if found.calls}
    assert len(names) == len(set(names))
    assert set(names) == known - WITHOUT_A_ROW


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["call syntax"].strip("`"))
def test_the_row_names_a_template_of_that_syntax(row: dict[str, str]) -> None:
    name = row["tested on"].strip("`")
    assert corpus.CALL_SYNTAX[name] == row["call syntax"].strip("`")
    assert corpus.codec(_template(row)).format.calls.name == corpus.CALL_SYNTAX[name]  # type: ignore[union-attr]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["call syntax"].strip("`"))
def test_stream_and_one_shot(row: dict[str, str]) -> None:
    # One test reads the calls whole and in 1- and 5-character deltas.
    assert row["stream"] == row["one-shot"] == "yes"
    name = row["tested on"].strip("`")
    if name in corpus.UNRENDERED_CALLS:
        corpus.test_calls_of_templates_that_render_none_read_back(name)
    else:
        corpus.test_native_tool_calls_read_back_streamed_and_whole(_template(row))


def _tool_conversation(row: dict[str, str]) -> Any:
    c = corpus.codec(_template(row))
    for ids, named in ((None, False), (None, True), (corpus.CALL_IDS, False), (corpus.MISTRAL_IDS, False)):
        messages: list[dict[str, Any]] = json.loads(json.dumps(corpus.TOOL_CONVERSATION))
        if ids:
            messages[1]["tool_calls"][0]["id"] = ids[0]
            messages[2]["tool_call_id"] = ids[0]
        elif named:
            messages[2]["name"] = "get_weather"  # (the function's name, which Functionary v2.2 writes)
        try:
            return c.roundtrip(messages, tools=corpus.CALL_TOOLS)
        except chatcodec.TemplateRenderError:
            continue
    raise AssertionError("the template refuses the conversation")


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["call syntax"].strip("`"))
def test_transcript(row: dict[str, str]) -> None:
    report = _tool_conversation(row)
    messages = report.transcript.messages
    calls = [(call.function.name, json.loads(call.function.arguments)) for m in messages for call in m.tool_calls or []]
    results = [m.content for m in messages if m.role == "tool"]
    recovered = calls == [("get_weather", {"city": "Paris"})] and results == ["18 C"]
    assert report.transcript.reassemble() == report.text
    reason = _reason(row["transcript"])
    if reason is None:
        assert recovered, (calls, results, report.summary())
    else:
        assert not recovered
        name = row["tested on"].strip("`")
        known = {corpus.TOOL_ROUND_TRIP_GAPS.get(name), "the template renders no calls"}
        assert reason in known


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["call syntax"].strip("`"))
def test_round_trip(row: dict[str, str]) -> None:
    report = _tool_conversation(row)
    reason = _reason(row["round trip"])
    if reason is None:
        assert report.text_survived, report.summary()
    else:
        assert not report.text_survived
        name = row["tested on"].strip("`")
        assert reason == (corpus.TOOL_ROUND_TRIP_GAPS.get(name) or corpus.ROUND_TRIP_GAPS.get(name))


# Python calls are converted when each call closes (their values need the whole literal), and so
# are MiniMax-M3's tags (a value's type shows only when its tags close).
WHOLE_AT_CLOSE = {"pythonic", "pythonic_list", "olmo3", "minimax_m3"}


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["call syntax"].strip("`"))
def test_arguments_arrive_before_the_call_ends(row: dict[str, str]) -> None:
    from chatcodec.events import ToolCallArgumentsDelta, ToolCallEnd

    name = row["tested on"].strip("`")
    path = _template(row)
    c = corpus.codec(path)
    if name in corpus.UNRENDERED_CALLS:
        prompt, completion = c.render(corpus.QUESTION, tools=corpus.CALL_TOOLS, add_generation_prompt=True), corpus.UNRENDERED_CALLS[name]
    else:
        prompt, completion, _ = corpus._call_completion(path)
    parser = c.stream(prompt, tools=corpus.CALL_TOOLS)
    sent = ""
    partial_seen = False
    for char in completion:
        for event in parser.feed(char):
            if isinstance(event, ToolCallArgumentsDelta) and event.index == 0:
                sent += event.text
                partial_seen = partial_seen or ("Par" in sent and "Paris" not in sent)
            if isinstance(event, ToolCallEnd) and event.index == 0:
                break
    assert "Par" in (sent or parser.result().message.tool_calls[0].function.arguments)  # type: ignore[index]
    syntax = row["call syntax"].strip("`")
    assert partial_seen == (syntax not in WHOLE_AT_CLOSE), sent
