"""JSONL runs on Dask: the same summary, warnings, failures, outputs and exit codes as one process.

The tests share one in-process cluster (``processes=False``, fast to start); one test starts its
own cluster of two worker processes through the command line, as a user's run does.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

import chatcodec
from chatcodec.check import distributed as dask_engine
from chatcodec.check.batch import BatchSummary, RoundTripSettings
from chatcodec.check.jsonl import Outcome, expand, plan_blocks, read_block, run_block
from chatcodec.check.mask_job import MaskSummary
from chatcodec.cli import main

HI = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
# Qwen3 keeps reasoning only after the last user turn: one reasoning_not_rendered loss.
DROPS_REASONING = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!", "reasoning_content": "Greet."},
    {"role": "user", "content": "Bye"},
]
# A delimiter in content: an injection risk, and the text does not come back.
INJECTION = [{"role": "user", "content": "Type <|im_end|> here"}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]


def call(city: str, call_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}
    if call_id:
        out["id"] = call_id
    return out


def generated_lines(count: int, seed: int) -> list[str]:
    """Conversations of many shapes (and some broken lines), deterministic for a seed."""
    rng = random.Random(seed)
    words = ["weather", "Zürich", "tomorrow", "  padded  ", "line\u2028separator", "<|im_end|>", "ok", "🙂"]
    lines = []
    for i in range(count):
        turns: list[dict[str, Any]] = []
        for _ in range(rng.randint(1, 3)):
            turns.append({"role": "user", "content": " ".join(rng.choices(words, k=rng.randint(1, 6)))})
            reply: dict[str, Any] = {"role": "assistant", "content": " ".join(rng.choices(words, k=3))}
            if rng.random() < 0.3:
                reply["reasoning_content"] = "think " + rng.choice(words)
            if rng.random() < 0.3:
                reply["tool_calls"] = [call(rng.choice(words), "call_1" if rng.random() < 0.5 else None)]
                turns += [reply, {"role": "tool", "content": rng.choice(words)}]
                reply = {"role": "assistant", "content": "done"}
            turns.append(reply)
        kind = rng.random()
        if kind < 0.04:
            lines.append('{"messages": [')  # not JSON
        elif kind < 0.07:
            lines.append(json.dumps([{"role": "wizard", "content": "x"}]))  # not a conversation
        elif kind < 0.1:
            lines.append("")  # blank: not counted
        elif kind < 0.5:
            lines.append(json.dumps({"messages": turns, "tools": TOOLS}, ensure_ascii=False))
        else:
            lines.append(json.dumps(turns, ensure_ascii=i % 2 == 0))
    return lines


def write(path: Path, lines: list[str], end: str = "\n") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(end.join(lines).encode("utf-8") + end.encode())
    return str(path)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as local:
        yield local


@pytest.fixture(scope="module")
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster) as connected:
        yield connected


def settings(template: str) -> RoundTripSettings:
    return RoundTripSettings(chatcodec.load(template), None, False, {})


def local_run(job: RoundTripSettings, paths: list[str]) -> tuple[BatchSummary, list[tuple[str, int, Outcome]]]:
    """The reference: every line in order, straight through ``job.line``."""
    summary = job.summary()
    outcomes = []
    for path in paths:
        for number, raw in enumerate(Path(path).read_bytes().split(b"\n"), start=1):
            if raw.strip():
                outcome = job.line(summary, raw + b"\n", number == 1)
                if outcome is not None:
                    outcomes.append((path, number, outcome))
    return summary, outcomes


# -- summaries merge ---------------------------------------------------------------------------


def test_summaries_merge_by_adding_every_count() -> None:
    a = BatchSummary(lossless=2, lossy=1, invalid=0, conversations=Counter(x=1), occurrences=Counter(x=2))
    b = BatchSummary(lossless=0, lossy=2, invalid=3, conversations=Counter(x=1, y=2), occurrences=Counter(x=1, y=5))
    merged = a + b
    assert (merged.lossless, merged.lossy, merged.invalid) == (2, 3, 3)
    assert merged.conversations == Counter(x=2, y=2) and merged.occurrences == Counter(x=3, y=5)
    assert merged.exit_code() == 2 and a.exit_code() == 1 and BatchSummary(lossless=1).exit_code() == 0
    assert (a.lossless, b.invalid) == (2, 3)  # the parts are left as they were
    assert BatchSummary.from_dict(merged.to_dict()) == merged
    masks = MaskSummary(2, 30, 10, 0) + MaskSummary(1, 5, 1, 1)
    assert masks == MaskSummary(3, 35, 11, 1) and masks.exit_code() == 2


def test_summaries_of_parts_merge_into_the_summary_of_the_whole() -> None:
    job = settings("qwen3")
    lines = [line.encode() + b"\n" for line in generated_lines(120, seed=1) if line]
    whole = job.summary()
    for line in lines:
        job.line(whole, line, False)
    parts = []
    for start in range(0, len(lines), 17):
        part = job.summary()
        for line in lines[start : start + 17]:
            job.line(part, line, False)
        parts.append(part)
    merged = BatchSummary()
    for part in parts:
        merged = merged.merge(part)
    assert merged == whole and merged.to_dict() == whole.to_dict()
    # The data has every outcome, so the equality is not between empty summaries.
    assert whole.lossless and whole.lossy and whole.invalid and len(whole.occurrences) >= 4


# -- blocks --------------------------------------------------------------------------------------


@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1000, 10**6])
def test_blocks_hold_every_line_exactly_once(tmp_path: Path, block_bytes: int) -> None:
    data = b'{"a": 1}\n\n{"b": "x\xe2\x80\xa8y"}\r\n' + b'{"c": ' + b"9" * 150 + b"}\n" * 3 + b"last, no newline"
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    blocks = plan_blocks([str(path)], block_bytes)
    assert blocks[0].start == 0 and blocks[-1].end == len(data)
    assert all(a.end == b.start for a, b in zip(blocks, blocks[1:]))
    expected = [
        b'{"a": 1}\n',
        b"\n",
        b'{"b": "x\xe2\x80\xa8y"}\r\n',  # U+2028 inside a string does not end a line
        b'{"c": ' + b"9" * 150 + b"}\n",
        b"}\n",
        b"}\n",
        b"last, no newline",
    ]
    assert [raw for block in blocks for _, raw in read_block(block)] == expected
    starts = [sum(len(line) for line in expected[:i]) for i in range(len(expected))]
    assert [offset for block in blocks for offset, _ in read_block(block)] == starts


def test_globs_expand_sorted_and_each_file_once(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl", "notes.txt"):
        (tmp_path / name).write_text("")
    pattern = str(tmp_path / "*.jsonl")
    assert expand([pattern, str(tmp_path / "a.jsonl"), "-"]) == [
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "b.jsonl"),
        "-",
    ]
    with pytest.raises(Exception, match="no file matches"):
        expand([str(tmp_path / "*.parquet")])


# -- the engine, through the Python API ----------------------------------------------------------


@pytest.mark.parametrize("template", ["qwen3", "llama3_hermes", "deepseek"])
def test_dask_gives_what_one_process_gives(tmp_path: Path, client: Client, template: str) -> None:
    paths = [
        write(tmp_path / "one.jsonl", generated_lines(90, seed=2)),
        write(tmp_path / "two.jsonl", generated_lines(40, seed=3), end="\r\n"),
    ]
    job = settings(template)
    expected_summary, expected_outcomes = local_run(job, paths)
    for block_bytes in (300, 10**6):  # many blocks with lines across their edges; one per file
        seen: list[tuple[str, int, Outcome]] = []
        numbered: dict[str, int] = {}

        def on_block(result: Any) -> None:
            before = numbered.get(result.block.source, 0)
            seen.extend((result.block.source, before + n, outcome) for n, outcome in result.outcomes)
            numbered[result.block.source] = before + result.lines

        summary = dask_engine.run(job, paths, client, block_bytes=block_bytes, on_block=on_block)
        assert summary.to_dict() == expected_summary.to_dict()
        assert summary.exit_code() == expected_summary.exit_code() == 2
        assert seen == expected_outcomes
    assert expected_summary.lossless and expected_summary.lossy


def test_a_bug_in_a_worker_names_the_line(tmp_path: Path, client: Client) -> None:
    class Broken(RoundTripSettings):
        def line(self, summary: BatchSummary, raw: bytes, first: bool) -> Outcome | None:
            if b"boom" in raw:
                raise KeyError("boom")
            return super().line(summary, raw, first)

    path = write(tmp_path / "data.jsonl", [json.dumps(HI), json.dumps([{"role": "user", "content": "boom"}])])
    job = Broken(chatcodec.load("qwen3"), None, False, {})
    with pytest.raises(RuntimeError, match=r"internal error while checking the line at byte 80 of .*data\.jsonl"):
        dask_engine.run(job, [path], client)
    assert len(json.dumps(HI)) + 1 == 80  # the second line starts there


def test_an_unreachable_scheduler_is_one_clear_error() -> None:
    with pytest.raises(dask_engine.EngineUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_engine.connect("tcp://127.0.0.1:9", timeout=1):
            pass


# -- the command line ----------------------------------------------------------------------------


def small_dataset(root: Path) -> list[str]:
    a = write(root / "data" / "a.jsonl", [json.dumps(HI), json.dumps(DROPS_REASONING), '{"messages": oops', ""])
    b = write(root / "data" / "b.jsonl", [json.dumps(INJECTION), json.dumps([{"role": "wizard", "content": "x"}])])
    return [a, b]


def test_cli_failures_file_lists_each_lossy_or_invalid_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: LocalCluster
) -> None:
    a, b = small_dataset(tmp_path)
    failures = tmp_path / "lossy.jsonl"
    argv = ["roundtrip", "-t", "qwen3", "--jsonl", str(tmp_path / "data" / "*.jsonl"), "--failures", str(failures)]
    code, out, err = run_cli([*argv, "--engine", "dask", "--scheduler", cluster.scheduler_address], capsys)
    assert code == 2
    records = [json.loads(line) for line in failures.read_text(encoding="utf-8").splitlines()]
    assert [(r["source"], r["line"], "error" in r, "report" in r) for r in records] == [
        (a, 2, False, True),
        (a, 3, True, False),
        (b, 1, False, True),
        (b, 2, True, False),
    ]
    assert [loss["kind"] for loss in records[0]["report"]["losses"]] == ["reasoning_not_rendered"]
    assert records[1]["error"].startswith("not valid JSON: Expecting value")
    # The user's turn ends at the delimiter: "Type " comes back, and the rest is read as no message.
    kinds = ["text_not_reproduced", "injection_risk", "text_not_read", "content_changed"]
    assert [loss["kind"] for loss in records[2]["report"]["losses"]] == kinds
    assert records[2]["report"]["text_survived"] is False
    assert "message 0: field 'role'" in records[3]["error"]
    assert err.splitlines() == [
        f"chatcodec: warning: {a}: line 3 is invalid: {records[1]['error']}",
        f"chatcodec: warning: {b}: line 2 is invalid: {records[3]['error']}",
    ]
    assert out.splitlines()[:4] == ["conversations: 5", "  lossless:    1", "  lossy:       2", "  invalid:     2"]


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_cli_dask_prints_what_local_prints(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cluster: LocalCluster,
    output: list[str],
) -> None:
    # Blocks of 500 bytes: many per file, so line numbers have to carry over between blocks.
    monkeypatch.setattr(dask_engine, "block_size_for", lambda total, slots: 500)
    write(tmp_path / "data" / "one.jsonl", generated_lines(150, seed=4))
    write(tmp_path / "data" / "two.jsonl", generated_lines(60, seed=5))
    base = ["roundtrip", "-t", "qwen3", "--jsonl", str(tmp_path / "data" / "*.jsonl"), *output]
    runs = {}
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster.scheduler_address]):
        failures = tmp_path / f"failures-{engine[1]}.jsonl"
        code, out, err = run_cli([*base, *engine, "--failures", str(failures)], capsys)
        runs[engine[1]] = (code, out, err, failures.read_bytes())
    assert runs["dask"] == runs["local"]
    code, out, err, failures_text = runs["local"]
    assert code == 2 and err.count("is invalid") == failures_text.count(b'"error"') > 0


@pytest.mark.parametrize(
    "conversations,code",
    [([HI, HI], 0), ([HI, DROPS_REASONING], 1), ([HI, DROPS_REASONING, "oops"], 2)],
)
def test_cli_dask_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: LocalCluster, conversations: list[Any], code: int
) -> None:
    path = write(tmp_path / "data.jsonl", [c if isinstance(c, str) else json.dumps(c) for c in conversations])
    argv = ["roundtrip", "-t", "qwen3", "--jsonl", path, "--json", "--engine", "dask", "--scheduler"]
    got, out, _ = run_cli([*argv, cluster.scheduler_address], capsys)
    assert got == code and json.loads(out)["conversations"] == len(conversations)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--jsonl", "-", "--engine", "dask"], "stdin cannot be split"),
        (["--jsonl", "{d}/*.parquet", "--engine", "dask"], "no file matches"),
        (["--jsonl", "{d}/missing.jsonl", "--engine", "dask", "--workers", "1"], "cannot read"),
        (["--jsonl", "{d}/data.jsonl", "--workers", "2"], "--workers goes with --engine dask"),
        (["--jsonl", "{d}/data.jsonl", "--scheduler", "tcp://x:1"], "--scheduler goes with --engine dask"),
        (["--engine", "dask", "{d}/data.jsonl"], "--engine dask goes with --jsonl FILE"),
        (["--failures", "{d}/f.jsonl", "{d}/data.jsonl"], "--failures goes with --jsonl FILE"),
        (["--jsonl", "{d}/data.jsonl", "--engine", "dask", "--workers", "0"], "--workers must be at least 1"),
        (["--jsonl", "{d}/data.jsonl", "--failures", "{d}/no/such/dir/f.jsonl"], "--failures: cannot write"),
        (["--jsonl", "{d}/data.jsonl", "{d}/data.jsonl"], "quote a glob"),
    ],
)
def test_cli_bad_usage_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    write(tmp_path / "data.jsonl", [json.dumps(HI)])
    argv = [part.replace("{d}", str(tmp_path)) for part in argv]
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", *argv], capsys)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1 and message in err, err


def test_cli_without_dask_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    path = write(tmp_path / "data.jsonl", [json.dumps(HI)])
    code, out, err = run_cli(["roundtrip", "-t", "qwen3", "--jsonl", path, "--engine", "dask"], capsys)
    assert (code, out) == (2, "")
    assert err == "chatcodec: error: --engine dask needs Dask's distributed scheduler: pip install 'chatcodec[dask]'\n"


README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_dask_session_with_two_worker_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's session, as typed: a local cluster of two worker processes."""
    text = README.read_text(encoding="utf-8")
    (session,) = re.findall(r"```sh\n(\$ cat data/a\.jsonl.*?)```", text, re.DOTALL)
    files = dict(re.findall(r"\$ cat (\S+)\n(.*?)(?=\n\$ )", session, re.DOTALL))
    for name, content in files.items():
        if name.startswith("data/"):
            (tmp_path / name).parent.mkdir(exist_ok=True)
            (tmp_path / name).write_text(content + "\n", encoding="utf-8")
    (command,) = re.findall(r"\$ chatcodec (roundtrip .*?); echo \"exit \$\?\"\n", session)
    shown = session.split(command)[1].split("\n", 1)[1]
    printed, failures_shown = shown.split("$ cat lossy.jsonl\n")
    monkeypatch.chdir(tmp_path)
    argv = [part.strip("'") for part in command.split()]
    assert argv[argv.index("--workers") + 1] == "2"
    code, out, err = run_cli(argv, capsys)
    assert err + out + f"exit {code}\n" == printed
    assert (tmp_path / "lossy.jsonl").read_text(encoding="utf-8") == failures_shown


