"""Render -> parse -> render, and what a template loses on the way, field by field."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from chatcodec.formats.base import Format
from chatcodec.messages import Message
from chatcodec.parse.transcript import Transcript

# The kinds of loss a report can list (the CLI's summary table counts them).
LOSS_KINDS = (
    "injection_risk",
    "text_not_reproduced",
    "text_not_read",
    "message_not_recovered",
    "reasoning_not_rendered",
    "reasoning_moved",
    "reasoning_changed",
    "whitespace_trimmed",
    "content_changed",
    "tool_calls_not_rendered",
    "tool_call_id_not_rendered",
    "prefix_changed",
    "arguments_reserialized",
    "arguments_changed",
    "tool_call_changed",
    "tool_call_id_reference_not_rendered",
    "name_not_rendered",
    "field_not_rendered",
    "tools_not_rendered",
    "tools_not_read",
    "tools_changed",
)


@dataclass(frozen=True)
class Loss:
    """One thing the template does not carry through. ``message`` is the index in the input."""

    kind: str
    description: str
    message: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = f"message {self.message}: " if self.message is not None else ""
        return where + self.description


@dataclass
class RoundTripReport:
    """What happened to a conversation rendered, parsed back and rendered again."""

    text: str
    rerendered: str
    transcript: Transcript
    losses: list[Loss] = field(default_factory=list)

    @property
    def text_survived(self) -> bool:
        """The re-render of the recovered conversation is the same text, byte for byte."""
        return self.text == self.rerendered

    @property
    def injection_risks(self) -> list[Loss]:
        return [loss for loss in self.losses if loss.kind == "injection_risk"]

    @property
    def lossless(self) -> bool:
        return self.text_survived and not self.losses

    def summary(self) -> str:
        lines = [
            "text survived render -> parse -> render: " + ("yes" if self.text_survived else "NO"),
            "lossless: " + ("yes" if self.lossless else "no"),
        ]
        lines += [f"- {loss}" for loss in self.losses]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text_survived": self.text_survived,
            "lossless": self.lossless,
            "losses": [
                {"kind": loss.kind, "message": loss.message, "field": loss.field, "description": loss.description}
                for loss in self.losses
            ],
        }


def text_loss(text: str, rerendered: str) -> Loss:
    """The loss that says where rendering the recovered conversation first differs."""
    at = next((i for i, (a, b) in enumerate(zip(text, rerendered)) if a != b), min(len(text), len(rerendered)))
    return Loss(
        "text_not_reproduced",
        f"rendering the recovered conversation differs from the original text at character {at}: "
        f"{text[at:at + 30]!r} vs {rerendered[at:at + 30]!r}",
    )


def delimiters_in(family: Format, value: str) -> list[tuple[str, str]]:
    """The format's delimiters spelled inside ``value``: (spelling, terminal), longest first."""
    found: list[tuple[str, str]] = []
    spellings = family.grammar.spellings
    for spelling in sorted(spellings, key=len, reverse=True):
        core = spelling.strip()
        if len(core) < 2 or core not in value:
            continue
        if any(core in longer for longer, _ in found):
            continue
        found.append((core, spellings[spelling]))
    return found


def _string_fields(message: Message) -> list[tuple[str, str]]:
    fields = [("content", message.text), ("reasoning_content", message.reasoning_content or "")]
    for i, call in enumerate(message.tool_calls or []):
        fields.append((f"tool_calls[{i}].function.name", call.function.name))
        fields.append((f"tool_calls[{i}].function.arguments", call.function.arguments))
    return [(name, value) for name, value in fields if value]


def injection_risks(family: Format, messages: list[Message]) -> list[Loss]:
    losses = []
    for index, message in enumerate(messages):
        for field_name, value in _string_fields(message):
            for spelling, terminal in delimiters_in(family, value):
                losses.append(
                    Loss(
                        "injection_risk",
                        f"{field_name} contains {spelling!r}, the format's {terminal} delimiter: the rendered "
                        "text is ambiguous and may parse as a different conversation",
                        index,
                        field_name,
                    )
                )
    return losses


