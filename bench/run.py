#!/usr/bin/env python3
"""Parser benchmark: one-shot throughput, streaming cost per delta, peak memory, growth.

Completions are generated deterministically (seeded) for every family in three shapes:

* ``reasoning``: a long reasoning block and a short answer,
* ``content``: a long answer,
* ``tools``: a short answer and many tool calls with large arguments (nested JSON, strings
  with escapes, unicode, and delimiters quoted inside strings).

Every generated completion is parsed once and checked (content, reasoning, tool calls, no
diagnostics, lossless spans) before anything is timed.

Usage::

    python bench/run.py            # full run (about 2-3 minutes on 2 cores)
    python bench/run.py --quick    # sizes up to 100 KB, fewer repetitions
    python bench/run.py --json results.json   # also write the results as JSON ("-": stdout)
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    import chatcodec
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import chatcodec

SEED = 20240611
FAMILIES = ("qwen3", "deepseek", "llama3_hermes", "llama_json", "mistral", "qwen3_coder", "harmony")
# Call syntaxes read off real templates (tests/templates), with the model's special tokens.
TEMPLATES = Path(__file__).resolve().parent.parent / "tests" / "templates"
TEMPLATE_OF = {
    "llama_json": ("Llama-3.1-8B-Instruct", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    "mistral": ("Mistral-Small-3.2-24B-Instruct-2506", {"bos_token": "<s>", "eos_token": "</s>"}),
    "qwen3_coder": ("Qwen-Qwen3-Coder", {"eos_token": "<|im_end|>"}),
    "harmony": ("OpenAI-gpt-oss-120b", {}),
}
SHAPES = ("reasoning", "content", "tools")
SIZES = {"1 KB": 1_000, "10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}
QUICK_SIZES = {"1 KB": 1_000, "10 KB": 10_000, "100 KB": 100_000}
DELTAS = (1, 4, 16)

# Targets the results are reported against.
TARGET_ONESHOT_MB_S = 50.0  # at 100 KB
TARGET_DELTA_US = 5.0  # median cost of a 4-character delta
TARGET_GROWTH = 2.2  # time(2n) / time(n)

# Qwen3 and DeepSeek delimiters as their templates write them (the grammars are the truth;
# these only build test input, and every input is checked by parsing it).
QWEN_CALL = '\n<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'
HERMES_CALL = '<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'
DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALL = "<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
DS_END = "<｜end▁of▁sentence｜>"
LLAMA_CALL = '{{"name": "{name}", "parameters": {arguments}}}'
MISTRAL_CALL = "[TOOL_CALLS]{name}[ARGS]{arguments}"
HARMONY_CALL = "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{arguments}<|call|>"
XML_CALL = "\n<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"
XML_PARAMETER = "<parameter={key}>\n{value}\n</parameter>\n"


# ---- deterministic input -------------------------------------------------------------------

WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "on", "by", "this",
    "are", "at", "from", "or", "an", "which", "model", "answer", "token", "stream", "parser",
    "value", "result", "because", "therefore", "however", "consider", "function", "argument",
    "request", "response", "server", "client", "buffer", "delta", "message", "content",
    "reasoning", "first", "second", "next", "then", "finally", "check", "compute", "return",
)  # fmt: skip
UNICODE_WORDS = ("café", "naïve", "Größe", "日本語", "данные", "😀", "→", "½", "ümlaut", "한국어", "ℕ")
CODE_SNIPPETS = ("`a < b`", "`x -> y`", "<b>bold</b>", "`if (i < n && j > 0)`", "a <= b", "`Vec<u8>`")
TOOL_NAMES = ("get_weather", "search_files", "run_sql", "write_file", "http_request")
STRING_PIECES = (
    'she said "hi"',
    "C:\\Users\\data",
    "line one\nline two",
    "tab\tseparated",
    "café ☕",
    "日本語のテキスト",
    "emoji 🚀🔥",
    'quote \\" inside',
    "<tool_call> quoted",
    "</tool_call> too",
    "<｜tool▁call▁end｜> quoted",
    "<think>not a tag</think>",
    "\u00e9\u00e8\u00ea",
    "control \u0001 char",
)


def size_label(chars: int) -> str:
    return f"{chars // 1000:g} KB" if chars < 1_000_000 else f"{chars / 1e6:g} MB"


class Maker:
    """Builds prose and JSON arguments from one seeded random generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def prose(self, size: int) -> str:
        """About ``size`` characters of text with punctuation, unicode, code and paragraphs."""
        rng = self.rng
        parts: list[str] = []
        total = 0
        while total < size:
            words = []
            for _ in range(rng.randint(6, 18)):
                roll = rng.random()
                if roll < 0.06:
                    words.append(rng.choice(UNICODE_WORDS))
                elif roll < 0.09:
                    words.append(rng.choice(CODE_SNIPPETS))
                else:
                    words.append(rng.choice(WORDS))
            sentence = " ".join(words).capitalize() + rng.choice((". ", ". ", "? ", ": ", ".\n", ".\n\n"))
            parts.append(sentence)
            total += len(sentence)
        text = "".join(parts)[:size]
        return text.rstrip() or "ok"

    def json_string(self) -> str:
        rng = self.rng
        if rng.random() < 0.4:
            return rng.choice(STRING_PIECES)
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))

    def json_value(self, depth: int) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth >= 5 or roll < 0.5:
            kind = rng.random()
            if kind < 0.6:
                return self.json_string()
            if kind < 0.8:
                return rng.randint(-(10**6), 10**6)
            if kind < 0.9:
                return round(rng.uniform(-1000, 1000), 4)
            return rng.choice((True, False, None))
        if roll < 0.8:
            return {f"{rng.choice(WORDS)}_{i}": self.json_value(depth + 1) for i in range(rng.randint(1, 5))}
        return [self.json_value(depth + 1) for _ in range(rng.randint(1, 6))]

    def arguments(self, size: int) -> str:
        """A JSON object of about ``size`` characters (at least one member)."""
        members: list[str] = []
        total = 2
        ensure_ascii = self.rng.random() < 0.3
        while total < size or not members:
            key = json.dumps(f"{self.rng.choice(WORDS)}_{len(members)}", ensure_ascii=ensure_ascii)
            value = json.dumps(self.json_value(1), ensure_ascii=ensure_ascii)
            member = f"{key}: {value}"
            members.append(member)
            total += len(member) + 2
        return "{" + ", ".join(members) + "}"


