"""Round-trip throughput over a generated JSONL dataset: one process against Dask workers.

    python bench/dask_roundtrip.py [--conversations 4000] [--workers 1 2] [--template qwen3]

Two measures for each engine: the check alone (conversations per second once the cluster is
up, the template loaded and the job sent), and the whole ``chatcodec roundtrip --jsonl`` command
as a user runs it, in a fresh process (Python start, template, cluster start and stop included).
Needs ``pip install 'chatcodec[dask]'``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chatcodec
from chatcodec.check import distributed as dask_engine
from chatcodec.check.batch import RoundTripSettings
from chatcodec.check.jsonl import plan_blocks, run_block

WORDS = "the weather in Paris is mild today tomorrow rain expected check the forecast again please".split()
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]


def sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def conversation(rng: random.Random) -> dict[str, Any]:
    """A few turns of prose, some reasoning, some tool calls: a typical SFT row."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": sentence(rng, 5, 20)}]
    for _ in range(rng.randint(1, 4)):
        messages.append({"role": "user", "content": sentence(rng, 5, 40)})
        if rng.random() < 0.4:
            city = rng.choice(["Paris", "Oslo", "Zürich"])
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": city, "days": 2}}}
                    ],
                }
            )
            messages.append({"role": "tool", "content": json.dumps({"city": city, "temp": rng.randint(-5, 30)})})
        reply: dict[str, Any] = {"role": "assistant", "content": sentence(rng, 10, 80)}
        if rng.random() < 0.3:
            reply["reasoning_content"] = sentence(rng, 10, 60)
        messages.append(reply)
    return {"messages": messages, "tools": TOOLS}


def write_dataset(folder: Path, count: int, files: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    paths = []
    for index in range(files):
        path = folder / f"part-{index}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for _ in range(count // files):
                handle.write(json.dumps(conversation(rng), ensure_ascii=False) + "\n")
        paths.append(str(path))
    return paths


def single_process(job: RoundTripSettings, paths: list[str]) -> float:
    start = time.perf_counter()
    for block in plan_blocks(paths, 1 << 40):
        run_block(job, block)
    return time.perf_counter() - start


def on_dask(job: RoundTripSettings, paths: list[str], workers: int, repeat: int) -> tuple[float, float]:
    """(seconds to start the cluster, best seconds for the check) with ``workers`` processes."""
    start = time.perf_counter()
    with dask_engine.connect(workers=workers) as client:
        started = time.perf_counter() - start
        dask_engine.run(job, paths, client, block_bytes=1 << 40)  # warm: every worker loads chatcodec
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            dask_engine.run(job, paths, client)
            times.append(time.perf_counter() - start)
        return started, min(times)


def command(paths: list[str], template: str, engine: list[str]) -> float:
    folder = str(Path(paths[0]).parent)
    argv = [sys.executable, "-m", "chatcodec", "roundtrip", "-t", template, "--jsonl", f"{folder}/*.jsonl", *engine]
    start = time.perf_counter()
    subprocess.run(argv, check=False, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=4000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--template", default="qwen3")
    # The best of a few: on a shared machine, the other load only ever makes a run slower.
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    job = RoundTripSettings(chatcodec.load(args.template), None, False, {})
    with tempfile.TemporaryDirectory() as folder:
        paths = write_dataset(Path(folder), args.conversations, args.files, seed=1)
        count = args.conversations // args.files * args.files
        size = sum(Path(p).stat().st_size for p in paths)
        print(f"{count} conversations, {size / 1e6:.1f} MB in {args.files} files, template {args.template}")
        single_process(job, paths[:1])  # warm: the template's format is read once
        print("| engine | check alone | conversations/s | whole command |")
        print("|---|---:|---:|---:|")
        seconds = min(single_process(job, paths) for _ in range(args.repeat))
        whole = min(command(paths, args.template, []) for _ in range(args.repeat))
        print(f"| one process | {seconds:.2f} s | {count / seconds:.0f} | {whole:.2f} s |")
        for workers in args.workers:
            started, seconds = on_dask(job, paths, workers, args.repeat)
            engine = ["--engine", "dask", "--workers", str(workers)]
            whole = min(command(paths, args.template, engine) for _ in range(args.repeat))
            print(
                f"| dask, {workers} worker{'s' if workers > 1 else ''} | {seconds:.2f} s | {count / seconds:.0f} | "
                f"{whole:.2f} s (cluster start {started:.1f} s) |"
            )


if __name__ == "__main__":
    main()