# -- masks ---------------------------------------------------------------------------------------


def toy_tokenizer(path: Path, texts: list[str]) -> str:
    """Whitespace-split words, numbered in order of first appearance (0 is unknown)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0}
    for text in texts:
        for word in text.split():
            vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(path))
    return str(path)


def test_masks_of_one_conversation_checked_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Rendered: "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n"
    words = ["<|im_start|>user", "Hi<|im_end|>", "<|im_start|>assistant", "<think>", "</think>", "Hello!<|im_end|>"]
    tokenizer = toy_tokenizer(tmp_path / "tokenizer.json", [" ".join(words)])
    data = write(tmp_path / "data.jsonl", [json.dumps({"messages": HI}), "oops"])
    out = tmp_path / "masks.jsonl"
    argv = ["masks", "-t", "qwen3", "--tokenizer", tokenizer, "--jsonl", data, "--out", str(out), "--json"]
    code, printed, err = run_cli(argv, capsys)
    assert code == 2 and "line 2 is invalid: not valid JSON" in err
    # The empty think block is the template's, not the assistant's; the end token is.
    assert out.read_text() == '{"input_ids":[1,2,3,4,5,6],"assistant_masks":[0,0,0,0,0,1]}\n'
    assert json.loads(printed) == {"conversations": 1, "tokens": 6, "assistant_tokens": 1, "invalid": 1}
    code, _, _ = run_cli([*argv, "--template-think"], capsys)
    assert out.read_text() == '{"input_ids":[1,2,3,4,5,6],"assistant_masks":[0,0,0,1,1,1]}\n'


@pytest.mark.parametrize("template", ["qwen3", "llama3_hermes"])
def test_masks_on_dask_equal_masks_computed_locally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: LocalCluster, template: str
) -> None:
    from chatcodec.dataset import assistant_masks

    lines = generated_lines(80, seed=6)
    codec = chatcodec.load(template)
    texts = [_render(codec, line) for line in lines[:30] if _renders(codec, line)]
    tokenizer_file = toy_tokenizer(tmp_path / "tokenizer.json", texts)
    data = write(tmp_path / "data.jsonl", lines)
    base = ["masks", "-t", template, "--tokenizer", tokenizer_file, "--jsonl", data, "--json"]
    local_out, dask_out = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    local = run_cli([*base, "--out", str(local_out), "--failures", str(tmp_path / "lf.jsonl")], capsys)
    dask = run_cli(
        [*base, "--out", str(dask_out), "--failures", str(tmp_path / "df.jsonl"), "--engine", "dask", "--scheduler",
         cluster.scheduler_address],
        capsys,
    )
    assert dask == local and dask_out.read_bytes() == local_out.read_bytes()
    assert (tmp_path / "df.jsonl").read_bytes() == (tmp_path / "lf.jsonl").read_bytes()
    # Against the library function, row by row, independently of the command.
    from tokenizers import Tokenizer

    masker = assistant_masks(codec, Tokenizer.from_file(tokenizer_file))
    expected = masker({"messages": [json.dumps(_conversation(line)[0]) for line in lines if line.strip() and _parses(line)],
                       "tools": [json.dumps(_conversation(line)[1]) for line in lines if line.strip() and _parses(line)]})
    valid = [(ids, mask) for ids, mask, error in zip(*expected.values()) if error is None]
    written = [json.loads(line) for line in dask_out.read_text().splitlines()]
    assert [(row["input_ids"], row["assistant_masks"]) for row in written] == valid
    summary = json.loads(local[1])
    assert summary["conversations"] == len(valid) and summary["invalid"] == sum(1 for l in lines if l) - len(valid)
    assert summary["tokens"] == sum(len(ids) for ids, _ in valid) and 0 < summary["assistant_tokens"] < summary["tokens"]
    assert local[0] == 2  # the generated data has broken lines


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _conversation(line: str) -> tuple[Any, Any]:
    data = json.loads(line)
    return (data["messages"], data.get("tools")) if isinstance(data, dict) else (data, None)


def _renders(codec: chatcodec.Codec, line: str) -> bool:
    try:
        _render(codec, line)
    except (ValueError, chatcodec.ChatCodecError):
        return False
    return True


def test_masks_to_stdout_keep_the_summary_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tokenizer = toy_tokenizer(tmp_path / "tokenizer.json", ["Hi"])
    data = write(tmp_path / "data.jsonl", [json.dumps(HI)] * 2)
    code, out, err = run_cli(["masks", "-t", "qwen3", "--tokenizer", tokenizer, "--jsonl", data, "--out", "-"], capsys)
    assert code == 0 and len(out.splitlines()) == 2 and all("input_ids" in line for line in out.splitlines())
    assert err.startswith("conversations:    2\n")
    code, out, err = run_cli(["masks", "-t", "qwen3", "--tokenizer", str(data), "--jsonl", data], capsys)
    assert (code, out) == (2, "") and err.startswith("chatcodec: error: cannot load the tokenizer")


def _render(codec: chatcodec.Codec, line: str) -> str:
    messages, tools = _conversation(line)
    return codec.render(messages, tools=tools, on_special_tokens="ignore")
