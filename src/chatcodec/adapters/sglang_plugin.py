"""The SGLang plugin: adds chatcodec's tool-call detector and reasoning detector under the
name ``chatcodec``.

SGLang runs every ``sglang.srt.plugins`` entry point before it reads its arguments, and takes
the ``--tool-call-parser`` / ``--reasoning-parser`` choices from its parser tables, so
installing chatcodec is enough. chatcodec's grammars load only when a server builds a parser.
"""

from __future__ import annotations

NAME = "chatcodec"


def register() -> None:
    """Add the detectors to SGLang's parser tables (safe to call more than once)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from chatcodec.adapters.sglang import ChatcodecDetector, ChatcodecReasoningDetector

    FunctionCallParser.ToolCallParserEnum[NAME] = ChatcodecDetector
    ReasoningParser.DetectorMap[NAME] = ChatcodecReasoningDetector
