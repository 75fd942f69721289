"""The vLLM plugin: registers chatcodec's tool and reasoning parsers under the name
``chatcodec``.

vLLM runs every ``vllm.general_plugins`` entry point when it starts, before it checks the
``--tool-call-parser`` and ``--reasoning-parser`` names, so installing chatcodec is enough.
The parsers are registered lazily: this module imports nothing from vLLM's parsers (nor
chatcodec's grammars) until a server asks for them.
"""

from __future__ import annotations

NAME = "chatcodec"
MODULE = "chatcodec.adapters.vllm"


def register() -> None:
    """Register the parsers with vLLM (safe to call more than once)."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    ToolParserManager.register_lazy_module(NAME, MODULE, "ChatcodecToolParser")
    ReasoningParserManager.register_lazy_module(NAME, MODULE, "ChatcodecReasoningParser")
