"""JSONL runs from the command line: one conversation per line, over one file, several, or a
glob, on this process (``--engine local``, streaming; stdin too) or on a Dask cluster
(``--engine dask``). Both engines print the same warnings, write the same ``--failures`` and
output lines in the same order, and end with the same summary and exit code.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import IO, Any

from chatcodec.check.jsonl import BlockResult, Job, NoSuchFiles, Outcome, S, expand, file_size
from chatcodec.cli.errors import CliError


class Progress:
    """A one-line progress report on stderr, rewritten in place with ``\r``.

    Redrawn at most every ``interval`` seconds so that a fast run is not slowed by the terminal.
    """

    def __init__(self, stream: IO[str], total_bytes: int | None, enabled: bool, interval: float = 0.1) -> None:
        self.stream = stream
        self.total = total_bytes
        self.enabled = enabled
        self.interval = interval
        self._last_draw = float("-inf")
        self._width = 0

    def update(self, lines: int, done_bytes: int, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        noun = "line" if lines == 1 else "lines"
        self._draw(f"{lines} {noun}, {_size(done_bytes)}" + self._of_total(done_bytes))

    def _of_total(self, done_bytes: int) -> str:
        if not self.total:
            return ""
        return f" of {_size(self.total)} ({100 * done_bytes // self.total}%)"

    def _draw(self, line: str) -> None:
        # Pad over what the previous, possibly longer, line left behind.
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def clear(self) -> None:
        """Blank the line, so that a warning printed next starts at column 0."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
            self._last_draw = float("-inf")  # redraw at the next update

    def finish(self, lines: int, done_bytes: int) -> None:
        if self.enabled:
            self.update(lines, done_bytes, force=True)
            self.stream.write("\n")
            self.stream.flush()


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    value = count / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


@contextmanager
def _jsonl_source(path: str) -> Iterator[tuple[IO[bytes], int | None]]:
    """The JSONL source as bytes, and its size when it is a regular file (for a percentage)."""
    if path == "-":
        yield sys.stdin.buffer, _regular_size(sys.stdin.buffer)
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the with below closes it; this try is for opening only
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        yield handle, _regular_size(handle)


