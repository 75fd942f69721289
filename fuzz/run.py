"""Fuzz every format: valid outputs, truncations, mutations, delimiter soup, deep nesting.

    python fuzz/run.py [--seed N] [--per-format N] [--format NAME ...] [--all-templates] [--max-size N] [--jobs N]

For each format (the bundled ones, one real template per call syntax, templates whose
reasoning is written in ways of their own, and templates of our own whose call syntax chatcodec
learns, ``tests/learned_shapes.py``; with ``--all-templates``, every template in
tests/templates that chatcodec frames, named by file stem) it generates inputs from a seed and
checks, on every input, the promises a parser of model output makes:

- lenient parsing raises nothing, and its spans tile the input;
- ``codec.parse`` (no spans; its fast path remembers call shapes) gives the same message;
- every call's ``parsed_arguments`` can be read (never raises);
- streaming the text in random chunkings gives the one-shot message, finish reason,
  diagnostics, spans and events (adjacent deltas joined);
- the OpenAI chunks of the stream add up to the message;
- the raw events add up to the message: text deltas to its text, each call's argument deltas
  to its end event's arguments and those to the message's;
- strict parsing, one-shot and streamed, raises exactly the first diagnostic lenient parsing
  reports, or nothing;
- a parser that is dropped, closed or not, is freed at once (it holds no reference cycle);
- the message converts to OpenAI and Hugging Face dicts, which read back as it, and renders
  through the template after a user turn, where a plain answer does (a refusal of the
  template's own names the message).

A violation prints the format, the seed of the input and what broke; the exit status is 1 if
there was any. The same seed gives the same inputs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

try:
    import chatcodec
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    import chatcodec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from learned_shapes import learned_codec  # noqa: E402 - templates whose call syntax is learned
from template_corpus import HY3_BARE_SUFFIX, special_tokens  # noqa: E402 - the model's bos/eos tokens

from chatcodec.adapters.openai import ChunkAdapter
from chatcodec.errors import InvalidMessageError, ParseError, TemplateRenderError
from chatcodec.events import ContentDelta, Diagnostic, Event, ReasoningDelta, ToolCallArgumentsDelta, ToolCallEnd, ToolCallStart
from chatcodec.parse.json_scan import loads_json

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "tests" / "templates"


@dataclass(frozen=True)
class Learned:
    """A template of our own whose calls are in a shape with tags no known syntax spells
    (``tests/learned_shapes.py``): the syntax chatcodec learns from it."""

    shape: str


@dataclass(frozen=True)
class Variant:
    """A real template loaded in a way its file alone does not say: with one line of its source
    replaced (a spelling the model's tokenizer uses), or with reasoning tags the caller names."""

    template: str
    replace: tuple[str, str] | None = None
    reasoning_tags: tuple[str, str] | None = None


# The bundled formats, and one real template per call syntax (the README's table).
FORMATS: dict[str, str | Variant | Learned] = {
    "qwen3": "qwen3",
    "deepseek": "deepseek",
    "llama3_hermes": "llama3_hermes",
    "deepseek_r1": "DeepSeek-R1",
    "dsml": "DeepSeek-V3.2-llamacpp",
    "llama_json": "Llama-3.1-8B-Instruct",
    "llama4_json": "Meta-Llama-4-Scout-17B-16E-Instruct",
    "pythonic_list": "vLLM-Llama-4-pythonic",
    "pythonic": "LiquidAI-LFM2.5-8B-A1B",
    "olmo3": "AllenAI-Olmo-3.1-32B-Instruct",
    "lfm2_json": "LiquidAI-LFM2-8B-A1B-llamacpp-first",
    "mistral": "Mistral-Small-3.2-24B-Instruct-2506",
    "mistral_list": "Mistral-7B-Instruct-v0.3-jsonschema",
    "qwen3_coder": "Qwen-Qwen3-Coder",
    "glm": "ZhipuAI-GLM-4.6",
    "kimi": "Moonshot-Kimi-K2-Instruct-early",
    "harmony": "OpenAI-gpt-oss-120b",
    "minimax": "MiniMax-M2",
    "seed": "ByteDance-Seed-OSS-36B-Instruct",
    "granite": "IBM-granite-3.0-2b-instruct",
    "internlm2": "vLLM-InternLM2-tool",
    "tool_calls_list": "AI21-Jamba-Large-1.6",
    "toolcall_list": "NVIDIA-Nemotron-Nano-9B-v2",
    "json_list": "cogito-v1-preview-llama-3B",
    "functools": "Microsoft-Phi-4-mini-instruct",
    "cohere": "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
    "gemma": "Google-gemma-4-31B-it",
    "functionary": "MeetKai-functionary-medium-v3.1",
    "functionary_v3_2": "MeetKai-functionary-medium-v3.2",  # >>>all\nTEXT>>>NAME\n{...}
    "functionary_v2": "MeetKai-functionary-medium-v2.2",  # <|recipient|>NAME\n<|content|>{...}
    "apertus": "SwissAI-Apertus-8B-Instruct",
    "solar": "Upstage-Solar-Open-100B",
    "atem": "Muse-Glimmer",
    "gigachat": "SberDevices-GigaChat3.1-10B-A1.8B",
    "gigachat3": "SberDevices-GigaChat3-10B-A1.8B",
    "gcml": "SberDevices-GigaChat3.5-llamacpp-branch",
    "granite_20b_fc": "vLLM-granite-20b-functioncalling",
    "hyperclovax": "vLLM-HyperCLOVAX-SEED-Think-14B",
    "hunyuan": "Tencent-Hy3",
    "hunyuan_bare": Variant("Tencent-Hy3", replace=HY3_BARE_SUFFIX),
    "minicpm": "OpenBMB-MiniCPM5-1B",
    "minimax_m1": "MiniMax-M1",
    "xtml": "Moonshot-Kimi-K3",
    "minimax_m3": "MiniMax-M3",
    # Reasoning written otherwise than the formats above write it: phrases, other tags, a
    # prompt that opens the block, an answer in tags of its own, markers the caller names.
    "granite_3_2": "IBM-granite-3.2-8b-instruct",  # "Here is my thought process:" ... "Here is my response:"
    "granite_3_3": "IBM-granite-3.3-2b-instruct",  # <think>, then the answer in <response> tags
    "apriel_1_5": "ServiceNow-Apriel-1.5-15b-Thinker-unsloth",  # <thinking>
    "apriel_1_6": "ServiceNow-Apriel-1.6-15b-Thinker-fixed",  # "Here are my reasoning steps:" ... [BEGIN FINAL RESPONSE]
    "magistral": "Mistral-Ministral-3-14B-Reasoning-2512",  # [THINK] ... [/THINK]
    "exaone_deep": "LGAI-EXAONE-Deep-32B",  # <thought>, opened by the prompt
    "exaone4": "LGAI-EXAONE-4.0-1.2B",
    "kimi_k2_thinking": "Moonshot-Kimi-K2-Thinking",
    "command_a_reasoning": "Cohere-command-a-reasoning-08-2025",  # <|START_THINKING|>
    "qwen3_thinking": "Qwen3-4B-Thinking-2507",  # the prompt opens <think>
    "qwen3_5": "Qwen-Qwen3.5-4B",
    "nemotron3_nano": "NVIDIA-Nemotron-3-Nano-30B-A3B",
    "nemotron3_5": "NVIDIA-Nemotron-3.5",
    "step3_5": "StepFun-Step-3.5-Flash",
    "smollm3": "HuggingFaceTB-SmolLM3-3B",
    "phi4_reasoning": "Microsoft-Phi-4-reasoning",
    "olmo3_think": "AllenAI-OLMo-3-Think-openinstruct",
    "glm4_7": "ZhipuAI-GLM-4.7-Flash",
    "deepseek_v3_1": "DeepSeek-V3.1",
    "deepseek_v4": "DeepSeek-V4",
    "gpt_oss_20b": "OpenAI-gpt-oss-20b-2025-08-07",
    "gpt_oss_20b_first": "OpenAI-gpt-oss-20b-2025-08-04",  # its calls end with <|end|>
    "gemma4_interleaved": "Google-gemma-4-31B-it-interleaved",
    # MiniMax-M1's template never writes the <think> blocks the model does.
    "minimax_m1_think": Variant("MiniMax-M1", reasoning_tags=("<think>", "</think>")),
    # Call syntaxes learned from a template (the shapes of LongCat, Qwen3-Coder, GLM, MiniMax,
    # Functionary and Mistral, in tags of their own).
    "learned_json_in_tags": Learned("object between tags"),
    "learned_json_list_in_tags": Learned("list between tags"),
    "learned_json_after_tag": Learned("objects after a tag"),
    "learned_json_list_after_tag": Learned("list after a tag"),
    "learned_key_value_tags": Learned("parameters in key and value tags"),
    "learned_parameter_tags": Learned("function and parameter tags"),
    "learned_name_then_json": Learned("name, then the arguments, in tags"),
    "learned_name_then_json_to_end": Learned("name, then the arguments, to the end"),
    "learned_invoke_section": Learned("invokes in a section"),
}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "filters": {"type": "object"}}}}},
    # Names as MCP servers and agent frameworks write them: dots, dashes, double underscores.
    {"type": "function", "function": {"name": "mcp__fs.read-file_v2", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
]
TOOL_CHOICES: tuple[Any, ...] = (TOOLS, TOOLS, None, ["get_weather"], [])
# The variables templates read to switch thinking on or off.
THINKING_VARIABLES = ({"enable_thinking": False}, {"enable_thinking": True}, {"thinking": True}, {"thinking": False})
PIECES = [
    "hello", "the answer", " ", "\n", "\n\n", "{", "}", "[", "]", '"', "\\", ":", ",", "<", ">", "</", "é", "日本", "😀",
    "\u0000", "\ufffd", "<think>", "</think>", '{"name": "get_weather", "arguments": {"city": "Paris"}}', 'get_weather.call(city="Paris")', "null", "1e+300",
    # Half a surrogate pair, as text a tokenizer that decodes bytes loosely may give.
    "\ud800", "\udc00",
]  # fmt: skip


def load(name: str) -> chatcodec.Codec:
    """The codec of a format of FORMATS, or of a template in tests/templates by its file stem."""
    spec = FORMATS.get(name, name)
    if isinstance(spec, Learned):
        return learned_codec(spec.shape)
    variant = spec if isinstance(spec, Variant) else Variant(spec)
    path = TEMPLATES / f"{variant.template}.jinja"
    if not path.exists():
        return chatcodec.load(variant.template)
    tokens = special_tokens(path)
    if variant.replace is not None:
        source = path.read_text(encoding="utf-8")
        old, new = variant.replace
        if old not in source:
            raise ValueError(f"{name}: {old!r} is not in {path.name}")
        # A tokenizer object is how a template that is not a file is loaded.
        tokenizer = SimpleNamespace(chat_template=source.replace(old, new, 1), name_or_path=f"{variant.template}-{name}", **tokens)
        return chatcodec.load_from_tokenizer(tokenizer, reasoning_tags=variant.reasoning_tags)
    return chatcodec.load(path, special_tokens=tokens, reasoning_tags=variant.reasoning_tags)


def framed_templates() -> list[str]:
    """The stems of the templates in tests/templates that chatcodec frames: the ones whose
    format can be read (tests/test_templates.py lists those it cannot, and why)."""
    names = []
    for path in sorted(TEMPLATES.glob("*.jinja")):
        try:
            load(path.stem).format  # noqa: B018 - reading the format is the check
        except chatcodec.ChatCodecError:
            continue
        names.append(path.stem)
    return names


# -- inputs -------------------------------------------------------------------------------------


@dataclass
class Case:
    text: str
    prompt: str | None
    # The tools the parser is told of: the definitions, none (every name is taken), one name
    # (a call to the other tool is text, with a diagnostic), or an empty list.
    tools: Any = None
    # Without a prompt: whether the output opens inside reasoning (None: the format decides),
    # or the assistant text another parser read before handing over.
    reasoning: bool | None = None
    prefill: str | None = None

    def options(self) -> dict[str, Any]:
        """The keyword arguments every parse and stream of this case is given."""
        return {"prompt": self.prompt, "tools": self.tools, "reasoning": self.reasoning, "prefill": self.prefill}


class Inputs:
    """Inputs for one format, from a seed."""

    def __init__(self, codec: chatcodec.Codec, rng: random.Random, max_size: int) -> None:
        self.codec = codec
        self.rng = rng
        self.max_size = max_size
        grammar = codec.format.grammar
        self.spellings = sorted(grammar.spellings)
        self.prompt: str | None
        # Variables of its own a template needs to render at all (firefunction v2's
        # ``functions``): given to every render here, as a caller would.
        self.variables = dict.fromkeys(codec.template_variables, "")
        try:
            self.prompt = codec.render(
                [{"role": "user", "content": "hi"}], tools=TOOLS, add_generation_prompt=True, **self.variables
            )
        except chatcodec.ChatCodecError:
            self.prompt = None
        # Other prompts the same template writes: thinking switched on or off by the variables
        # templates read, and a turn after a call's result (the prompt then ends after the tool
        # output, not after the user's turn).
        self.other_prompts = self._other_prompts() if self.prompt is not None else []
        # A template that writes the generation prompt whether or not it is asked for (ERNIE 4.5,
        # Nemotron Mini) ends every rendered answer with it: no model writes that after its answer.
        framing = codec.format.source
        self.unasked_prompt = framing.generation_prompt if framing is not None and framing.prompt_written_unasked else ""
        self.opens_reasoning = codec.format.reasoning_opener is not None
        # A template whose history differs from its generation prompt (DeepSeek R1 and V3.2 drop
        # the think opener the prompt writes) has its answers read after the shared part.
        self.prompt_of: dict[str, str] = {}
        self.quoting: str | None = None  # the valid output whose value quotes an answer
        self.valid = self._valid_outputs()
        self._source_prompt: str | None = None  # the prompt of the valid output a case came from
        self._edges: dict[str, list[tuple[int, int]]] = {}  # where a valid output's delimiters are

    def _other_prompts(self) -> list[str]:
        conversations: list[tuple[list[dict[str, Any]], dict[str, Any]]] = [
            ([{"role": "user", "content": "hi"}], variables) for variables in THINKING_VARIABLES
        ]
        call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        after_result: list[dict[str, Any]] = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "sunny", "name": "get_weather"},
        ]
        conversations.append((after_result, {}))
        prompts: list[str] = []
        for messages, variables in conversations:
            try:
                prompt = self.codec.render(messages, tools=TOOLS, add_generation_prompt=True, **{**self.variables, **variables})
            except chatcodec.ChatCodecError:
                continue
            if prompt != self.prompt and prompt not in prompts:
                prompts.append(prompt)
        return prompts

    def _valid_outputs(self) -> list[str]:
        """Answers the template writes itself: content, reasoning, calls of assorted values (one
        a value that quotes a whole answer with calls)."""
        out: list[str] = []
        before_quoting: set[str] = set()
        if self.prompt is None:
            return out
        spellings = tuple(self.codec.format.grammar.spellings)
        values: list[Any] = ["Paris", 'quo"te\\', "line\nbreak", "日本 😀", 3, -1.5e3, True, None, {"a": [1, {"b": "}"}]}, []]
        # Long enough (over 256 characters) that a stream fed it whole reads it the one-shot way.
        prose = "A longer answer: `a < b`, {braces}, [brackets], \"quotes\", café 日本 😀, a\\b.\n" * 4
        answers: list[dict[str, Any]] = [
            {"role": "assistant", "content": "Plain answer."},
            {"role": "assistant", "content": "With <b>tags</b> and {braces}.", "reasoning_content": "Think first."},
            {"role": "assistant", "content": prose, "reasoning_content": prose},
        ]
        for value in values:
            arguments = {"city": value} if not isinstance(value, dict) else {"filters": value}
            name = "get_weather" if "city" in arguments else "search"
            answers.append(
                {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}
            )
        odd_name = TOOLS[2]["function"]["name"]
        answers.append(
            {
                "role": "assistant",
                "content": prose,
                "reasoning_content": prose,
                "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": prose, "filters": {"k": [1, 2]}}}}],
            }
        )
        answers.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"type": "function", "function": {"name": odd_name, "arguments": {"path": "/tmp/a b.txt"}}},
                    {"type": "function", "function": {"name": "search", "arguments": {}}},
                    *[{"type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}} for city in ("A", "B", "C")],
                ],
            }
        )
        answers.append(
            {
                "role": "assistant",
                "content": "Two calls.",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}},
                    {"type": "function", "function": {"name": "search", "arguments": {"query": "x"}}},
                ],
            }
        )
        for answer in [*answers, None]:
            if answer is None:
                before_quoting = set(out)
                # A value that quotes the format's own calls (a file being written that holds
                # one, code about tags): the tags in it are text of the value.
                quoted = out[-1] if out else ""
                for end in self.codec.format.grammar.spellings_of("END")[::-1]:
                    quoted = quoted.replace(end, "")  # (a model's end token is never text)
                value = f'doc = """\n{quoted}\n"""\nend = "{quoted[-20:]}"'
                answer = {"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": "search", "arguments": {"query": value, "filters": {"k": 1}}}},
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": quoted[:30]}}},
                ]}  # fmt: skip
            nine = ("a1b2c3d4e", "f5g6h7i8j", "k9l0m1n2o", "p3q4r5s6t", "u7v8w9x0y")  # (Mistral's ids: 9 characters)
            for ids in (None, nine, tuple(f"functions.{call['function']['name']}:{n}" for n, call in enumerate(answer.get("tool_calls") or []))):
                if ids and "tool_calls" in answer:
                    answer = json.loads(json.dumps(answer))
                    for call, id_ in zip(answer["tool_calls"], ids):
                        call["id"] = id_
                try:
                    full = self.codec.render(
                        [{"role": "user", "content": "hi"}, answer], tools=TOOLS, on_special_tokens="ignore", **self.variables
                    )
                except chatcodec.ChatCodecError:
                    continue
                if self.unasked_prompt and full.endswith(self.unasked_prompt):
                    full = full[: len(full) - len(self.unasked_prompt)]
                if full.startswith(self.prompt):
                    out.append(full[len(self.prompt) :])
                    break
                shared = len(os.path.commonprefix([self.prompt, full]))
                while shared and not self.prompt[:shared].endswith(spellings):
                    shared -= 1  # ("<think>" and "</think>" share a "<"): back to a delimiter's end
                if shared and full[shared:]:
                    out.append(full[shared:])
                    self.prompt_of[full[shared:]] = full[:shared]
                    break
        if out and out[-1] not in before_quoting:
            self.quoting = out[-1]
        return out

    def cases(self) -> Iterator[Case]:
        kinds: list[Callable[[], str]] = [
            self._truncated, self._mutated, self._soup, self._nested, self._valid, self._hostile_value,
            self._prefilled, self._crlf, self._echoed_header, self._spaced, self._retagged, self._listed,
        ]  # fmt: skip
        while True:
            kind = self.rng.choice(kinds)
            # Deep nesting is the one input allowed to be long: 3,000 levels.
            self._source_prompt = None
            text = kind() if kind in (self._nested, self._hostile_value) else kind()[: self.max_size]
            tools = self.rng.choice(TOOL_CHOICES)
            draw = self.rng.random()
            if draw < 0.6:
                yield Case(text, self._source_prompt or self.prompt, tools)
            elif draw < 0.7 and self.other_prompts:
                yield Case(text, self.rng.choice(self.other_prompts), tools)
            elif draw < 0.8 and self.valid:
                # A handover: another parser read the first part of an answer.
                answer = self.rng.choice(self.valid)
                at = self.rng.randint(0, len(answer))
                yield Case(answer[at:][: self.max_size], None, tools, prefill=answer[:at])
            else:
                choices = (None, False, True) if self.opens_reasoning else (None, False)
                yield Case(text, None, tools, reasoning=self.rng.choice(choices))

    def _valid(self) -> str:
        if not self.valid:
            return self._soup()
        text = self.rng.choice(self.valid)
        self._source_prompt = self.prompt_of.get(text)
        return text

    def _prefilled(self) -> str:
        """The rest of a valid answer whose beginning the prompt already holds (a server's
        prefill, or a prompt rendered with ``continue_final_message``)."""
        text = self._valid()
        base = self._source_prompt or self.prompt
        if base is None or not text:
            return text
        if self.rng.random() < 0.5:
            at = self.rng.randint(0, len(text))
            self._source_prompt = base + text[:at]
            return text[at:]
        field = self.rng.choice(("content", "reasoning_content"))
        partial = {"role": "assistant", "content": "Let me", field: "Let me"}
        try:
            self._source_prompt = self.codec.render(
                [{"role": "user", "content": "hi"}, partial], tools=TOOLS, continue_final_message=field, **self.variables
            )
        except chatcodec.ChatCodecError:
            pass
        return text

    def _crlf(self) -> str:
        """A valid answer with Windows line ends (a client that rewrote them)."""
        return self._valid().replace("\n", "\r\n")

    def _echoed_header(self) -> str:
        """A valid answer after the tail of the prompt (a model that writes its own turn's
        header again, or a server that sends the prompt's end with the completion)."""
        text = self._valid()
        prompt = self._source_prompt or self.prompt or ""
        return prompt[len(prompt) - self.rng.randint(0, min(len(prompt), 60)) :] + text

    def _delimiters(self, text: str) -> list[tuple[int, int]]:
        """Where the delimiters of a valid output are (read once per output)."""
        found = self._edges.get(text)
        if found is None:
            try:
                spans = self.codec.parse_detailed(text, prompt=self._source_prompt or self.prompt, tools=TOOLS).spans
            except Exception:  # noqa: BLE001 - the check reports it; here it only means none
                spans = []
            found = self._edges[text] = [(span.start, span.end) for span in spans if span.kind == "delimiter"]
        return found

    def _spaced(self) -> str:
        """A valid answer with whitespace written, or left out, at a delimiter's edge: a model
        that puts a space or a newline after a tag (``<|tool_calls_section_begin|> <|tool_call_begin|>``),
        or none where its template writes one."""
        text = self._valid()
        edges = sorted({at for span in self._delimiters(text) for at in span})
        if not edges:
            return text
        for _ in range(self.rng.randint(1, 3)):
            at = min(self.rng.choice(edges), len(text))
            if self.rng.random() < 0.7:
                text = text[:at] + self.rng.choice((" ", "\n", "\n\n", " \n", "\t")) + text[at:]
            elif self.rng.random() < 0.5:
                text = text[:at].rstrip(" \t\r\n") + text[at:]
            else:
                text = text[:at] + text[at:].lstrip(" \t\r\n")
        return text

    def _retagged(self) -> str:
        """A valid answer with one of its delimiters written twice, left out, or written as
        another of the format's (a model that repeats a tag, forgets one, or closes with the
        wrong one)."""
        text = self._valid()
        delimiters = self._delimiters(text)
        if not delimiters:
            return text
        start, end = self.rng.choice(delimiters)
        choice = self.rng.random()
        if choice < 0.4:
            return text[:end] + text[start:end] + text[end:]
        if choice < 0.7 or not self.spellings:
            return text[:start] + text[end:]
        return text[:start] + self.rng.choice(self.spellings) + text[end:]

    def _listed(self) -> str:
        """A valid answer with a call's JSON object between two delimiters written as a list of
        it, once or twice (Qwen2.5 and Hermes models write all their calls as one list in one
        ``<tool_call>`` block at times)."""
        text = self._valid()
        delimiters = self._delimiters(text)
        bodies = [
            (end, start)
            for (_, end), (start, _) in zip(delimiters, delimiters[1:])
            if text[end:start].strip().startswith("{") and text[end:start].strip().endswith("}")
        ]
        if not bodies:
            return text
        start, end = self.rng.choice(bodies)
        body = text[start:end].strip()
        listed = f"[{body}]" if self.rng.random() < 0.5 else f"[{body}, {body}]"
        return text[:start] + listed + text[end:]

    def _truncated(self) -> str:
        text = self._valid()
        return text[: self.rng.randint(0, len(text))]

    def _mutated(self) -> str:
        text = list(self._valid())
        for _ in range(self.rng.randint(1, 4)):
            at = self.rng.randint(0, len(text))
            choice = self.rng.random()
            if choice < 0.3 and text:
                del text[min(at, len(text) - 1)]
            elif choice < 0.6:
                text.insert(at, self.rng.choice(self.spellings or PIECES))
            else:
                text.insert(at, self.rng.choice(PIECES))
        return "".join(text)

    def _soup(self) -> str:
        parts = [
            self.rng.choice(self.spellings) if self.spellings and self.rng.random() < 0.5 else self.rng.choice(PIECES)
            for _ in range(self.rng.randint(1, 30))
        ]
        return "".join(parts)

    def _hostile_value(self) -> str:
        """A valid call whose argument is JSON the json module cannot decode (nested past the
        recursion limit, an integer past Python's digit limit) or only just can."""
        calls = [text for text in self.valid if '"Paris"' in text]
        if not calls:
            return self._nested()
        depth = self.rng.choice((900, 1100, 3000))
        value = self.rng.choice(
            ("[" * depth + "1" + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "1" * 5000, "1" * 4300, "-" + "9" * 4301,
             "1e999", "-0", "NaN", '"\\ud800"', '"\ud800"', '"\u0000"')
        )
        text = self.rng.choice(calls)
        return text.replace('"Paris"', value, 1)

    def _nested(self) -> str:
        depth = self.rng.randint(50, 3000)
        body = '{"a": ' * depth + "1" + "}" * self.rng.randint(0, depth)
        calls = [s for s in self.spellings if "tool" in s.lower() or "call" in s.lower() or s.strip() in ("{", "[")]
        opening = self.rng.choice(calls) if calls else ""
        return opening + body