@dataclass
class Expected:
    content: str
    reasoning: str | None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments text)


@dataclass
class Case:
    family: str
    shape: str
    label: str
    text: str
    options: dict[str, Any]
    expected: Expected

    @property
    def megabytes(self) -> float:
        return len(self.text.encode("utf-8")) / 1e6


def make_calls(maker: Maker, budget: int) -> list[tuple[str, str]]:
    """Tool calls whose arguments add up to about ``budget`` characters."""
    calls: list[tuple[str, str]] = []
    used = 0
    while used < budget or not calls:
        size = min(max(budget - used, 200), maker.rng.randint(2_000, 8_000))
        arguments = maker.arguments(size)
        calls.append((maker.rng.choice(TOOL_NAMES), arguments))
        used += len(arguments) + 60
    return calls


@functools.lru_cache(maxsize=8)
def build_case(family: str, shape: str, size: int, seed: int) -> Case:
    """One completion of about ``size`` characters, written as the family's template writes it."""
    maker = Maker(seed)
    options: dict[str, Any] = {}
    reasoning: str | None = None
    calls: list[tuple[str, str]] = []
    if shape == "reasoning":
        reasoning = maker.prose(max(size - 100, 10))
        content = maker.prose(60)
    elif shape == "content":
        content = maker.prose(size)
    else:
        content = maker.prose(min(200, size // 10))
        calls = make_calls(maker, size - len(content) - 60)

    if family == "qwen3":
        head = f"<think>\n{reasoning}\n</think>\n\n" if reasoning is not None else "<think>\n\n</think>\n\n"
        body = "".join(QWEN_CALL.format(name=n, arguments=a) for n, a in calls)
        text = head + content + body + "<|im_end|>"
    elif family == "llama3_hermes":
        body = "".join(
            ("\n" if i or content else "") + HERMES_CALL.format(name=n, arguments=a) for i, (n, a) in enumerate(calls)
        )
        text = content + body + "<|eot_id|>"
    elif family == "deepseek":
        # A thinking completion continues a prompt that opened <think>.
        head = ""
        if reasoning is not None:
            head = reasoning + "</think>"
            options["reasoning"] = True
        body = ""
        if calls:
            body = DS_CALLS_BEGIN + "".join(DS_CALL.format(name=n, arguments=a) for n, a in calls) + DS_CALLS_END
        text = head + content + body + DS_END
    elif family == "llama_json":
        # Calls are the whole answer: no text before them.
        if calls:
            content = ""
        text = (content or "; ".join(LLAMA_CALL.format(name=n, arguments=a) for n, a in calls)) + "<|eot_id|>"
    elif family == "mistral":
        text = content + "".join(MISTRAL_CALL.format(name=n, arguments=a) for n, a in calls) + "</s>"
    elif family == "harmony":
        head = f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant" if reasoning is not None else ""
        if calls:
            content = ""
            body = "<|start|>assistant".join(HARMONY_CALL.format(name=n, arguments=a) for n, a in calls)
        else:
            body = f"<|channel|>final<|message|>{content}<|return|>"
        text = head + body
    elif family == "qwen3_coder":
        # XML parameters are flat text: each call's arguments are string values, converted to
        # JSON by the reader.
        xml_calls = [(name, xml_arguments(maker, len(arguments))) for name, arguments in calls]
        calls = [(name, json.dumps(dict(values), ensure_ascii=False)) for name, values in xml_calls]
        body = "".join(
            XML_CALL.format(name=n, parameters="".join(XML_PARAMETER.format(key=k, value=v) for k, v in values))
            for n, values in xml_calls
        )
        text = content + body + "<|im_end|>"
        if reasoning is not None:
            text = reasoning + "\n</think>\n\n" + text
            options["reasoning"] = True
    else:  # pragma: no cover - FAMILIES lists the families above
        raise ValueError(family)
    return Case(family, shape, size_label(size), text, options, Expected(content, reasoning, calls))


def xml_arguments(maker: Maker, size: int) -> list[tuple[str, str]]:
    """Parameters of about ``size`` characters of text: prose with the characters JSON must
    escape, unicode, and tags quoted inside."""
    values: list[tuple[str, str]] = []
    used = 0
    while used < size or not values:
        value = maker.prose(maker.rng.randint(40, 400)) + " " + maker.rng.choice(STRING_PIECES[:8])
        values.append((f"p{len(values)}", value))
        used += len(value) + 40
    return values


def load(family: str) -> chatcodec.Codec:
    if family in TEMPLATE_OF:
        name, tokens = TEMPLATE_OF[family]
        return chatcodec.load(TEMPLATES / f"{name}.jinja", special_tokens=tokens)
    return chatcodec.load(family)


def shapes_of(family: str) -> tuple[str, ...]:
    if family in ("llama3_hermes", "llama_json", "mistral", "qwen3_coder"):
        return ("content", "tools")  # the format has no reasoning blocks
    return SHAPES


def check(codec: chatcodec.Codec, case: Case) -> None:
    """Fail loudly if the generated completion does not parse to what it was built from."""
    result = codec.parse_detailed(case.text, **case.options)
    problems: list[str] = []
    message = result.message
    if result.diagnostics:
        problems.append(f"diagnostics: {result.diagnostics[:3]}")
    if result.reassemble() != case.text:
        problems.append("spans do not reassemble the text")
    if (message.content or "") != case.expected.content:
        problems.append("content differs")
    if (message.reasoning_content or None) != case.expected.reasoning:
        problems.append("reasoning differs")
    got_calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
    if got_calls != case.expected.calls:
        problems.append(f"tool calls differ ({len(got_calls)} parsed, {len(case.expected.calls)} written)")
    if problems:
        raise SystemExit(f"bench input {case.family}/{case.shape}/{case.label} misparsed: {'; '.join(problems)}")


# ---- measuring -----------------------------------------------------------------------------


def split(text: str, step: int) -> list[str]:
    return [text[i : i + step] for i in range(0, len(text), step)]


def timed_samples(run: Callable[[int], float], samples: int, min_sample: float) -> list[float]:
    """Seconds per repetition, one value per sample; each sample repeats ``run`` long enough
    (at least ``min_sample`` seconds) to be well above timer noise."""
    single = run(1)
    reps = max(1, math.ceil(min_sample / max(single, 1e-9)))
    values = [single] if reps == 1 else []
    while len(values) < samples:
        gc.collect()
        values.append(run(reps) / reps)
    return values


def oneshot_seconds(codec: chatcodec.Codec, case: Case, samples: int, min_sample: float) -> float:
    text, options = case.text, case.options

    def run(reps: int) -> float:
        start = time.thread_time()
        for _ in range(reps):
            codec.parse(text, **options)
        return time.thread_time() - start

    return statistics.median(timed_samples(run, samples, min_sample))


def stream_seconds(codec: chatcodec.Codec, case: Case, step: int, samples: int, min_sample: float) -> float:
    """Median seconds of the feed loop (parsers are created outside the timed region)."""
    deltas = split(case.text, step)

    def run(reps: int) -> float:
        parsers = [codec.stream(**case.options) for _ in range(reps)]
        start = time.thread_time()
        for parser in parsers:
            feed = parser.feed
            for delta in deltas:
                feed(delta)
        return time.thread_time() - start

    return statistics.median(timed_samples(run, samples, min_sample))


def growth_ratio(seconds: Callable[[Case], float], small: Case, large: Case, rounds: int) -> float:
    """time(2n) / time(n): the median over rounds that each time both sizes back to back (so a
    change in background load hits both), per character and doubled, as the generated sizes are
    only about n and 2n."""
    ratios = []
    for _ in range(rounds):
        per_char_small = seconds(small) / len(small.text)
        per_char_large = seconds(large) / len(large.text)
        ratios.append(2 * per_char_large / per_char_small)
    return statistics.median(ratios)


def peak_memory(codec: chatcodec.Codec, case: Case) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        codec.parse(case.text, **case.options)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


@dataclass
class Row:
    family: str
    shape: str
    size: str
    chars: int
    megabytes: float
    oneshot_mb_s: float
    us_per_delta: dict[int, float]
    runs_per_delta: dict[int, int]


@dataclass
class Growth:
    family: str
    shape: str
    n_chars: int
    oneshot: float  # time(2n) / time(n)
    stream: float  # same, feed loop at 4-character deltas
    peak_bytes: int  # tracemalloc peak of a one-shot parse of the largest size
    peak_input_bytes: int  # that input's UTF-8 size
    peak_size: str


@dataclass
class Plan:
    sizes: dict[str, int]
    growth_n: int
    samples: Callable[[int], int]  # samples for a given number of deltas
    min_sample: float


FULL = Plan(
    sizes=SIZES,
    growth_n=500_000,
    samples=lambda deltas: 1 if deltas >= 1_000_000 else 3 if deltas >= 100_000 else 5,
    min_sample=0.02,
)
QUICK = Plan(
    sizes=QUICK_SIZES,
    growth_n=50_000,
    samples=lambda deltas: 1 if deltas >= 100_000 else 3,
    min_sample=0.01,
)


def measure(plan: Plan, families: Sequence[str], log: Callable[[str], None]) -> tuple[list[Row], list[Growth]]:
    rows: list[Row] = []
    growth: list[Growth] = []
    for family_index, family in enumerate(families):
        codec = load(family)
        for shape_index, shape in enumerate(shapes_of(family)):
            seed = SEED + 100 * family_index + 10 * shape_index
            for label, size in plan.sizes.items():
                case = build_case(family, shape, size, seed)
                check(codec, case)
                oneshot = oneshot_seconds(codec, case, plan.samples(0), plan.min_sample)
                per_delta: dict[int, float] = {}
                runs: dict[int, int] = {}
                for step in DELTAS:
                    count = math.ceil(len(case.text) / step)
                    runs[step] = plan.samples(count)
                    per_delta[step] = stream_seconds(codec, case, step, runs[step], plan.min_sample) / count * 1e6
                rows.append(
                    Row(family, shape, label, len(case.text), case.megabytes, case.megabytes / oneshot, per_delta, runs)
                )
                log(
                    f"  {family:14} {shape:10} {label:>6}: {rows[-1].oneshot_mb_s:7.1f} MB/s, {per_delta[4]:.2f} µs/4-char delta"
                )
            small = build_case(family, shape, plan.growth_n, seed)
            large = build_case(family, shape, 2 * plan.growth_n, seed)
            check(codec, small)
            check(codec, large)
            oneshot = functools.partial(oneshot_seconds, codec, samples=1, min_sample=plan.min_sample)
            streamed = functools.partial(stream_seconds, codec, step=4, samples=1, min_sample=plan.min_sample)
            oneshot_ratio = growth_ratio(oneshot, small, large, rounds=5)
            stream_ratio = growth_ratio(streamed, small, large, rounds=3)
            biggest = build_case(family, shape, max(plan.sizes.values()), seed)
            peak = peak_memory(codec, biggest)
            growth.append(
                Growth(
                    family,
                    shape,
                    plan.growth_n,
                    oneshot_ratio,
                    stream_ratio,
                    peak,
                    len(biggest.text.encode("utf-8")),
                    biggest.label,
                )
            )
            log(
                f"  {family:14} {shape:10} growth x2: one-shot {growth[-1].oneshot:.2f}, stream {growth[-1].stream:.2f}"
            )
    return rows, growth


# ---- reporting -----------------------------------------------------------------------------


def report(rows: list[Row], growth: list[Growth], plan: Plan) -> str:
    lines = [
        "| family | shape | size | one-shot MB/s | µs/delta @1 | µs/delta @4 | µs/delta @16 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cells = [f"{row.us_per_delta[step]:.2f}" for step in DELTAS]
        lines.append(
            f"| {row.family} | {row.shape} | {row.size} | {row.oneshot_mb_s:.1f} | " + " | ".join(cells) + " |"
        )
    n = size_label(plan.growth_n)
    biggest = growth[0].peak_size if growth else ""
    lines += [
        "",
        (
            f"| family | shape | growth one-shot ({n} → ×2) | growth stream @4 ({n} → ×2) "
            f"| µs/delta @4, {biggest} ÷ {rows[0].size if rows else ''} | peak memory, one-shot {biggest} |"
        ),
        "|---|---|---:|---:|---:|---:|",
    ]
    for item in growth:
        ratio = item.peak_bytes / item.peak_input_bytes
        lines.append(
            f"| {item.family} | {item.shape} | {item.oneshot:.2f} | {item.stream:.2f} | {flatness(rows, item):.2f} | "
            f"{item.peak_bytes / 1e6:.1f} MB ({ratio:.1f}× input) |"
        )
    lines += ["", *targets(rows, growth)]
    return "\n".join(lines)


def flatness(rows: list[Row], item: Growth) -> float:
    """Cost of a 4-character delta at the largest size over the same at the smallest."""
    series = [row.us_per_delta[4] for row in rows if (row.family, row.shape) == (item.family, item.shape)]
    return series[-1] / series[0]


def targets(rows: list[Row], growth: list[Growth]) -> list[str]:
    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    at_100k = [row for row in rows if row.chars >= 90_000 and row.chars < 900_000]
    lines = ["Targets:", ""]
    if at_100k:
        slow = [f"{r.family}/{r.shape} {r.oneshot_mb_s:.1f}" for r in at_100k if r.oneshot_mb_s < TARGET_ONESHOT_MB_S]
        lines.append(
            f"- one-shot >= {TARGET_ONESHOT_MB_S:g} MB/s at 100 KB: {verdict(not slow)}"
            + (
                f" (below: {', '.join(slow)})"
                if slow
                else f" (slowest {min(r.oneshot_mb_s for r in at_100k):.1f} MB/s)"
            )
        )
    median_4 = statistics.median(row.us_per_delta[4] for row in rows)
    worst_4 = max(rows, key=lambda r: r.us_per_delta[4])
    lines.append(
        f"- streaming at 4-char deltas <= {TARGET_DELTA_US:g} µs/delta (median over all rows): "
        f"{verdict(median_4 <= TARGET_DELTA_US)} (median {median_4:.2f}, worst {worst_4.us_per_delta[4]:.2f} "
        f"µs, {worst_4.family}/{worst_4.shape}/{worst_4.size})"
    )
    if growth:
        flat = [flatness(rows, item) for item in growth]
        lines.append(
            f"- streaming cost flat from {rows[0].size} to {growth[0].peak_size} (µs/delta @4, largest ÷ smallest): "
            f"between {min(flat):.2f} and {max(flat):.2f}"
        )
        worst_growth = max(max(g.oneshot, g.stream) for g in growth)
        lines.append(
            f"- growth time(2n)/time(n) <= {TARGET_GROWTH:g}: {verdict(worst_growth <= TARGET_GROWTH)} (worst {worst_growth:.2f})"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 100 KB, fewer repetitions")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH ('-' for stdout)")
    parser.add_argument("--family", action="append", choices=FAMILIES, help="only this family (repeatable)")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    families = args.family or list(FAMILIES)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log(
        f"chatcodec {chatcodec.__version__ if hasattr(chatcodec, '__version__') else ''} "
        f"on Python {platform.python_version()}, {platform.machine()}"
    )
    started = time.perf_counter()
    rows, growth = measure(plan, families, log)
    log(f"done in {time.perf_counter() - started:.0f} s")
    table = report(rows, growth, plan)
    if args.json == "-":
        print(json.dumps({"rows": [asdict(r) for r in rows], "growth": [asdict(g) for g in growth]}, indent=2))
        log(table)
        return 0
    print(table)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": [asdict(r) for r in rows], "growth": [asdict(g) for g in growth]}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
