"""Round trips over many conversations: the settings every line is checked with, and the
counts a run reports. Counts of separate parts of a dataset add up (``BatchSummary.merge``), so
a run split over processes or machines reports the same as one that reads everything in order.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from chatcodec.check.jsonl import InvalidLine, Outcome
from chatcodec.check.roundtrip import LOSS_KINDS, RoundTripReport
from chatcodec.errors import ChatCodecError

if TYPE_CHECKING:
    from chatcodec.codec import Codec

EXIT_LOSSY = 1
EXIT_INVALID = 2


def conversation_parts(data: Any) -> tuple[list[Any], list[Any] | None]:
    """``{"messages": [...], "tools": [...]}`` or a bare list of messages."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"], data.get("tools")
    raise InvalidLine('expected a JSON list of messages or an object {"messages": [...], "tools": [...]}')


def load_line(raw: bytes, first: bool) -> Any:
    """One JSONL line as JSON; ``InvalidLine`` says why it is not. A file's first line may
    start with a UTF-8 byte-order mark (editors on Windows write one)."""
    try:
        return json.loads(raw.decode("utf-8-sig" if first else "utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidLine(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidLine(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InvalidLine("not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise InvalidLine(f"a value that cannot be read: {exc}") from None


@dataclass
class BatchSummary:
    """Counts over a run; reports are not kept, so memory stays flat however long it is."""

    lossless: int = 0
    lossy: int = 0
    invalid: int = 0
    # Per kind of loss: in how many conversations it occurs, and how often in all.
    conversations: Counter[str] = field(default_factory=Counter)
    occurrences: Counter[str] = field(default_factory=Counter)

    @property
    def checked(self) -> int:
        return self.lossless + self.lossy + self.invalid

    def add(self, report: RoundTripReport) -> None:
        self.add_kinds([loss.kind for loss in report.losses])

    def add_kinds(self, kinds: Sequence[str]) -> None:
        """Count one conversation by the kinds of its losses (none: lossless). A report is
        lossless exactly when it lists no loss, since a text that does not come back is one."""
        if not kinds:
            self.lossless += 1
            return
        self.lossy += 1
        self.occurrences.update(kinds)
        self.conversations.update(set(kinds))

    @classmethod
    def from_columns(cls, loss_kinds: Iterable[Sequence[str] | None], errors: Iterable[str | None]) -> BatchSummary:
        """The counts of the columns ``chatcodec.dataset.roundtrip_reports`` adds to a dataset."""
        summary = cls()
        for kinds, error in zip(loss_kinds, errors, strict=True):
            if error is not None:
                summary.invalid += 1
            else:
                summary.add_kinds(kinds or [])
        return summary

    def merge(self, other: BatchSummary) -> BatchSummary:
        """The counts of both runs, as if one run had read both parts."""
        return BatchSummary(
            self.lossless + other.lossless,
            self.lossy + other.lossy,
            self.invalid + other.invalid,
            self.conversations + other.conversations,
            self.occurrences + other.occurrences,
        )

    __add__ = merge

    def kinds(self) -> list[str]:
        """Every kind in ``LOSS_KINDS`` order; a kind the list does not know yet comes last
        rather than being dropped."""
        extra = sorted(kind for kind in self.occurrences if kind not in LOSS_KINDS)
        return list(LOSS_KINDS) + extra

    def exit_code(self) -> int:
        # An invalid line means the check is incomplete, which outranks any loss found.
        if self.invalid:
            return EXIT_INVALID
        return EXIT_LOSSY if self.lossy else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversations": self.checked,
            "lossless": self.lossless,
            "lossy": self.lossy,
            "invalid": self.invalid,
            "losses": {
                kind: {"conversations": self.conversations[kind], "occurrences": self.occurrences[kind]}
                for kind in self.kinds()
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchSummary:
        """The inverse of ``to_dict``: summaries that travelled as JSON merge again."""
        losses = data.get("losses", {})
        return cls(
            data["lossless"],
            data["lossy"],
            data["invalid"],
            Counter({kind: n["conversations"] for kind, n in losses.items() if n["conversations"]}),
            Counter({kind: n["occurrences"] for kind, n in losses.items() if n["occurrences"]}),
        )

    def table(self) -> str:
        """The counts as text; only kinds that occur get a row (``to_dict`` lists them all)."""
        found = [kind for kind in self.kinds() if self.occurrences[kind]]
        width = max([len("kind of loss"), *(len(kind) for kind in found)])
        lines = [
            f"conversations: {self.checked}",
            f"  lossless:    {self.lossless}",
            f"  lossy:       {self.lossy}",
            f"  invalid:     {self.invalid}",
        ]
        if found:
            lines += ["", f"{'kind of loss':<{width}}  conversations  occurrences"]
            lines += [f"{kind:<{width}}  {self.conversations[kind]:>13}  {self.occurrences[kind]:>11}" for kind in found]
        return "\n".join(lines)


@dataclass
class RoundTripSettings:
    """What every conversation of a run is checked with; a ``Job`` over JSONL lines."""

    codec: Codec
    tools: list[Any] | None  # from --tools: replaces the conversation's own tools
    add_generation_prompt: bool
    template_kwargs: dict[str, Any]
    ignore: frozenset[str] = frozenset()  # kinds of loss the user accepts (--ignore)
    check_prefixes: bool = False  # --prefixes

    def check(self, data: Any) -> RoundTripReport:
        """The report for one conversation, without the losses the user chose to ignore."""
        messages, tools = conversation_parts(data)
        if self.tools is not None:
            tools = self.tools
        report = self.codec.roundtrip(
            messages,
            tools=tools,
            add_generation_prompt=self.add_generation_prompt,
            check_prefixes=self.check_prefixes,
            **self.template_kwargs,
        )
        if self.ignore:
            report = replace(report, losses=[loss for loss in report.losses if loss.kind not in self.ignore])
        return report

    def check_line(self, raw: bytes, first: bool) -> RoundTripReport:
        """Round-trip one JSONL line; ``InvalidLine`` says why the line is invalid."""
        data = load_line(raw, first)
        try:
            return self.check(data)
        except ChatCodecError as exc:
            raise InvalidLine(str(exc)) from None
        except RecursionError:
            raise InvalidLine("nested too deeply") from None
        except UnicodeError as exc:
            raise InvalidLine(f"text that is not valid Unicode: {exc}") from None

    # -- the Job protocol --

    def summary(self) -> BatchSummary:
        return BatchSummary()

    def line(self, summary: BatchSummary, raw: bytes, first: bool) -> Outcome | None:
        try:
            report = self.check_line(raw, first)
        except InvalidLine as exc:
            summary.invalid += 1
            return Outcome(error=str(exc))
        summary.add(report)
        return None if report.lossless else Outcome(report=report.to_dict())