# -- checks -------------------------------------------------------------------------------------


def _joined(events: list[Event]) -> list[tuple[Any, ...]]:
    """Events with adjacent deltas of one kind (and call) joined: what a chunking cannot change."""
    out: list[list[Any]] = []
    for event in events:
        if isinstance(event, ContentDelta | ReasoningDelta):
            key: tuple[Any, ...] = (type(event).__name__,)
            text = event.text
        elif isinstance(event, ToolCallArgumentsDelta):
            key, text = ("arguments", event.index), event.text
        else:
            out.append([_event_key(event)])
            continue
        if out and out[-1][0] == key:
            out[-1][1] += text
        elif text:
            out.append([key, text])
    return [tuple(item) for item in out]


def _event_key(event: Event) -> tuple[Any, ...]:
    if isinstance(event, ToolCallStart):
        return ("start", event.index, event.name)
    if isinstance(event, ToolCallEnd):
        return ("end", event.index, event.arguments, event.id)
    if isinstance(event, Diagnostic):
        return ("diagnostic", event.kind, event.position)
    return (type(event).__name__, getattr(event, "reason", None))


def _message_key(message: chatcodec.Message, text: str) -> dict[str, Any]:
    """The message, with the ids made up for calls (each parse makes its own) blanked: an id
    the text does not hold was made up."""
    data = message.model_dump(exclude_none=True)
    for call in data.get("tool_calls", []):
        if str(call.get("id", "")) not in text:
            call["id"] = "(generated)"
    return data