def compare(
    family: Format,
    original: list[Message],
    tools: list[dict[str, Any]] | None,
    transcript: Transcript,
) -> list[Loss]:
    """Explain every difference between the conversation given and the one recovered."""
    losses = injection_risks(family, original) + _tool_injection_risks(family, tools)
    for start, end in transcript.unparsed:
        # (Text the template writes that the transcript reads as no message and no part of the
        # template it knows: a system prompt a template variable changed, such as gpt-oss's
        # ``reasoning_effort``.)
        losses.append(
            Loss("text_not_read", f"characters {start}-{end} of the rendered text are read as no message ({_short(transcript.text[start:end])})")
        )
    recovered = transcript.messages
    last_user = max((i for i, m in enumerate(original) if m.role == "user"), default=-1)
    think = _think_tags(family)
    for tag, a0, a1, b0, b1 in _aligned([m.role for m in original], [m.role for m in recovered]):
        if tag == "equal":
            for offset in range(a1 - a0):
                losses += _compare_message(
                    a0 + offset, original[a0 + offset], recovered[b0 + offset], last_user, think
                )
            continue
        for index in range(a0, a1):
            message = original[index]
            losses.append(
                Loss(
                    "message_not_recovered",
                    f"{message.role} message not recovered as a message of its own (the template merges it "
                    "with a neighbour or does not render it)",
                    index,
                )
            )
    if tools and transcript.tools is None:
        losses.append(Loss("tools_not_rendered", "tools not rendered by this template", field="tools"))
    elif tools and transcript.tools_unread:
        losses.append(
            Loss("tools_not_read", "the template writes tool definitions in a form of its own, not read back", field="tools")
        )
    elif tools and transcript.tools is not None and [_plain(t) for t in tools] != transcript.tools:
        losses.append(Loss("tools_changed", "tool definitions do not come back unchanged", field="tools"))
    return losses


