"""A LangChain chat model over any "prompt text -> completion text" function.

    pip install chatcodec[langchain]

``ChatCodecModel`` renders LangChain messages with the model's own chat template (tools bound
with ``bind_tools`` included), hands the prompt to your completion function (a transformers
pipeline, llama-cpp-python, a raw completions endpoint), and parses the text back: content,
``tool_calls`` (``invalid_tool_calls`` for calls whose arguments are not JSON), reasoning in
``additional_kwargs["reasoning_content"]``. With a streaming function, ``stream`` yields
``AIMessageChunk`` objects whose ``tool_call_chunks`` add up to the calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from chatcodec.codec import Codec
from chatcodec.events import ContentDelta, Finish, ReasoningDelta, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.messages import Message

Complete = Callable[[str], str]
StreamComplete = Callable[[str], Iterable[str]]


class ChatCodecModel(BaseChatModel):
    """A chat model made of a chat template and a text completion function.

    ``codec`` renders and parses (``chatcodec.load(...)``); ``complete`` turns a prompt into the
    model's completion; ``stream_complete`` (optional) yields it in pieces. ``template_kwargs``
    go to the template (``enable_thinking=False``...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    codec: Codec
    complete: Complete
    stream_complete: StreamComplete | None = None
    template_kwargs: dict[str, Any] = {}

    @property
    def _llm_type(self) -> str:
        return "chatcodec"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """Tools (LangChain tools, functions, pydantic models or OpenAI dicts) for the template to
        show the model and the parser to accept."""
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    # -- one answer ---------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.pop("tools", None)
        prompt = self._prompt(messages, tools, kwargs)
        completion = _cut_at_stop(self.complete(prompt), stop)
        result = self.codec.parse_detailed(completion, prompt, tools=tools)
        message = _ai_message(result.message)
        message.response_metadata = {"finish_reason": result.finish_reason}
        return ChatResult(generations=[ChatGeneration(message=message)])

    # -- streamed -----------------------------------------------------------------------------

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.stream_complete is None:
            # No streaming function: the whole answer, as one chunk.
            whole = self._generate(messages, stop=stop, run_manager=run_manager, **kwargs).generations[0].message
            assert isinstance(whole, AIMessage)
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=whole.content,
                    additional_kwargs=whole.additional_kwargs,
                    response_metadata=whole.response_metadata,
                    tool_call_chunks=[
                        {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"], "index": i}
                        for i, call in enumerate(whole.tool_calls)
                    ],
                )
            )
            return
        tools = kwargs.pop("tools", None)
        prompt = self._prompt(messages, tools, kwargs)
        parser = self.codec.stream(prompt, tools=tools)
        chunker = _Chunker()
        for piece in self.stream_complete(prompt):
            for chunk in chunker.chunks(parser.feed(piece)):
                if run_manager is not None and chunk.content:
                    run_manager.on_llm_new_token(str(chunk.content), chunk=ChatGenerationChunk(message=chunk))
                yield ChatGenerationChunk(message=chunk)
        yield from (ChatGenerationChunk(message=chunk) for chunk in chunker.chunks(parser.close()))

    # -- shared -------------------------------------------------------------------------------

    def _prompt(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None, kwargs: dict[str, Any]) -> str:
        variables = {**self.template_kwargs, **kwargs}
        return self.codec.render(
            [_chat_message(message) for message in messages], tools=tools, add_generation_prompt=True, **variables
        )


def _chat_message(message: BaseMessage) -> dict[str, Any]:
    """A LangChain message as the chat dict a template takes."""
    content = message.content if isinstance(message.content, str) else _text_parts(message.content)
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": content}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": content}
    if isinstance(message, ToolMessage):
        return {"role": "tool", "content": content, "tool_call_id": message.tool_call_id}
    if isinstance(message, AIMessage):
        out: dict[str, Any] = {"role": "assistant", "content": content}
        reasoning = message.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str):
            out["reasoning_content"] = reasoning
        if message.tool_calls:
            out["tool_calls"] = [
                {"id": call.get("id"), "type": "function", "function": {"name": call["name"], "arguments": call["args"]}}
                for call in message.tool_calls
            ]
        return out
    if isinstance(message, ChatMessage):
        return {"role": message.role, "content": content}
    raise TypeError(f"cannot render a {type(message).__name__}")


def _text_parts(parts: list[Any]) -> str:
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in parts)


def _ai_message(message: Message) -> AIMessage:
    tool_calls = []
    invalid = []
    for call in message.tool_calls or []:
        parsed = call.function.parsed_arguments
        if isinstance(parsed, dict):
            tool_calls.append({"name": call.function.name, "args": parsed, "id": call.id, "type": "tool_call"})
        else:
            invalid.append(
                {
                    "name": call.function.name,
                    "args": call.function.arguments,
                    "id": call.id,
                    "error": "the arguments are not a JSON object",
                    "type": "invalid_tool_call",
                }
            )
    extra = {"reasoning_content": message.reasoning_content} if message.reasoning_content else {}
    return AIMessage(content=message.text, tool_calls=tool_calls, invalid_tool_calls=invalid, additional_kwargs=extra)


class _Chunker:
    """Parser events as ``AIMessageChunk`` objects (one per event that carries something)."""

    def __init__(self) -> None:
        self._sent: dict[int, int] = {}  # characters of each call's arguments already sent

    def chunks(self, events: Iterable[Any]) -> Iterator[AIMessageChunk]:
        for event in events:
            if isinstance(event, ContentDelta):
                yield AIMessageChunk(content=event.text)
            elif isinstance(event, ReasoningDelta):
                yield AIMessageChunk(content="", additional_kwargs={"reasoning_content": event.text})
            elif isinstance(event, ToolCallStart):
                self._sent[event.index] = 0
                yield AIMessageChunk(
                    content="",
                    tool_call_chunks=[{"name": event.name, "args": "", "id": event.id, "index": event.index}],
                )
            elif isinstance(event, ToolCallArgumentsDelta):
                yield self._arguments(event.index, event.text)
            elif isinstance(event, ToolCallEnd):
                rest = event.arguments[self._sent.get(event.index, 0) :]
                if rest:
                    yield self._arguments(event.index, rest)
            elif isinstance(event, Finish):
                yield AIMessageChunk(content="", response_metadata={"finish_reason": event.reason})

    def _arguments(self, index: int, text: str) -> AIMessageChunk:
        self._sent[index] = self._sent.get(index, 0) + len(text)
        return AIMessageChunk(
            content="", tool_call_chunks=[{"name": None, "args": text, "id": None, "index": index}]
        )


def _cut_at_stop(text: str, stop: list[str] | None) -> str:
    for word in stop or []:
        at = text.find(word)
        if at >= 0:
            text = text[:at]
    return text


__all__ = ["ChatCodecModel"]