def _is_json(text: str) -> bool:
    """JSON any reader takes (``NaN`` and ``Infinity`` are none)."""
    try:
        loads_json(text)
    except (ValueError, RecursionError):
        return False
    return True


def _from_events(events: list[Event]) -> dict[str, Any]:
    """What a consumer of the raw events accumulates: the text deltas, and per call the
    argument deltas beside the arguments its end event gives."""
    content = reasoning = ""
    deltas: dict[int, str] = {}
    ends: dict[int, str] = {}
    for event in events:
        if isinstance(event, ContentDelta):
            content += event.text
        elif isinstance(event, ReasoningDelta):
            reasoning += event.text
        elif isinstance(event, ToolCallStart):
            deltas[event.index] = ""
        elif isinstance(event, ToolCallArgumentsDelta):
            deltas[event.index] = deltas.get(event.index, "") + event.text
        elif isinstance(event, ToolCallEnd):
            ends[event.index] = event.arguments
    return {"content": content, "reasoning": reasoning, "deltas": deltas, "ends": ends}


def _from_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """What an OpenAI client accumulates from the chunks."""
    content = ""
    reasoning = ""
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]
        content += delta.get("content") or ""
        reasoning += delta.get("reasoning_content") or ""
        for call in delta.get("tool_calls") or []:
            slot = calls.setdefault(call["index"], {"id": None, "name": "", "arguments": ""})
            if call.get("id"):
                slot["id"] = call["id"]
            function = call.get("function") or {}
            slot["name"] += function.get("name") or ""
            slot["arguments"] += function.get("arguments") or ""
    return {"content": content, "reasoning": reasoning, "calls": [calls[i] for i in sorted(calls)]}


