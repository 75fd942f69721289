"""Where a prompt leaves the assistant's turn: the state a completion's parse starts in.

A prompt that ends with the template's generation prompt leaves an assistant turn open, maybe
with a prefill the template or the caller wrote: ``<think>\\n`` (inside reasoning), an empty
think block (in content), the start of a tool call a server forces. The state is read from the
prompt's tail only: from its last assistant header on. User text earlier in the prompt cannot
move it (a user message that spells a header is followed by the real generation prompt), and
prompts that share a tail share one cached state.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from chatcodec.formats.base import Format
from chatcodec.parse.assistant import AssistantAssembler, ReaderState
from chatcodec.parse.engine import Engine

# (The format is kept beside its state: an id is reused once its format is freed, and a state
# read in another format must not be taken for this one's.)
_CACHE: OrderedDict[tuple[int, str], tuple[Format, PromptState]] = OrderedDict()
_CACHE_SIZE = 4096


@dataclass(frozen=True)
class PromptState:
    """The open assistant turn a prompt ends with.

    ``prefill`` is its text after the header (``""`` when the prompt ends with the header, or
    does not end inside an assistant turn); ``state`` is where that text leaves off:
    ``content``, ``reasoning``, ``tool_call`` (with ``tool_name`` and the ``tool_arguments``
    written so far) or ``undecided``.
    """

    prefill: str
    state: ReaderState
    tool_name: str | None = None
    tool_arguments: str = ""


START = PromptState("", "content")


# The last prompt read, and its state: completions of one prompt (several samples, retries)
# are often parsed one after another with the same prompt object.
_last: tuple[Format | None, str | None, PromptState] = (None, None, START)


def prompt_state(found: Format, prompt: str) -> PromptState:
    """The state a completion of ``prompt`` starts in (see the module docstring)."""
    global _last
    last = _last
    if last[1] is prompt and last[0] is found:
        return last[2]
    state = _prompt_state(found, prompt)
    _last = (found, prompt, state)
    return state


def _prompt_state(found: Format, prompt: str) -> PromptState:
    headers = _header_spellings(found)
    cut = -1
    for header in headers:
        at = prompt.rfind(header)
        if at >= 0 and at + len(header) > cut:
            cut = at + len(header)
    if cut < 0:
        return START
    return prefill_state(found, prompt[cut:])


def prefill_state(found: Format, prefill: str) -> PromptState:
    """The state the text after an assistant header leaves, read as a prompt's is: to its end
    (a ``<think>`` it ends with is the opening tag, whatever the completion writes next)."""
    key = (id(found), prefill)
    known = _CACHE.get(key)
    if known is None or known[0] is not found:
        state = _read_prefill(found, prefill)
        _CACHE[key] = (found, state)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return state
    _CACHE.move_to_end(key)
    return known[1]


_HEADERS: dict[int, tuple[Format, list[str]]] = {}


def _header_spellings(found: Format) -> list[str]:
    """The assistant headers' spellings, and the ends of a tool's turn that has one of its own:
    in a format that answers a call inside the assistant's turn (Gemma 4's
    ``<tool_response|>``), the assistant goes on after it with no header (a template may open
    its reasoning there: ``<|channel>thought\n``)."""
    known = _HEADERS.get(id(found))
    if known is None or known[0] is not found:
        grammar = found.grammar
        tool_ends = found.turn_ends - found.end
        terminals = [*found.assistant_start, *sorted(tool_ends)]
        known = (found, [spelling for terminal in terminals for spelling in grammar.spellings_of(terminal)])
        if len(_HEADERS) >= _CACHE_SIZE:
            _HEADERS.clear()
        _HEADERS[id(found)] = known
    return known[1]


def _read_prefill(found: Format, prefill: str) -> PromptState:
    """Read the text after the last assistant header as the start of a completion; if it is not
    one (the turn ended, or another turn followed), the prompt leaves no turn open."""
    if not prefill:
        return START
    if "completion_unprompted" in found.grammar.starts:
        # A format whose turns may open with reasoning and no opening tag (Apriel 1.6 writes
        # its reasoning right after the header): a prefill of plain text may be either, until
        # the completion shows which (``continue_final_message="reasoning_content"``).
        undecided = _read_from(found, prefill, "completion_unprompted")
        if undecided is not None and undecided.state == "undecided":
            return undecided
    return _read_from(found, prefill, "completion") or START


def _read_from(found: Format, prefill: str, start: str) -> PromptState | None:
    """The state ``prefill`` leaves, read from ``start``; None where it leaves no turn open. (A
    delimiter out of its place in it is text of the answer, as in a completion: a model that
    wrote ``</think>`` with no block open, then began a call, has the call open.)"""
    engine = Engine(found.grammar, start)
    assembler = AssistantAssembler(found)
    pieces = engine.feed(prefill) + engine.settle()
    assembler.handle(pieces)
    if assembler.ended:
        return None
    call = assembler.open_call
    return PromptState(
        prefill,
        assembler.state,
        call.name if call is not None else None,
        "".join(call.arguments_parts) if call is not None else "",
    )
