"""The LangChain chat model, driven through langchain-core's own classes."""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

import chatcodec
from chatcodec.adapters.langchain import ChatCodecModel

QWEN3 = chatcodec.load("qwen3")
ANSWER = (
    "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
)


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return "18 C"


class Recorder:
    """A completion function that remembers its prompts and answers with a fixed text."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer

    def stream(self, prompt: str) -> Iterator[str]:
        self.prompts.append(prompt)
        for start in range(0, len(self.answer), 3):
            yield self.answer[start : start + 3]


def model(answer: str = ANSWER) -> tuple[ChatCodecModel, Recorder]:
    recorder = Recorder(answer)
    return ChatCodecModel(codec=QWEN3, complete=recorder, stream_complete=recorder.stream), recorder


def test_invoke_renders_with_the_template_and_parses_the_answer() -> None:
    chat, recorder = model()
    bound = chat.bind_tools([get_weather])
    message = bound.invoke([SystemMessage("Be brief."), HumanMessage("Weather in Paris?")])
    assert isinstance(message, AIMessage)
    assert message.content == "Let me check."
    assert message.additional_kwargs["reasoning_content"] == "The user wants the weather."
    assert [(call["name"], call["args"]) for call in message.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert message.tool_calls[0]["id"].startswith("call_")
    assert message.response_metadata["finish_reason"] == "tool_calls"
    # The prompt is the template's own rendering, tools block included.
    assert recorder.prompts[0] == QWEN3.render(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather for a city.",
                    "parameters": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"},
                },
            }
        ],
        add_generation_prompt=True,
    )


def test_a_conversation_with_calls_and_results_renders_back() -> None:
    chat, recorder = model("It is 18 C.<|im_end|>")
    history = [
        HumanMessage("Weather in Paris?"),
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]),
        ToolMessage("18 C", tool_call_id="call_1"),
    ]
    message = chat.bind_tools([get_weather]).invoke(history)
    assert message.content == "It is 18 C."
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in recorder.prompts[0]
    assert "<tool_response>\n18 C\n</tool_response>" in recorder.prompts[0]


def test_malformed_arguments_are_invalid_tool_calls() -> None:
    chat, _ = model('<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>')
    message = chat.invoke([HumanMessage("Weather?")])
    assert message.tool_calls == []
    assert [(call["name"], call["args"]) for call in message.invalid_tool_calls] == [("get_weather", '{"city": }')]


def test_streamed_chunks_add_up_to_the_message() -> None:
    chat, _ = model()
    bound = chat.bind_tools([get_weather])
    chunks = list(bound.stream([HumanMessage("Weather in Paris?")]))
    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.content == "Let me check."
    assert total.additional_kwargs["reasoning_content"] == "The user wants the weather."
    assert [(call["name"], call["args"]) for call in total.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert total.response_metadata["finish_reason"] == "tool_calls"
    # Arguments arrived in pieces, before the call ended.
    assert sum(1 for chunk in chunks if chunk.tool_call_chunks) > 2


def test_without_a_streaming_function_stream_gives_the_whole_answer() -> None:
    recorder = Recorder("Hello there.<|im_end|>")
    chat = ChatCodecModel(codec=QWEN3, complete=recorder, template_kwargs={"enable_thinking": False})
    chunks = list(chat.stream([HumanMessage("Hi")]))
    assert "".join(str(chunk.content) for chunk in chunks) == "Hello there."
    assert recorder.prompts[0].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