def _aligned(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes for two role sequences, in linear time where they agree: the common
    start and end are matched directly, and only what lies between is aligned (a role list
    has few distinct symbols, which makes difflib quadratic on long conversations)."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    opcodes: list[tuple[str, int, int, int, int]] = []
    if start:
        opcodes.append(("equal", 0, start, 0, start))
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    if middle_a or middle_b:
        if len(middle_a) * len(middle_b) <= 4_000_000:
            matcher = difflib.SequenceMatcher(a=middle_a, b=middle_b, autojunk=False)
            for tag, a0, a1, b0, b1 in matcher.get_opcodes():
                opcodes.append((tag, start + a0, start + a1, start + b0, start + b1))
        else:
            opcodes.append(("replace", start, start + len(middle_a), start, start + len(middle_b)))
    if end:
        opcodes.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return opcodes


def _tool_injection_risks(family: Format, tools: list[Any] | None) -> list[Loss]:
    """Delimiters spelled in tool definitions (a description quoting ``<|im_start|>``): the
    template writes them into the prompt, where a tokenizer makes them real."""
    losses = []
    for index, tool in enumerate(tools or []):
        for path, value in _strings_in(_plain(tool), f"tools[{index}]"):
            for spelling, terminal in delimiters_in(family, value):
                losses.append(
                    Loss(
                        "injection_risk",
                        f"{path} contains {spelling!r}, the format's {terminal} delimiter: the rendered "
                        "prompt holds it as if the template had written it",
                        field=path,
                    )
                )
    return losses


def _strings_in(value: Any, path: str) -> list[tuple[str, str]]:
    """Every string inside a JSON-like value, with where it is."""
    found: list[tuple[str, str]] = []
    pending: list[tuple[Any, str]] = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            found.append((where, item))
        elif isinstance(item, dict):
            pending.extend((v, f"{where}.{k}") for k, v in item.items())
            pending.extend((k, f"{where} (a key)") for k in item if isinstance(k, str))
        elif isinstance(item, (list, tuple)):
            pending.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
    return found


def _plain(tool: Any) -> Any:
    return tool.to_dict() if hasattr(tool, "to_dict") else tool


def _think_tags(family: Format) -> tuple[str, str] | None:
    """The family's reasoning tags as written inside content (``<think>``, ``</think>``)."""
    grammar = family.grammar
    if not family.reasoning_open or not family.reasoning_close:
        return None
    opening = grammar.literal(min(family.reasoning_open)).strip()
    closing = grammar.literal(min(family.reasoning_close)).strip()
    return opening, closing


def _compare_message(
    index: int, before: Message, after: Message, last_user: int, think: tuple[str, str] | None
) -> list[Loss]:
    losses: list[Loss] = []
    if think is not None and _reasoning_moved(before, after, think):
        opening, closing = think
        losses.append(
            Loss(
                "reasoning_moved",
                f"reasoning written inside content ({opening}...{closing}) comes back as reasoning_content",
                index,
                "content",
            )
        )
    else:
        losses += _compare_content(index, before, after, think)
        losses += _compare_reasoning(index, before, after, last_user)
    losses += _compare_tool_calls(index, before, after)
    if before.tool_call_id is not None and after.tool_call_id is None:
        losses.append(
            Loss("tool_call_id_reference_not_rendered", "tool_call_id not rendered", index, "tool_call_id")
        )
    if before.name is not None and after.name is None:
        losses.append(Loss("name_not_rendered", "name not rendered", index, "name"))
    for key in before.model_extra or {}:
        losses.append(Loss("field_not_rendered", f"field {key!r} is not recovered from the text", index, key))
    return losses


def _reasoning_moved(before: Message, after: Message, think: tuple[str, str]) -> bool:
    """Content "<think>r</think>c" rendered as a think block and read back as reasoning "r"."""
    opening, closing = think
    text = before.text
    if before.reasoning_content or closing not in text or not after.reasoning_content:
        return False
    thought, _, answer = text.partition(closing)
    thought = thought.split(opening)[-1]
    return after.reasoning_content.strip() == thought.strip() and after.text.strip() == answer.strip()


def _compare_content(index: int, before: Message, after: Message, think: tuple[str, str] | None) -> list[Loss]:
    old, new = before.text, after.text
    if old == new:
        return []
    if new == old.strip() or new == old.strip("\n") or new == old.lstrip("\n") or new == old.rstrip():
        return [Loss("whitespace_trimmed", "leading/trailing whitespace of content trimmed", index, "content")]
    if think is not None and think[1] in old and new == old.split(think[1])[-1].lstrip("\n"):
        return [
            Loss(
                "reasoning_not_rendered",
                f"reasoning written inside content ({think[0]}...{think[1]}) not rendered",
                index,
                "content",
            )
        ]
    return [Loss("content_changed", f"content changed: {_short(old)} became {_short(new)}", index, "content")]


def _given_reasoning(message: Message) -> str:
    """The reasoning a message carries: its field, or the thinking parts of its content
    (Mistral's form, ``{"type": "thinking", "thinking": …}``)."""
    if message.reasoning_content is not None or not isinstance(message.content, list):
        return message.reasoning_content or ""
    return "".join(str(part.get("thinking", "")) for part in message.content if part.get("type") == "thinking")


def _compare_reasoning(index: int, before: Message, after: Message, last_user: int) -> list[Loss]:
    old = _given_reasoning(before)
    new = after.reasoning_content or ""
    if old == new:
        return []
    if new == old.strip() or new == old.strip("\n"):
        return [Loss("whitespace_trimmed", "leading/trailing whitespace of reasoning trimmed", index, "reasoning_content")]
    if old and not new:
        why = (
            "the template keeps reasoning only after the last user turn"
            if index < last_user
            else "the template does not render reasoning here"
        )
        return [Loss("reasoning_not_rendered", f"reasoning_content not rendered ({why})", index, "reasoning_content")]
    return [Loss("reasoning_changed", "reasoning_content changed", index, "reasoning_content")]


def _compare_tool_calls(index: int, before: Message, after: Message) -> list[Loss]:
    old = before.tool_calls or []
    new = after.tool_calls or []
    losses: list[Loss] = []
    if len(old) != len(new):
        losses.append(
            Loss(
                "tool_calls_not_rendered",
                f"{len(old)} tool call(s) given, {len(new)} rendered",
                index,
                "tool_calls",
            )
        )
        return losses
    # A parsed call has the id its text gives, or a fresh one: an id given and not read back
    # was not rendered.
    if any(a.id and a.id != b.id for a, b in zip(old, new)):
        losses.append(Loss("tool_call_id_not_rendered", "tool_call id not rendered", index, "tool_calls[].id"))
    for i, (a, b) in enumerate(zip(old, new)):
        where = f"tool_calls[{i}]"
        if a.function.name != b.function.name:
            losses.append(Loss("tool_call_changed", f"{where} name changed", index, f"{where}.function.name"))
        if a.function.arguments == b.function.arguments:
            continue
        if _same_json(a.function.arguments, b.function.arguments):
            losses.append(
                Loss(
                    "arguments_reserialized",
                    f"{where} arguments re-serialized: spacing or key order differs",
                    index,
                    f"{where}.function.arguments",
                )
            )
        else:
            losses.append(
                Loss("arguments_changed", f"{where} arguments changed", index, f"{where}.function.arguments")
            )
    return losses


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except (ValueError, RecursionError):
        return False


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
