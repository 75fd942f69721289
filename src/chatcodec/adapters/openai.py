"""OpenAI wire shapes for parsed output: streaming chunks, whole responses, Server-Sent Events.

Sans-I/O like the parser: ``ChunkAdapter.chunks(events)`` turns the events a ``StreamParser``
returns into ``chat.completion.chunk`` dicts, and ``to_sse`` frames one for an HTTP response.
Nothing here sends, receives or waits; the ``openai`` package is not needed.

The chunk sequence follows what OpenAI's API streams:

1. one chunk ``{"role": "assistant", "content": ""}``;
2. reasoning and content deltas, in the order the model wrote them (reasoning under
   ``reasoning_content``, as vLLM and DeepSeek send it, or ``reasoning`` on request);
3. per tool call, one chunk with ``index``, ``id``, ``type`` and ``function.name`` (and
   ``arguments: ""``), then chunks holding only ``index`` and an ``arguments`` fragment;
4. a last chunk with an empty delta and the ``finish_reason``.

Concatenating the deltas as an OpenAI client does gives back exactly the parsed message.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from chatcodec.events import (
    ContentDelta,
    Diagnostic,
    Event,
    Finish,
    FinishReason,
    ReasoningDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from chatcodec.messages import Message
from chatcodec.parse.stream import ParseResult, StreamParser

ReasoningField = Literal["reasoning_content", "reasoning"]
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning")

SSE_DONE = "data: [DONE]\n\n"
"""The frame that ends an OpenAI event stream."""

__all__ = [
    "REASONING_FIELDS",
    "SSE_DONE",
    "ChunkAdapter",
    "completion_response",
    "message_to_openai",
    "new_completion_id",
    "stream_chunks",
    "to_sse",
]


def new_completion_id() -> str:
    """A fresh completion id in OpenAI's style (``chatcmpl-`` and 24 hex characters)."""
    return "chatcmpl-" + secrets.token_hex(12)


def _check_reasoning_field(name: str) -> str:
    # Any other key would either be ignored by clients or collide with a standard field.
    if name not in REASONING_FIELDS:
        raise ValueError(f"reasoning_field must be one of {', '.join(REASONING_FIELDS)}, not {name!r}")
    return name


