"""JSONL datasets, one conversation per line, split so that any engine can check them in parts.

A job (a round-trip check, token masks) turns one line into counts in a summary, plus what is
to be written for that line: the reason it is invalid, its loss report, an output line. A file
is split into blocks of bytes; a block holds the lines that *start* inside it, so every line
belongs to exactly one block whatever the boundaries, and the blocks can be read by different
processes or machines. Summaries of blocks merge into the summary of the whole run.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar


class InvalidLine(Exception):
    """Why one line is not a conversation that can be checked (the run goes on without it)."""


class NoSuchFiles(Exception):
    """A pattern or path given for the dataset that names no readable file."""


S = TypeVar("S", bound="Summary")


class Summary(Protocol):
    """Counts over lines; two summaries of disjoint lines add up to the summary of both."""

    invalid: int

    def merge(self: S, other: S) -> S: ...

    def exit_code(self) -> int: ...

    def to_dict(self) -> dict[str, Any]: ...

    def table(self) -> str: ...


@dataclass
class Outcome:
    """What one line leaves besides its counts (lines with nothing to write have none)."""

    error: str | None = None  # why the line is invalid
    report: dict[str, Any] | None = None  # the loss report of a lossy conversation
    output: str | None = None  # a line for the output file, without its newline

    @property
    def failed(self) -> bool:
        return self.error is not None or self.report is not None

    def failure(self, source: str, line: int) -> dict[str, Any]:
        """The record ``--failures`` writes: where the line is, and what went wrong."""
        record: dict[str, Any] = {"source": source, "line": line}
        if self.error is not None:
            record["error"] = self.error
        if self.report is not None:
            record["report"] = self.report
        return record


class Job(Protocol[S]):
    """One kind of check over lines. Must pickle: engines send it to other processes."""

    def summary(self) -> S:
        """An empty summary."""
        ...

    def line(self, summary: S, raw: bytes, first: bool) -> Outcome | None:
        """Count one non-blank line into ``summary``; ``first`` when it is its file's first
        line (which may start with a byte-order mark). Invalid input is counted and returned
        as an ``Outcome`` with an ``error``; an exception here is a bug, not bad input."""
        ...


@dataclass(frozen=True)
class Block:
    """The lines of ``path`` that start at a byte offset in ``[start, end)``."""

    source: str  # the file as the user named it, for reports
    path: str  # the same file, absolute, for workers that do not share the caller's directory
    start: int
    end: int


@dataclass
class BlockResult(Generic[S]):
    block: Block
    summary: S
    lines: int  # every line the block holds, blank ones too: the next block's numbering starts after them
    # (line number within the block, from 1; what the line left)
    outcomes: list[tuple[int, Outcome]] = field(default_factory=list)


def expand(patterns: Sequence[str]) -> list[str]:
    """The files the user named: paths as given, globs expanded (sorted, so that a run over the
    same files always reads them in the same order), each file once. ``-`` is stdin."""
    paths: list[str] = []
    for pattern in patterns:
        if pattern != "-" and glob.has_magic(pattern):
            found = sorted(path for path in glob.glob(pattern, recursive=True) if os.path.isfile(path))
            if not found:
                raise NoSuchFiles(f"no file matches {pattern!r}")
            paths += found
        else:
            paths.append(pattern)
    return list(dict.fromkeys(paths))


def file_size(path: str) -> int:
    try:
        if not os.path.isfile(path):
            raise NoSuchFiles(f"cannot read {path}: not a regular file")
        with open(path, "rb"):  # readable, not only present: fail here rather than in a worker
            return os.path.getsize(path)
    except OSError as exc:
        raise NoSuchFiles(f"cannot read {path}: {exc.strerror}") from None


def plan_blocks(paths: Sequence[str], block_bytes: int) -> list[Block]:
    """Every file cut into blocks of about ``block_bytes`` (an empty file is one empty block)."""
    if block_bytes < 1:
        raise ValueError(f"block_bytes must be positive, got {block_bytes}")
    blocks: list[Block] = []
    for path in paths:
        size, absolute = file_size(path), os.path.abspath(path)
        starts = range(0, max(size, 1), block_bytes)
        blocks += [Block(path, absolute, start, min(start + block_bytes, size)) for start in starts]
    return blocks


def block_size_for(total_bytes: int, slots: int) -> int:
    """Bytes per block: several blocks per worker thread, so that a slow block (long
    conversations cluster in a file) does not leave the others idle at the end, but not so
    small that per-task overhead shows; capped so that no result held for ordering is large."""
    per_slot = total_bytes // max(1, slots * 8)
    return max(64 * 1024, min(per_slot, 16 * 1024 * 1024))


def read_block(block: Block) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of the block, newline included, blank ones too."""
    with open(block.path, "rb") as handle:
        position = block.start
        if block.start > 0:
            # A line that runs into the block from before belongs to the block it starts in.
            handle.seek(block.start - 1)
            if handle.read(1) != b"\n":
                position += len(handle.readline())
        # Lines split on b"\n" only: JSON text holds no raw newline, while U+2028 and friends
        # inside strings must not split a line.
        while position < block.end:
            raw = handle.readline()
            if not raw:
                break
            yield position, raw
            position += len(raw)


def run_block(job: Job[S], block: Block) -> BlockResult[S]:
    """Check every line of one block; runs wherever the engine sends it."""
    summary = job.summary()
    result = BlockResult(block, summary, 0)
    for result.lines, (offset, raw) in enumerate(read_block(block), start=1):
        if not raw.strip():  # blank lines (a trailing one, say) are not conversations
            continue
        try:
            outcome = job.line(summary, raw, offset == 0)
        except Exception as exc:
            # A bug, not bad input: say where, since the worker's traceback alone does not.
            raise RuntimeError(f"internal error while checking the line at byte {offset} of {block.source}") from exc
        if outcome is not None:
            result.outcomes.append((result.lines, outcome))
    return result
