"""Running a JSONL job (round trips, masks) on a Dask cluster.

Files are cut into byte blocks (``chatcodec.check.jsonl``); each block is one task that returns
its summary and what its lines left to write. Results are taken back in file and line order, so
warnings, failures and output lines come out in the order a single process writes them, and
block summaries merge into the run's. Workers read the files themselves: with a remote
scheduler, the paths must be readable on every worker (a shared disk), and chatcodec (and the
tokenizer file, for masks) installed there.

Dask is imported only here, and only when a run asks for it.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from chatcodec.check.jsonl import BlockResult, Job, S, block_size_for, file_size, plan_blocks, run_block

INSTALL_HINT = "pip install 'chatcodec[dask]'"


class EngineUnavailable(Exception):
    """Dask is not installed, or the scheduler cannot be reached."""


def _distributed() -> ModuleType:
    try:
        import distributed
    except ImportError:
        raise EngineUnavailable(f"--engine dask needs Dask's distributed scheduler: {INSTALL_HINT}") from None
    return distributed


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None, *, timeout: float = 30) -> Iterator[Any]:
    """A ``distributed.Client``: to the scheduler at ``scheduler``, or to a local cluster of
    ``workers`` processes (default: one per core) that lives as long as the ``with`` block.

    One thread per worker process: a round trip is pure Python and holds the GIL, so threads
    would only take turns.
    """
    distributed = _distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise EngineUnavailable(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    cluster = distributed.LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        # Any free port: the default one may be taken by another cluster, and the warning
        # Dask prints then would land among the run's own output on stderr.
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def run(
    job: Job[S],
    paths: Sequence[str],
    client: Any,
    *,
    block_bytes: int | None = None,
    on_block: Callable[[BlockResult[S]], None] | None = None,
) -> S:
    """Run ``job`` over every line of ``paths`` on ``client``'s cluster; the merged summary.

    ``on_block`` sees each block's result in file and line order (the CLI writes warnings,
    failures and outputs from it). ``block_bytes`` defaults to several blocks per worker thread.
    """
    if block_bytes is None:
        slots = sum(client.nthreads().values()) or 1
        block_bytes = block_size_for(sum(file_size(path) for path in paths), slots)
    blocks = plan_blocks(paths, block_bytes)
    # Sent to every worker once, not pickled again into each of the block tasks.
    # A fresh key (hash=False): a job scattered by an earlier run may be on its way out.
    [shared] = client.scatter([job], broadcast=True, hash=False)
    pending = deque(client.map(run_block, [shared] * len(blocks), blocks, pure=False))
    summary = job.summary()
    try:
        while pending:  # in order: later blocks keep computing while one is handled
            # Dropping the future lets the cluster forget a result once it is handled.
            result = pending.popleft().result()
            summary = summary.merge(result.summary)
            if on_block is not None:
                on_block(result)
    finally:
        # On an error or an interrupt, the rest of a run that is over stops computing.
        if pending:
            client.cancel(list(pending))
    return summary