def _regular_size(handle: IO[bytes]) -> int | None:
    try:
        info = os.fstat(handle.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None  # not a real file (a pipe, a test's stand-in): no percentage
    return info.st_size if stat.S_ISREG(info.st_mode) else None



def add_run_options(p: argparse.ArgumentParser, jsonl_help: str, *, required: bool = False) -> None:
    """``--jsonl``, ``--failures``, progress and the engine: what every JSONL command takes."""
    p.add_argument("--jsonl", action="append", metavar="FILE", required=required, help=jsonl_help)
    p.add_argument(
        "--failures",
        metavar="FILE",
        help="with --jsonl, write each failing line there as JSON: source, line, and the error or report",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --jsonl, show progress on stderr (default: when stderr is a terminal)",
    )
    p.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="local: this process, reading line by line (default); dask: blocks of the files on a Dask cluster",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --engine dask, the scheduler to use (tcp://host:8786)")
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="with --engine dask and no --scheduler, worker processes of the local cluster (default: one per core)",
    )


def check_run_options(args: argparse.Namespace) -> None:
    """Options that only mean something together, refused up front rather than ignored."""
    if args.jsonl is None:
        for given, name in ((args.failures, "--failures"), (args.engine != "local", "--engine dask")):
            if given:
                raise CliError(f"{name} goes with --jsonl FILE")
    if args.engine != "dask":
        for given, name in ((args.scheduler, "--scheduler"), (args.workers is not None, "--workers")):
            if given:
                raise CliError(f"{name} goes with --engine dask")
    if args.scheduler is not None and args.workers is not None:
        raise CliError("--workers starts a local cluster; with --scheduler the cluster's own workers run the job")
    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")


def dataset_paths(patterns: Sequence[str], engine: str) -> list[str]:
    try:
        paths = expand(patterns)
    except NoSuchFiles as exc:
        raise CliError(str(exc)) from None
    if "-" in paths and engine == "dask":
        raise CliError("--engine dask splits files among workers; stdin cannot be split (save it to a file)")
    return paths


class Sink:
    """Where what lines leave goes: warnings on stderr, failures and output lines to files."""

    def __init__(self, progress: Progress, failures: IO[str] | None, output: IO[str] | None, name_files: bool) -> None:
        self.progress = progress
        self.failures = failures
        self.output = output
        self.name_files = name_files  # several files: a line number alone does not say where

    def where(self, source: str, number: int) -> str:
        return f"{source}: line {number}" if self.name_files else f"line {number}"

    def take(self, source: str, number: int, outcome: Outcome) -> None:
        if outcome.error is not None:
            self.progress.clear()
            print(f"chatcodec: warning: {self.where(source, number)} is invalid: {outcome.error}", file=sys.stderr)
        if outcome.failed and self.failures is not None:
            self.failures.write(json.dumps(outcome.failure(source, number), ensure_ascii=False) + "\n")
        if outcome.output is not None and self.output is not None:
            self.output.write(outcome.output + "\n")


def run_job(job: Job[S], args: argparse.Namespace, output: IO[str] | None = None) -> S:
    """Run ``job`` over the ``--jsonl`` files with the chosen engine; the run's summary."""
    paths = dataset_paths(args.jsonl, args.engine)
    enabled = args.progress if args.progress is not None else sys.stderr.isatty()
    opened: AbstractContextManager[IO[str] | None]
    opened = _open_for_writing(args.failures, "--failures") if args.failures else nullcontext(None)
    with opened as failures:
        sink = Sink(Progress(sys.stderr, _total_size(paths), enabled), failures, output, len(paths) > 1)
        if args.engine == "dask":
            return _run_dask(job, paths, args, sink)
        return _run_local(job, paths, sink)


@contextmanager
def _open_for_writing(path: str, option: str) -> Iterator[IO[str]]:
    try:
        handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - the with below closes it
    except OSError as exc:
        raise CliError(f"{option}: cannot write {path}: {exc.strerror}") from None
    with handle:
        yield handle


def _total_size(paths: Sequence[str]) -> int | None:
    if "-" in paths:
        return None  # stdin's size is known only when it is a regular file; see _run_local
    try:
        return sum(file_size(path) for path in paths)
    except NoSuchFiles:
        return None  # reported when the file is opened


def _run_local(job: Job[S], paths: Sequence[str], sink: Sink) -> S:
    summary = job.summary()
    progress = sink.progress
    done = lines = 0
    for path in paths:
        with _jsonl_source(path) as (handle, size):
            if path == "-" and len(paths) == 1:
                progress.total = size
            source = "<stdin>" if path == "-" else path
            # Iterating a binary file reads it a buffer at a time and splits on b"\n" only: JSON text
            # never holds a raw newline, and U+2028 and friends inside strings must not split a line.
            for number, raw in enumerate(handle, start=1):
                done += len(raw)
                lines += 1
                if raw.strip():  # blank lines (a trailing one, say) are not conversations
                    _take_line(job, summary, sink, source, number, raw)
                progress.update(lines, done)
    progress.finish(lines, done)
    return summary


def _take_line(job: Job[S], summary: S, sink: Sink, source: str, number: int, raw: bytes) -> None:
    try:
        outcome = job.line(summary, raw, number == 1)
    except Exception:
        # A bug, not bad input: let the traceback through, but say which line set it off.
        sink.progress.clear()
        print(f"chatcodec: internal error while checking {sink.where(source, number)}", file=sys.stderr)
        raise
    if outcome is not None:
        sink.take(source, number, outcome)


def _run_dask(job: Job[S], paths: Sequence[str], args: argparse.Namespace, sink: Sink) -> S:
    from chatcodec.check import distributed

    lines = done = 0
    numbered: dict[str, int] = {}  # lines already handled per file: numbers within a block start after them

    def on_block(result: BlockResult[Any]) -> None:
        nonlocal lines, done
        block = result.block
        before = numbered.get(block.source, 0)
        for number, outcome in result.outcomes:
            sink.take(block.source, before + number, outcome)
        numbered[block.source] = before + result.lines
        lines += result.lines
        done += block.end - block.start
        sink.progress.update(lines, done)

    try:
        for path in paths:
            file_size(path)  # a missing file is reported before a cluster is started for nothing
        with distributed.connect(args.scheduler, args.workers) as client:
            summary = distributed.run(job, paths, client, on_block=on_block)
    except (distributed.EngineUnavailable, NoSuchFiles) as exc:
        raise CliError(str(exc)) from None
    sink.progress.finish(lines, done)
    return summary