_PLAIN_ANSWER_RENDERS: dict[tuple[str, str], bool] = {}


def _renders_a_plain_answer(codec: chatcodec.Codec) -> bool:
    key = (codec.name, codec.source)
    known = _PLAIN_ANSWER_RENDERS.get(key)
    if known is None:
        try:
            codec.render([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}], on_special_tokens="ignore")
            known = True
        except chatcodec.ChatCodecError:
            known = False
        _PLAIN_ANSWER_RENDERS[key] = known
    return known


def _same_message(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Equal OpenAI dicts, but for arguments written again as JSON of the same value (a dict
    given to a template is written with its own spacing)."""
    calls = [message.get("tool_calls") or [] for message in (one, other)]
    if {**one, "tool_calls": None} != {**other, "tool_calls": None} or len(calls[0]) != len(calls[1]):
        return False
    for first, second in zip(*calls):
        texts = (first["function"]["arguments"], second["function"]["arguments"])
        if {**first, "function": first["function"]["name"]} != {**second, "function": second["function"]["name"]}:
            return False
        if texts[0] != texts[1]:
            try:
                if loads_json(texts[0]) != loads_json(texts[1]):
                    return False
            except (ValueError, RecursionError):
                return False
    return True


def _contract_broken(codec: chatcodec.Codec, message: chatcodec.Message) -> list[str]:
    """The message converts to OpenAI and Hugging Face dicts, each reads back as the message,
    and the OpenAI one renders after a user turn. (A template may refuse a message with its own
    ``raise_exception``, or fail on arguments it reads by name that are text: a
    ``TemplateRenderError`` naming the message; nothing else may fail.)"""
    try:
        shapes = (message.to_openai(), message.to_hf(), message.to_hf(arguments="string"))
        for shape in shapes:
            if not _same_message(chatcodec.Message.model_validate(shape).to_openai(), shapes[0]):
                return ["a message's OpenAI or Hugging Face dict reads back as another message"]
    except Exception:  # noqa: BLE001
        return [f"a message does not convert: {traceback.format_exc(limit=3)}"]
    if not _renders_a_plain_answer(codec):
        return []  # (the template needs what no message gives: variables of its own)
    try:
        codec.render([{"role": "user", "content": "hi"}, shapes[0]], on_special_tokens="ignore")
    except TemplateRenderError as exc:
        if "(message 1, role 'assistant'" not in str(exc):
            return [f"a message's render failed without naming it: {exc}"]
    except InvalidMessageError as exc:
        if "nested too deeply" not in str(exc):
            return [f"a parsed message is refused by render: {exc}"]
    except Exception:  # noqa: BLE001
        return [f"a message's render raised: {traceback.format_exc(limit=3)}"]
    return []


def check(codec: chatcodec.Codec, case: Case, rng: random.Random) -> list[str]:
    """The promises this input breaks (empty when it keeps them all)."""
    broken: list[str] = []
    options = case.options()
    try:
        whole = codec.parse_detailed(case.text, **options)
    except Exception:  # noqa: BLE001 - any exception is the violation being looked for
        return [f"lenient parse raised: {traceback.format_exc(limit=3)}"]
    if whole.reassemble() != case.text:
        broken.append("spans do not tile the input")
    fresh = case.prefill is None and (case.prompt is None or not codec.prompt_state(case.prompt).prefill)
    # Text in the message is where its spans say: nothing the model wrote is left out of it.
    # (Where the prompt began the turn, the message may also hold what the prompt wrote: a
    # call it opened that is kept as text.)
    for kind, field in (("content", whole.message.content), ("reasoning", whole.message.reasoning_content)):
        if fresh and "".join(case.text[span.start : span.end] for span in whole.spans if span.kind == kind) != (field or ""):
            broken.append(f"the {kind} spans do not add up to the message's {kind}")
    # ``codec.parse`` keeps no spans, and its fast path reads a call the way it read the last
    # one from the same parser state: the second reading takes what the first remembered.
    for reading in ("first", "second"):
        try:
            message = codec.parse(case.text, **options)
        except Exception:  # noqa: BLE001
            return [f"codec.parse raised: {traceback.format_exc(limit=3)}"]
        if _message_key(message, case.text) != _message_key(whole.message, case.text):
            broken.append(f"codec.parse's message ({reading} reading) differs from parse_detailed's")
    kinds = {diagnostic.kind for diagnostic in whole.diagnostics}
    for call in whole.message.tool_calls or []:
        try:
            call.function.parsed_arguments  # noqa: B018 - reading it is the check
        except Exception as exc:  # noqa: BLE001
            broken.append(f"parsed_arguments raised {type(exc).__name__}")
        # A call's arguments are JSON, or the text the model wrote with a diagnostic (or the
        # text was cut short inside the call).
        arguments = call.function.arguments
        if whole.finish_reason != "length" and not _is_json(arguments):
            if "malformed_tool_call" not in kinds:
                broken.append("a call's arguments are no JSON, and no diagnostic says why")
            elif fresh and arguments not in case.text and "noncanonical" not in kinds:
                # (Not checked: a call whose members beside its name are its arguments, and a
                # call the prompt or a handover began, whose arguments join the two.)
                broken.append("a call's arguments are neither JSON nor the text the model wrote")
    broken += _contract_broken(codec, whole.message)
    reference = codec.stream(**options)
    if case.prompt is not None and reference.state != codec.prompt_state(case.prompt).state:
        broken.append("a parser before any text is not where codec.prompt_state says its prompt leaves it")
    reference_events = reference.feed(case.text) + reference.close()
    # (The whole text in one delta: read the one-shot way where it can be, its spans when asked.)
    fed_whole = reference.result()
    if _message_key(fed_whole.message, case.text) != _message_key(whole.message, case.text) or fed_whole.spans != whole.spans:
        broken.append("a stream fed the whole text differs from the one-shot parse")
    if fed_whole.finish_reason != whole.finish_reason or fed_whole.diagnostics != whole.diagnostics:
        broken.append("a stream fed the whole text ends or diagnoses differently from the one-shot parse")
    for attempt in range(2):
        parser = codec.stream(**options)
        adapter = ChunkAdapter("fuzz")
        events: list[Event] = []
        chunks: list[dict[str, Any]] = []
        at = 0
        # The second chunking may begin with a long delta (read the one-shot way where it can
        # be, then by the engine once more text comes).
        first = rng.randint(256, max(256, len(case.text))) if attempt and rng.random() < 0.5 else None
        while at < len(case.text):
            step = first if first is not None else rng.choice((0, 1, 1, 2, 3, 5, 8, 64))  # 0: an empty delta, as servers send
            first = None
            batch = parser.feed(case.text[at : at + step])
            events += batch
            chunks += adapter.chunks(batch)
            at += step
        batch = parser.close()
        events += batch
        chunks += adapter.chunks(batch)
        result = parser.result()
        if _message_key(result.message, case.text) != _message_key(whole.message, case.text):
            broken.append("streamed message differs from one-shot")
        if result.finish_reason != whole.finish_reason:
            broken.append(f"finish reason {result.finish_reason} streamed, {whole.finish_reason} one-shot")
        if [(d.kind, d.position) for d in result.diagnostics] != [(d.kind, d.position) for d in whole.diagnostics]:
            broken.append("streamed diagnostics differ from one-shot")
        if result.spans != whole.spans:
            broken.append("streamed spans differ from one-shot")
        if _joined(events) != _joined(reference_events):
            broken.append("streamed events differ from one-shot")
        got = _from_chunks(chunks)
        message = result.message
        expected_calls = [
            {"id": call.id, "name": call.function.name, "arguments": call.function.arguments} for call in message.tool_calls or []
        ]
        if got["content"] != (message.content or "") or got["reasoning"] != (message.reasoning_content or ""):
            broken.append("OpenAI chunks do not add up to the message's text")
        if got["calls"] != expected_calls:
            broken.append("OpenAI chunks do not add up to the message's calls")
        # The raw events, read without the adapter: each call's argument deltas are its
        # arguments, and its end event gives the message's.
        raw = _from_events(events)
        if raw["content"] != (message.content or "") or raw["reasoning"] != (message.reasoning_content or ""):
            broken.append("the events' text deltas do not add up to the message's text")
        if raw["deltas"] != raw["ends"] or [raw["ends"][i] for i in sorted(raw["ends"])] != [call["arguments"] for call in expected_calls]:
            broken.append("a call's argument deltas do not add up to its end event's arguments, or those to the message's")
        if broken:
            break
    # A parser that is dropped, read to the end or not, is freed at once: nothing it holds
    # refers back to it (a server drops one per request; none waits for the cyclic collector).
    dropped = codec.stream(**options)
    dropped.feed(case.text[: len(case.text) // 2])
    freed = [weakref.ref(one) for one in (reference, parser, dropped)]
    del reference, parser, dropped
    if any(ref() is not None for ref in freed):
        broken.append("a dropped parser is not freed at once (a reference cycle)")
    expected = whole.diagnostics[0] if whole.diagnostics else None
    for how in ("one-shot", "streamed"):
        try:
            if how == "one-shot":
                codec.parse_detailed(case.text, strict=True, **options)
            else:
                strict = codec.stream(strict=True, **options)
                at = 0
                while at < len(case.text):
                    step = rng.choice((1, 3, 8, 64))
                    strict.feed(case.text[at : at + step])
                    at += step
                strict.close()
            if expected is not None:
                broken.append(f"strict parse ({how}) did not raise ({expected.kind})")
        except ParseError as exc:
            if expected is None or (exc.kind, exc.position) != (expected.kind, expected.position):
                broken.append(f"strict ({how}) raised {exc.kind}@{exc.position}, first diagnostic {expected}")
        except Exception:  # noqa: BLE001
            broken.append(f"strict parse ({how}) raised something else: {traceback.format_exc(limit=3)}")
    return broken


# -- running ------------------------------------------------------------------------------------


def run_share(
    name: str, label: str, count: int, max_size: int, log: Callable[[str], None], progress: int = 0
) -> list[str]:
    """Check ``count`` inputs of one format, generated from the seed ``label``; the promises
    they break."""
    codec = load(name)
    inputs = Inputs(codec, random.Random(f"{label}:{name}"), max_size)
    started = time.perf_counter()
    found: list[str] = []
    for number, case in zip(range(count), inputs.cases()):
        case_rng = random.Random(f"{label}:{name}:{number}")
        for problem in check(codec, case, case_rng):
            found.append(f"{name} seed {label} input {number} ({case.text[:80]!r}, prompt={case.prompt is not None}, "
                f"reasoning={case.reasoning}, prefill={case.prefill!r}): {problem}")
            log(found[-1])
        if progress and (number + 1) % progress == 0 and number + 1 < count:
            # A long run reports as it goes, so a stopped run still says how far it got.
            log(f"{name:16} seed {label}: {number + 1} inputs so far, {len(found)} violations, {time.perf_counter() - started:.1f} s")
    log(f"{name:16} seed {label}: {count} inputs, {len(found)} violations, {time.perf_counter() - started:.1f} s")
    return found


def shares(seed: int, per_format: int, jobs: int) -> list[tuple[str, int]]:
    """How a format's inputs are split among ``jobs`` processes: each share's seed and count.
    One job reads them all from ``seed``; share k of several from ``seed.k`` (a run is
    repeated with the same seed and the same number of jobs)."""
    if jobs <= 1:
        return [(str(seed), per_format)]
    return [(f"{seed}.{k}", per_format // jobs + (1 if k < per_format % jobs else 0)) for k in range(jobs)]


def _run_task(task: tuple[str, str, int, int, int]) -> tuple[str, list[str]]:
    name, label, count, max_size, progress = task
    return name, run_share(name, label, count, max_size, lambda m: print(m, flush=True), progress)


def run(
    names: list[str],
    seed: int,
    per_format: int,
    max_size: int,
    log: Callable[[str], None],
    progress: int = 0,
    jobs: int = 1,
) -> dict[str, list[str]]:
    """Every format's broken promises. With ``jobs`` above 1 the inputs of each format are
    split into that many shares (see ``shares``), checked in as many processes, which print
    what they find as they go (``log`` is for one process)."""
    tasks = [(name, label, count, max_size, progress) for name in names for label, count in shares(seed, per_format, jobs)]
    violations: dict[str, list[str]] = {name: [] for name in names}
    if jobs <= 1:
        for name, label, count, _, _ in tasks:
            violations[name] += run_share(name, label, count, max_size, log, progress)
        return violations
    with multiprocessing.Pool(jobs) as pool:
        for name, found in pool.imap_unordered(_run_task, tasks):
            violations[name] += found
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-format", type=int, default=1000)
    parser.add_argument("--max-size", type=int, default=2000, help="characters per input, at most")
    parser.add_argument(
        "--format", action="append", metavar="NAME", help="only this format, or template of tests/templates by stem (repeatable)"
    )
    parser.add_argument(
        "--all-templates", action="store_true", help="every template in tests/templates that chatcodec frames, by file stem"
    )
    parser.add_argument("--progress", type=int, default=0, metavar="N", help="report every N inputs of a format")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="processes (each format's inputs split among them)")
    args = parser.parse_args(argv)
    if args.all_templates:
        names = framed_templates()
    else:
        names = args.format or list(FORMATS)
    unknown = [name for name in names if name not in FORMATS and not (TEMPLATES / f"{name}.jinja").exists()]
    if unknown:
        parser.error(f"no format or template named {', '.join(unknown)} (formats: {', '.join(sorted(FORMATS))})")
    violations = run(
        names,
        args.seed,
        args.per_format,
        args.max_size,
        lambda m: print(m, flush=True),
        args.progress,
        args.jobs,
    )
    total = sum(len(found) for found in violations.values())
    for found in violations.values():
        for line in found[:20]:
            print(line)
    print(f"{total} violations")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