class ChunkAdapter:
    """Turns one completion's events into ``chat.completion.chunk`` dicts.

    Feed it every list of events the parser returns (``feed`` and ``close``), in order. Within
    one call, adjacent deltas of the same kind become one chunk; a ``ToolCallStart`` is always
    a chunk of its own. Diagnostics produce no chunk (OpenAI has no place for them): they are
    collected in ``diagnostics``.
    """

    def __init__(
        self,
        model: str,
        *,
        id: str | None = None,
        created: int | None = None,
        reasoning_field: ReasoningField = "reasoning_content",
        system_fingerprint: str | None = None,
    ) -> None:
        self.model = model
        self.id = id if id is not None else new_completion_id()
        self.created = created if created is not None else int(time.time())
        self.reasoning_field = _check_reasoning_field(reasoning_field)
        self.system_fingerprint = system_fingerprint
        self.diagnostics: list[Diagnostic] = []
        self.finish_reason: FinishReason | None = None
        self._started = False
        # Characters of each call's arguments already sent, so that a ToolCallEnd whose text
        # runs past what the deltas carried is completed rather than silently truncated.
        self._arguments_sent: dict[int, int] = {}

    @property
    def done(self) -> bool:
        """True once the final chunk (with ``finish_reason``) has been produced."""
        return self.finish_reason is not None

    def start(self) -> list[dict[str, Any]]:
        """The opening chunk (role and empty content), once; ``[]`` if already sent.

        ``chunks`` sends it on its own; call this to send it before the model's first token.
        """
        if self._started:
            return []
        self._started = True
        return [self._chunk({"role": "assistant", "content": ""})]

    def chunks(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The chunks for ``events`` (the opening chunk first, on the first call)."""
        if self.done:
            for event in events:
                if not isinstance(event, Diagnostic):
                    raise ValueError("events after the finish chunk")
                self.diagnostics.append(event)
            return []
        out = self.start()
        deltas = self.deltas(events)
        for position, delta in enumerate(deltas):
            last = position == len(deltas) - 1
            out.append(self._chunk(delta, finish_reason=self.finish_reason if last else None))
        return out

    def deltas(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The ``delta`` objects of the chunks for ``events``, without the chunk around them
        (for servers that build their own chunks); the finish gives an empty delta."""
        out: list[dict[str, Any]] = []
        pending: dict[str, Any] | None = None  # the delta being merged into
        for event in events:
            delta = self._delta_for(event)
            if delta is None:
                continue
            if pending is not None and _merge(pending, delta):
                continue
            if pending is not None:
                out.append(pending)
            pending = delta
            if isinstance(event, Finish):
                break
        if pending is not None:
            out.append(pending)
        return out

    # -- one event -> one delta --------------------------------------------------------------

    def _delta_for(self, event: Event) -> dict[str, Any] | None:
        """The delta an event contributes, or None when it contributes nothing."""
        if isinstance(event, ContentDelta):
            return {"content": event.text} if event.text else None
        if isinstance(event, ReasoningDelta):
            return {self.reasoning_field: event.text} if event.text else None
        if isinstance(event, ToolCallStart):
            self._arguments_sent[event.index] = 0
            return {
                "tool_calls": [
                    {
                        "index": event.index,
                        "id": event.id,
                        "type": "function",
                        "function": {"name": event.name, "arguments": ""},
                    }
                ]
            }
        if isinstance(event, ToolCallArgumentsDelta):
            return self._arguments_delta(event.index, event.text)
        if isinstance(event, ToolCallEnd):
            sent = self._arguments_sent.get(event.index, 0)
            delta = self._arguments_delta(event.index, event.arguments[sent:])
            if event.id is not None:
                # The model wrote the call's id after its start (Mistral's "id" last): the
                # client's accumulated call takes the id it wrote.
                delta = delta or {"tool_calls": [{"index": event.index, "function": {"arguments": ""}}]}
                delta["tool_calls"][0]["id"] = event.id
            return delta
        if isinstance(event, Diagnostic):
            self.diagnostics.append(event)
            return None
        if isinstance(event, Finish):
            self.finish_reason = event.reason
            return {}
        raise TypeError(f"not a chatcodec event: {event!r}")

    def _arguments_delta(self, index: int, text: str) -> dict[str, Any] | None:
        if not text:
            return None
        self._arguments_sent[index] = self._arguments_sent.get(index, 0) + len(text)
        return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }
        if self.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.system_fingerprint
        chunk["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
        return chunk


def _merge(into: dict[str, Any], delta: dict[str, Any]) -> bool:
    """Append ``delta`` to ``into`` if both carry text of the same one field; True if merged.

    Only plain text deltas and argument fragments of the same call merge: a tool call's header
    chunk and the finish chunk stay on their own, as OpenAI sends them.
    """
    if not into or not delta or into.keys() != delta.keys():
        return False
    (key,) = into.keys()
    if key != "tool_calls":
        into[key] += delta[key]
        return True
    (last,) = into[key]
    (new,) = delta[key]
    if "id" in last or "id" in new or last["index"] != new["index"]:
        return False
    last["function"]["arguments"] += new["function"]["arguments"]
    return True


def stream_chunks(parser: StreamParser, deltas: Iterable[str], adapter: ChunkAdapter) -> Iterator[dict[str, Any]]:
    """Feed ``deltas`` (text as the model produces it) to ``parser`` and yield every chunk,
    from the opening one to the finish chunk. ``adapter.diagnostics`` fills up as it goes."""
    yield from adapter.start()
    for text in deltas:
        yield from adapter.chunks(parser.feed(text))
    yield from adapter.chunks(parser.close())


def message_to_openai(message: Message, *, reasoning_field: ReasoningField = "reasoning_content") -> dict[str, Any]:
    """The message as an OpenAI message dict (``choices[0].message`` of a response).

    Tool-call arguments are the model's own JSON text; a tool call without an id gets one.
    """
    out = message.to_openai()
    field = _check_reasoning_field(reasoning_field)
    if field != "reasoning_content" and "reasoning_content" in out:
        # Rebuild rather than pop-and-set so the key keeps its place after "content".
        out = {(field if key == "reasoning_content" else key): value for key, value in out.items()}
    return out


def completion_response(
    parsed: ParseResult | Message,
    *,
    model: str,
    finish_reason: FinishReason | None = None,
    id: str | None = None,
    created: int | None = None,
    reasoning_field: ReasoningField = "reasoning_content",
    usage: dict[str, int] | None = None,
    system_fingerprint: str | None = None,
) -> dict[str, Any]:
    """A whole ``chat.completion`` dict for one parsed completion.

    ``parsed`` is what ``Codec.parse_detailed`` (its finish reason is used) or ``Codec.parse``
    returned; for a bare message the finish reason defaults to ``tool_calls`` when it calls
    tools and ``stop`` otherwise.
    """
    if isinstance(parsed, ParseResult):
        message = parsed.message
        reason = finish_reason or parsed.finish_reason
    else:
        message = parsed
        reason = finish_reason or ("tool_calls" if message.tool_calls else "stop")
    response: dict[str, Any] = {
        "id": id if id is not None else new_completion_id(),
        "object": "chat.completion",
        "created": created if created is not None else int(time.time()),
        "model": model,
    }
    if system_fingerprint is not None:
        response["system_fingerprint"] = system_fingerprint
    response["choices"] = [
        {
            "index": 0,
            "message": message_to_openai(message, reasoning_field=reasoning_field),
            "logprobs": None,
            "finish_reason": reason,
        }
    ]
    if usage is not None:
        response["usage"] = usage
    return response


def to_sse(chunk: dict[str, Any]) -> str:
    """One Server-Sent Events frame: ``data: {json}`` and a blank line.

    JSON escapes every line break inside strings, so the frame is always a single data line.
    """
    return "data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")) + "\n\n"
