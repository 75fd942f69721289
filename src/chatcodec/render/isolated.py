"""Rendering in a child process with hard limits: the guarantee the in-process sandbox cannot
give for time (a template's nested loops can run for hours within every size limit).

The child is forked where the platform can fork (it inherits the loaded codec, so it starts in
about a millisecond and needs nothing pickled); elsewhere it is spawned and loads the template
again from its source. Its address space and CPU time are capped with ``setrlimit`` where the
platform has it, and the parent kills it at the wall-clock deadline.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from chatcodec.errors import ChatCodecError, TemplateSecurityError

if TYPE_CHECKING:
    from chatcodec.codec import Codec

DEFAULT_TIMEOUT = 10.0  # seconds of wall-clock time
DEFAULT_MEMORY_MB = 1024  # megabytes the child may add to what it starts with


def render_isolated(
    codec: Codec,
    messages: Any,
    tools: Any = None,
    add_generation_prompt: bool = False,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    **options: Any,
) -> str:
    """``codec.render(...)`` in a child process that is killed after ``timeout`` seconds and
    may not grow by more than ``memory_mb`` megabytes; exceeding either raises
    ``TemplateSecurityError`` naming the limit. Errors of the render itself are raised as
    they would be in process."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    receiving, sending = context.Pipe(duplex=False)
    job = (messages, tools, add_generation_prompt, options)
    if context.get_start_method() == "fork":
        target_args: tuple[Any, ...] = (codec, job, sending, memory_mb, timeout)
    else:
        target_args = (_Reload(codec), job, sending, memory_mb, timeout)
    child = context.Process(target=_child, args=target_args, daemon=True)  # type: ignore[attr-defined]
    child.start()
    sending.close()
    try:
        if not receiving.poll(timeout):
            raise TemplateSecurityError(f"{codec.name}: rendering took longer than the {timeout:g} s time limit")
        try:
            kind, value = receiving.recv()
        except EOFError:
            raise TemplateSecurityError(
                f"{codec.name}: the rendering process died (exit code {child.exitcode}): "
                f"it went past the {memory_mb} MB memory limit or the CPU-time limit"
            ) from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiving.close()
    if kind == "ok":
        return str(value)
    if isinstance(value, BaseException):
        raise value
    raise ChatCodecError(f"{codec.name}: the rendering process failed: {value}")


class _Reload:
    """What a spawned child needs to load the codec again (a codec is not pickled)."""

    def __init__(self, codec: Codec) -> None:
        self.name = codec.name
        template = codec.template
        self.source = template.source
        self.template_name = template.name
        self.special_tokens = dict(template.special_tokens)

    def load(self) -> Codec:
        from chatcodec.codec import Codec
        from chatcodec.render.loading import TemplateSource

        return Codec(TemplateSource(source=self.source, name=self.template_name, special_tokens=self.special_tokens))


def _child(codec: Codec | _Reload, job: tuple[Any, ...], sending: Connection, memory_mb: int, timeout: float) -> None:
    _limit_resources(memory_mb, timeout)
    try:
        loaded = codec.load() if isinstance(codec, _Reload) else codec
        messages, tools, add_generation_prompt, options = job
        sending.send(("ok", loaded.render(messages, tools, add_generation_prompt, **options)))
    except MemoryError:
        sending.send(("error", _over_memory(codec.name, memory_mb)))
    except ChatCodecError as exc:
        # The renderer reports running out of memory as its own error: here that is the cap.
        out_of_memory = isinstance(exc.__context__, MemoryError) or str(exc).endswith("out of memory")
        sending.send(("error", _over_memory(codec.name, memory_mb) if out_of_memory else exc))
    except BaseException:  # anything else is reported, not lost with the child
        sending.send(("error", traceback.format_exc(limit=3).strip().splitlines()[-1]))
    finally:
        sending.close()
        sys.stdout.flush()
        os._exit(0)  # no atexit handlers of the parent run in the child


def _over_memory(name: str, memory_mb: int) -> TemplateSecurityError:
    return TemplateSecurityError(f"{name}: rendering went past the {memory_mb} MB memory limit")


def _limit_resources(memory_mb: int, timeout: float) -> None:
    try:
        import resource
    except ImportError:  # no setrlimit here: the parent's deadline still holds
        return
    grown = _address_space() + memory_mb * 1024 * 1024
    for limit, value in ((resource.RLIMIT_AS, grown), (resource.RLIMIT_CPU, int(timeout) + 1)):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(limit, (value, hard))
        except (ValueError, OSError):
            pass  # a limit the platform refuses leaves the deadline as the guarantee


def _address_space() -> int:
    """The child's address space at start (forked children inherit the parent's mappings)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0
