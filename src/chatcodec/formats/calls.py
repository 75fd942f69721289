"""Call syntaxes: how models write tool calls.

A call syntax is a grammar piece (``grammars/calls/<shape>.lark``: the rules of one shape of
call, with generic terminal names) plus the spellings of its terminals, and the reader that
reads a call's body (``chatcodec/parse/readers.py``) with its options. Syntaxes of one shape
differ only in spellings and options: Qwen3-Coder, Seed, MiniMax and DeepSeek's DSML are all
``xml_parameters``; Jamba, Apriel, Nemotron, Cohere and Apertus write JSON lists in tags.

A template is given the syntax whose grammar reads back the calls the template itself renders
(``chatcodec.formats.derived``): never one it does not write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from chatcodec.formats.framing import numbered, terminal
from chatcodec.messages import ToolCallIdShape
from chatcodec.resources import grammar_text

_TERMINAL_NAME = re.compile(r"\b[A-Z][A-Z_]*\b")
# Terminals a piece may use in an alternative of its own, which a syntax that does not spell
# them goes without (an empty element that is a whole call: ``<invoke name="f"/>``).
_OPTIONAL_TERMINALS = frozenset({"CALL_SELF_CLOSE", "UNTYPED_NAME_END"})


@dataclass(frozen=True)
class CallSyntax:
    """One way of writing tool calls (see the module docstring)."""

    name: str
    piece: str  # grammars/calls/<piece>.lark
    reader: str  # a key of chatcodec.parse.readers.READERS
    description: str
    call_open: frozenset[str] = frozenset({"CALL_OPEN"})
    call_close: frozenset[str] = frozenset({"CALL_CLOSE"})
    # Spellings of the piece's terminals (pieces that spell their own leave this empty).
    spellings: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Text a template's rendered call must hold for this syntax to be tried on it.
    markers: tuple[str, ...] = ()
    # Text that, written in a tools prompt that tells the model how to call, names this syntax
    # (for templates that render no calls themselves: Granite 3's "respond with <|tool_call|>").
    instructed_by: tuple[str, ...] = ()
    # Special tokens that, all in a template's source, name this syntax when the template
    # renders no calls (Phi-4-mini's <|tool|> block: its model writes ``functools[...]``).
    template_markers: tuple[str, ...] = ()
    reader_options: tuple[tuple[str, object], ...] = ()
    # The canonical form puts the calls in a section (``CALLS_BEGIN`` ... ``CALLS_END``); a call
    # outside one is read, with a ``noncanonical`` diagnostic.
    in_section: bool = False
    # Spellings the grammar accepts that the model's canonical form does not use (R1 distills'
    # ``<｜tool▁calls｜>``): read, with a ``noncanonical`` diagnostic.
    noncanonical: tuple[str, ...] = ()
    # Calls are the whole answer: no content before them.
    whole_turn: bool = False
    # A call with no closing tag ends with the answer (or at the next call).
    closes_at_end: bool = False
    # Each part of an answer is a message of its own, and the call's separator written where a
    # message starts opens one of plain text to the user (gpt-oss's commentary preamble,
    # ``<|channel|>commentary<|message|>``): reasoning and such messages may come in any
    # number before the answer, each ended like the reasoning.
    preamble: bool = False
    # The call's closing tag is a stop token, which a server strips from the text it returns
    # (gpt-oss's ``<|call|>``): a call whose body is whole when the text ends is whole.
    close_is_stop_token: bool = False
    # Tokens a model writes right after a call where the syntax has no closing tag (Llama 4's
    # ``<|python_end|>``): delimiters, not text after the call.
    trailers: tuple[str, ...] = ()
    # The shape of the ids made up for calls the model writes none for (a key of
    # ``chatcodec.messages.NEW_TOOL_CALL_IDS``): Mistral's templates render only their own.
    call_ids: ToolCallIdShape = "openai"
    # Terminals whose spelling equals another's are the same terminal in the grammar.
    aliases: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def grammar(self) -> str:
        rules = grammar_text(f"calls/{self.piece}")
        spelled_names = {name for name, _ in self.spellings}
        for optional in _OPTIONAL_TERMINALS - spelled_names:
            # A piece's alternative for a form only some of its syntaxes write.
            rules = "\n".join(line for line in rules.splitlines() if optional not in line)
        definitions: dict[str, tuple[str, ...]] = {}
        renames: dict[str, str] = {}
        for name, options in self.spellings:
            same = next((other for other, spelled in definitions.items() if set(spelled) == set(options)), None)
            if same is not None:
                renames[name] = same
            else:
                definitions[name] = options
        if renames:
            rules = _TERMINAL_NAME.sub(lambda m: renames.get(m.group(), m.group()), rules)
        return "\n".join([rules, *(terminal(name, options) for name, options in definitions.items())])

    def delimiters(self) -> list[str]:
        """Every spelling of the syntax's delimiters."""
        if self.spellings:
            return [spelling for _, options in self.spellings for spelling in options]
        return re.findall(r'^[A-Z_]+: "(.*)"$', grammar_text(f"calls/{self.piece}"), re.MULTILINE)

    def terminal_of(self, name: str) -> str:
        """The terminal a piece's name became (two spelled alike are one)."""
        options = dict(self.spellings).get(name)
        if options is None:
            return name
        for other, spelled in self.spellings:
            if set(spelled) == set(options):
                return other
        return name  # pragma: no cover - the loop finds the name itself

    @property
    def options(self) -> dict[str, object]:
        return dict(self.reader_options)


def around(literal: str, *, before: str = "", after: str = "") -> tuple[str, ...]:
    """``literal`` with each of ``before`` and ``after`` written or left out (the whitespace
    templates put around tags, which models also leave out)."""
    out = {literal}
    if before:
        out |= {before + s for s in out}
    if after:
        out |= {s + after for s in out}
    return tuple(sorted(out, key=lambda s: (len(s), s)))


def spelled(*pairs: tuple[str, Iterable[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((name, tuple(options)) for name, options in pairs)


# -- fixed pieces ---------------------------------------------------------------------------------

HERMES = CallSyntax(
    name="hermes",
    piece="hermes",
    reader="json_object_or_list",
    description='<tool_call>{"name": …, "arguments": {…}}</tool_call>',
    markers=("<tool_call>",),
    instructed_by=("within <tool_call></tool_call> XML tags",),
)
DEEPSEEK = CallSyntax(
    name="deepseek",
    piece="deepseek",
    reader="name_then_arguments",
    description="<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    in_section=True,
    noncanonical=("<｜tool▁calls｜>",),
)
DEEPSEEK_V3 = CallSyntax(
    name="deepseek_v3",
    piece="deepseek_v3",
    reader="name_then_arguments",
    description="<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{…}\\n```<｜tool▁call▁end｜>",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    in_section=True,
    noncanonical=("<｜tool▁calls｜>", "<｜tool▁calls｜>function<｜tool▁sep｜>"),
)

# HyperCLOVA X SEED Think 14B: the calls are a message of their own, whose header names them
# (``<|im_start|>assistant -> tool/function_call``), right after the generation prompt or after
# the message before it (the reasoning, or an answer); the message ends with <|im_end|> and its
# stop token, which a server may strip.
_HYPERCLOVAX_OPEN = " -> tool/function_call\n"
HYPERCLOVAX = CallSyntax(
    name="hyperclovax",
    piece="list_in_tags",
    reader="json_list",
    description='<|im_start|>assistant -> tool/function_call\\n[{"name": …, "arguments": {…}}]<|im_end|>',
    spellings=spelled(
        ("CALL_OPEN", (_HYPERCLOVAX_OPEN, "<|im_end|>\n<|im_start|>assistant" + _HYPERCLOVAX_OPEN)),
        ("CALL_CLOSE", ("<|im_end|>", "<|im_end|>\n", "<|im_end|><|stop|>", "<|im_end|><|stop|>\n")),
    ),
    markers=(_HYPERCLOVAX_OPEN,),
    close_is_stop_token=True,
)

# -- JSON in tags ---------------------------------------------------------------------------------

def _between_tags(
    name: str,
    piece: str,
    reader: str,
    description: str,
    opening: str,
    closing: str,
    markers: tuple[str, ...],
    *,
    other_openings: tuple[str, ...] = (),
) -> CallSyntax:
    """Calls in one block between two tags, a newline on either side of each optional
    (``other_openings``: spellings of the opening tag read too, ``noncanonical``)."""
    openings = around(opening, before="\n", after="\n")
    for other in other_openings:
        openings += around(other, before="\n", after="\n")
    return CallSyntax(
        name=name,
        piece=piece,
        reader=reader,
        description=description,
        spellings=spelled(("CALL_OPEN", openings), ("CALL_CLOSE", around(closing, before="\n", after="\n"))),
        markers=markers,
        noncanonical=other_openings,
    )


LFM2_JSON = _between_tags(
    "lfm2_json",
    "object_or_list_in_tags",
    "json_object_or_list",
    '<|tool_call_start|>{"name": …, "arguments": {…}}<|tool_call_end|>',
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    markers=("<|tool_call_start|>", '"name"'),
)
# InternLM2 / 2.5: one call's object between its action tags, the plugin's name after the
# opening one ("parameters" for the arguments, as its tool prompt asks, or "arguments"). Its
# slow tokenizer decodes the two opening tokens with a space between them unless told not to
# (a server's default): read, noncanonical.
INTERNLM2 = _between_tags(
    "internlm2",
    "object_in_tags",
    "json_object",
    '<|action_start|><|plugin|>\n{"name": …, "parameters": {…}}<|action_end|>',
    "<|action_start|><|plugin|>",
    "<|action_end|>",
    markers=("<|action_start|><|plugin|>",),
    other_openings=("<|action_start|> <|plugin|>",),
)
GIGACHAT = CallSyntax(
    name="gigachat",
    piece="object_after_tag",
    reader="json_object",
    description='<|function_call|>{"name": …, "arguments": {…}}',
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", ("<|function_call|>",))),
    markers=("<|function_call|>",),
)

# IBM Granite 20B FunctionCalling: each call's object after its own tag, the calls one to a line.
GRANITE_20B_FC = CallSyntax(
    name="granite_20b_fc",
    piece="object_after_tag",
    reader="json_object",
    description='<function_call> {"name": …, "arguments": {…}}',
    # The next call's tag ends a call; the last ends with the answer.
    call_close=frozenset({"CALL_OPEN"}),
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", around("<function_call>", before="\n", after=" "))),
    markers=("<function_call>",),
)

# GigaChat 3 writes a call as a turn of the "function call" role after the answer's text.
GIGACHAT3 = CallSyntax(
    name="gigachat3",
    piece="object_after_tag",
    reader="json_object",
    description='<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": …, "arguments": {…}}',
    closes_at_end=True,
    spellings=spelled(
        ("CALL_OPEN", ("<|message_sep|>\n\nfunction call<|role_sep|>\n", "function call<|role_sep|>\n")),
    ),
    markers=("function call<|role_sep|>",),
)


def json_list_between(
    name: str, opening: str, closing: str, description: str, *, stop: str = "", **options: object
) -> CallSyntax:
    """``stop``: the token the model ends its turn with after the calls, where no footer of the
    template's ends it (Cohere's ``<|END_OF_TURN_TOKEN|>``): it closes the calls with them."""
    closings = around(closing, before="\n", after="\n")
    if stop:
        closings += tuple(spelling.rstrip("\n") + stop for spelling in closings if not spelling.endswith("\n"))
    return CallSyntax(
        name=name,
        piece="list_in_tags",
        reader="json_list",
        description=description,
        spellings=spelled(
            ("CALL_OPEN", around(opening, before="\n", after="\n")),
            ("CALL_CLOSE", closings),
        ),
        markers=(opening, closing),
        reader_options=tuple(options.items()),
    )


JSON_LISTS = (
    json_list_between("tool_calls_list", "<tool_calls>", "</tool_calls>", '<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>'),
    # (Nemotron Nano v2 also writes one call's object alone in the tags.)
    replace(
        json_list_between("toolcall_list", "<TOOLCALL>", "</TOOLCALL>", '<TOOLCALL>[{"name": …, "arguments": {…}}]</TOOLCALL>'),
        piece="object_or_list_in_tags",
        reader="json_list_or_object",
    ),
    json_list_between(
        "cohere",
        "<|START_ACTION|>",
        "<|END_ACTION|>",
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]<|END_ACTION|>',
        stop="<|END_OF_TURN_TOKEN|>",
        name_keys=("tool_name", "name"),
        id_keys=("tool_call_id",),
    ),
    json_list_between(
        "apertus",
        "<|tools_prefix|>",
        "<|tools_suffix|>",
        '<|tools_prefix|>[{"NAME": {…}}]<|tools_suffix|>',
        name_as_key=True,
    ),
)
# MiniMax-M1: one JSON object a line, all the calls of a turn in one <tool_calls> block.
MINIMAX_M1 = _between_tags(
    "minimax_m1",
    "objects_in_tags",
    "json_objects",
    '<tool_calls>\n{"name": …, "arguments": {…}}\n{…}\n</tool_calls>',
    "<tool_calls>",
    "</tool_calls>",
    markers=("<tool_calls>", "</tool_calls>"),
)
GRANITE = CallSyntax(
    name="granite",
    piece="list_after_tag",
    reader="json_list",
    description='<|tool_call|>[{"name": …, "arguments": {…}}]',
    closes_at_end=True,
    # Granite 3.1 models also write the tag as plain text (vLLM's tests document
    # ``<tool_call> [...]``): read, noncanonical.
    spellings=spelled(("CALL_OPEN", around("<|tool_call|>", after=" ") + around("<tool_call>", after=" "))),
    markers=("<|tool_call|>",),
    instructed_by=("<|tool_call|> followed by a JSON list",),
    noncanonical=around("<tool_call>", after=" "),
)
MISTRAL_LIST = CallSyntax(
    name="mistral_list",
    call_ids="mistral",
    piece="list_after_tag",
    reader="json_list",
    description='[TOOL_CALLS][{"name": …, "arguments": {…}, "id": "…"}]',
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", around("[TOOL_CALLS]", after=" "))),
    markers=("[TOOL_CALLS]",),
    reader_options=(("id_keys", ("id",)),),
)
FUNCTOOLS = CallSyntax(
    name="functools",
    piece="list_after_tag",
    reader="json_list",
    description='functools[{"name": …, "arguments": {…}}]',
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", ("functools", " functools"))),
    markers=("functools[",),
    # Phi-4-mini's template renders no calls; its tools block is <|tool|>...<|/tool|>.
    template_markers=("<|tool|>", "<|/tool|>"),
    # vLLM's Phi-4-mini template asks for them in its system prompt (and renders past calls as
    # a JSON object whose arguments are a Python dict's repr, which no syntax reads).
    instructed_by=("formatted as functools[",),
)
_LLAMA_SEPARATORS = ("", " ", "\n", "\n\n", ";", "; ", ";\n", "; \n")
_LLAMA_BARE_OPENS = tuple(sep + "{" for sep in _LLAMA_SEPARATORS)
_LLAMA_TAGGED_OPENS = tuple(sep + "<|python_tag|>{" for sep in _LLAMA_SEPARATORS)
_LLAMA_OPENS = _LLAMA_BARE_OPENS + _LLAMA_TAGGED_OPENS
LLAMA_JSON = CallSyntax(
    name="llama_json",
    piece="objects_or_builtin_whole_turn",
    reader="json_or_builtin",
    description='{"name": …, "parameters": {…}} as the whole answer (after text, only behind <|python_tag|>); several joined by ";"; <|python_tag|>NAME.call(…) for a built-in tool',
    whole_turn=True,
    closes_at_end=True,
    call_open=frozenset({"CALL_OPEN", "CALL_NEXT", "TAGGED_OPEN", "TAGGED_NEXT", "BUILTIN_OPEN"}),
    call_close=frozenset({"CALL_OPEN", "CALL_NEXT", "TAGGED_OPEN", "TAGGED_NEXT"}),
    # Every call opens the same way, the first or the next (after ";", a newline, another
    # <|python_tag|>, or nothing): one terminal, and one for the openings with the tag, the
    # only ones that open calls after text (SGLang's tests: "Some intro. <|python_tag|>{…}").
    # A built-in tool's call is Python after the tag.
    spellings=spelled(
        ("CALL_OPEN", _LLAMA_BARE_OPENS),
        ("CALL_NEXT", _LLAMA_BARE_OPENS),
        ("TAGGED_OPEN", _LLAMA_TAGGED_OPENS),
        ("TAGGED_NEXT", _LLAMA_TAGGED_OPENS),
        ("BUILTIN_OPEN", ("<|python_tag|>", " <|python_tag|>", "\n<|python_tag|>")),
    ),
    markers=('{"name"', '"parameters"'),
    reader_options=(("opened", True),),
)
LLAMA4_JSON = CallSyntax(
    name="llama4_json",
    piece="objects_whole_turn",
    reader="json_object",
    description='{"name": …, "parameters": {…}} as the whole answer, after <|python_start|> where the template puts it',
    whole_turn=True,
    closes_at_end=True,
    call_open=frozenset({"CALL_OPEN", "CALL_NEXT"}),
    call_close=frozenset({"CALL_OPEN", "CALL_NEXT"}),
    spellings=spelled(
        ("CALL_OPEN", _LLAMA_OPENS + ("<|python_start|>{", "<|python_start|><|python_end|>{")),
        ("CALL_NEXT", _LLAMA_OPENS + ("<|python_start|>{", "<|python_start|><|python_end|>{")),
    ),
    markers=("<|python_start|>", '{"name"', '"parameters"'),
    reader_options=(("opened", True),),
    trailers=("<|python_end|>",),
)
PYTHONIC_LIST = CallSyntax(
    name="pythonic_list",
    piece="pythonic_whole_turn",
    reader="pythonic",
    description='[get_weather(city="Paris"), f(x=1)] as the whole answer (after <|python_start|> or not)',
    whole_turn=True,
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", ("[", " [", "\n[", "<|python_start|>[", "<|python_start|>\n["))),
    markers=("[", "("),
    reader_options=(("opened", True),),
    trailers=("<|python_end|>",),
    # The Llama 3.2 / ToolACE system prompt, in templates that render past calls with their
    # values unquoted (``"%s" | format(value)``), which no syntax reads back.
    instructed_by=("[func_name1(params_name1=params_value1",),
)
BARE_LIST = CallSyntax(
    name="json_list",
    piece="list_whole_turn",
    reader="json_list",
    description='[{"name": …, "arguments": {…}}] as the whole answer',
    whole_turn=True,
    closes_at_end=True,
    spellings=spelled(("CALL_OPEN", ("[", " [", "\n["))),
    markers=('[{"name"',),
    reader_options=(("opened", True),),
)

# -- a name, then the arguments -------------------------------------------------------------------

KIMI = CallSyntax(
    name="kimi",
    piece="name_arguments",
    reader="name_then_arguments",
    description="<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    spellings=spelled(
        ("CALLS_BEGIN", ("<|tool_calls_section_begin|>",)),
        ("CALLS_END", ("<|tool_calls_section_end|>",)),
        ("CALL_BEGIN", ("<|tool_call_begin|>",)),
        ("CALL_SEP", ("<|tool_call_argument_begin|>",)),
        ("CALL_END", ("<|tool_call_end|>",)),
    ),
    markers=("<|tool_call_begin|>",),
    # functions.get_weather:0 -> name get_weather, and the whole is the call's id
    # ("functions." with no ":INDEX" after the name is no id: the call names nothing).
    reader_options=(("name_pattern", r"^(?!functions\.(?!.*:\d+$))(?:functions\.)?(?P<name>.+?)(?::\d+)?$"), ("name_is_id", True)),
)
def _recipient_parts(name: str, description: str, mark: tuple[str, ...], separator: str, markers: tuple[str, ...]) -> CallSyntax:
    """Each part of the answer follows a mark and names its recipient: "all", the user (the
    answer's opening), or a function, whose arguments run to the next part or the answer's end.
    The template's assistant header ends with the first mark, which is moved into the answer
    (``RECIPIENT_MARKS``): the prompt's mark then opens the first part as a later one does."""
    return CallSyntax(
        name=name,
        piece="recipient_parts",
        reader="name_then_arguments",
        description=description,
        call_open=frozenset({"CALL_BEGIN"}),
        call_close=frozenset({"CALL_BEGIN", "ANSWER_OPEN"}),  # (the next part, to a function or the user)
        closes_at_end=True,
        spellings=spelled(("CALL_BEGIN", mark), ("CALL_SEP", (separator,))),
        markers=markers,
    )


RECIPIENT_MARKS = (">>>", "<|recipient|>")
# Functionary v3.2: ">>>all\n" and the text, ">>>NAME\n{…}" a call. (A model may write a newline
# before the mark, or the mark again after the prompt's.)
FUNCTIONARY_V3_2 = _recipient_parts(
    "functionary_v3_2", ">>>NAME\n{…} (after >>>all\n and the text to the user)", (">>>", "\n>>>", ">>>>>>"), "\n", (">>>",)
)
# Functionary v2.2: each later part is a message of its own, "<|from|>assistant\n<|recipient|>".
FUNCTIONARY_V2 = _recipient_parts(
    "functionary_v2",
    "<|from|>assistant\n<|recipient|>NAME\n<|content|>{…} (after <|recipient|>all\n<|content|> and the text to the user)",
    ("<|recipient|>", "\n<|from|>assistant\n<|recipient|>", "<|from|>assistant\n<|recipient|>"),
    "\n<|content|>",
    ("<|recipient|>", "<|content|>"),
)
SOLAR = CallSyntax(
    name="solar",
    piece="id_name_arguments",
    reader="name_then_arguments",
    description="<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>…",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    spellings=spelled(
        ("CALLS_BEGIN", ("<|tool_calls|>",)),
        ("CALLS_END", ("<|calls|>",)),
        ("CALL_BEGIN", ("<|tool_call:begin|>",)),
        ("NAME_SEP", ("<|tool_call:name|>",)),
        ("CALL_SEP", ("<|tool_call:args|>",)),
        ("CALL_END", ("<|tool_call:end|>",)),
    ),
    markers=("<|tool_call:begin|>", "<|tool_call:name|>"),
)
FUNCTIONARY = CallSyntax(
    name="functionary",
    piece="name_arguments_plain",
    reader="name_then_arguments",
    description="<function=NAME>{…}</function>",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    spellings=spelled(
        ("CALL_BEGIN", ("<function=",)),
        ("CALL_SEP", (">",)),
        ("CALL_END", ("</function>",)),
    ),
    markers=("<function=",),
)
MISTRAL = CallSyntax(
    name="mistral",
    call_ids="mistral",
    piece="name_arguments_open",
    reader="name_then_arguments",
    description="[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_BEGIN"}),
    closes_at_end=True,
    spellings=spelled(
        ("CALL_BEGIN", ("[TOOL_CALLS]",)),
        ("ID_SEP", ("[CALL_ID]",)),
        ("CALL_SEP", ("[ARGS]",)),
        ("ARGS_OPEN", ("{",)),
    ),
    markers=("[TOOL_CALLS]", "[ARGS]"),
)

# Openers of calls to gpt-oss's built-in tools (``to=browser.search``, ``to=python``), which the
# tools given do not list: on a channel as the model writes them, the name is the whole
# recipient; in the role's header, as harmony renders them, the tool's namespace is in the
# spelling, and is the name's beginning.
_HARMONY_BUILTIN_OPENERS = (
    "<|channel|>analysis to=",
    "<|channel|>commentary to=",
    " to=browser.",
    " to=python",
    " to=container.",
    "<|start|>assistant to=browser.",
    "<|start|>assistant to=python",
    "<|start|>assistant to=container.",
)

HARMONY = CallSyntax(
    name="harmony",
    piece="name_arguments_plain",
    reader="name_then_arguments",
    description="<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>",
    call_open=frozenset({"CALL_BEGIN"}),
    call_close=frozenset({"CALL_END"}),
    spellings=spelled(
        (
            "CALL_BEGIN",
            (
                " to=functions.",
                "to=functions.",
                "<|channel|>commentary to=functions.",
                "<|channel|>commentary<|constrain|>json to=functions.",
                "<|channel|>commentary <|constrain|>json to=functions.",
                "<|channel|>analysis to=functions.",
                "<|start|>assistant to=functions.",
                "<|start|>assistant<|channel|>commentary to=functions.",
                *_HARMONY_BUILTIN_OPENERS,
            ),
        ),
        (
            "CALL_SEP",
            (
                "<|message|>",
                " <|constrain|>json<|message|>",
                "<|constrain|>json<|message|>",
                " json<|message|>",
                "<|channel|>commentary json<|message|>",
                "<|channel|>commentary<|message|>",
                # (A preamble's header with the prompt's ``<|start|>assistant`` written again.)
                "<|start|>assistant<|channel|>commentary<|message|>",
                "<|channel|>commentary <|constrain|>json<|message|>",
                "<|channel|>commentary<|constrain|>json<|message|>",
                "<|channel|>analysis <|constrain|>json<|message|>",
                "<|channel|>analysis<|constrain|>json<|message|>",
                "<|channel|>analysis json<|message|>",
                # The ``code`` content type, as gpt-oss writes its calls to python and the
                # browser (``to=python code<|message|>print(1)``).
                " code<|message|>",
                "<|channel|>commentary code<|message|>",
                "<|channel|>analysis code<|message|>",
            ),
        ),
        ("CALL_END", ("<|call|>",)),
    ),
    close_is_stop_token=True,
    markers=("to=functions.",),
    preamble=True,
    # The built-in tools (the browser, python) are not functions the request's tools list:
    # their calls are read whatever that list holds.
    reader_options=(("builtin_openers", _HARMONY_BUILTIN_OPENERS),),
)

# gpt-oss-20b's first template revision writes the recipient in the header and ends a call
# with the message's <|end|>; the model writes the calls as the later revisions do, ended
# by <|call|>: both are read.
HARMONY_END_CLOSED = replace(
    HARMONY,
    name="harmony_end_closed",
    description="<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}<|end|>",
    spellings=tuple((name, (*options, "<|end|>") if name == "CALL_END" else options) for name, options in HARMONY.spellings),
)

# -- XML parameters -------------------------------------------------------------------------------


def xml_syntax(
    name: str,
    description: str,
    *,
    call_open: tuple[str, ...],
    name_end: tuple[str, ...],
    param_open: tuple[str, ...],
    param_name_end: tuple[str, ...],
    param_close: tuple[str, ...],
    call_close: tuple[str, ...],
    markers: tuple[str, ...],
    calls_begin: tuple[str, ...] = (),
    calls_end: tuple[str, ...] = (),
    self_close: tuple[str, ...] = (),
    cdata: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    **options: object,
) -> CallSyntax:
    # (Spellings read with a ``noncanonical`` diagnostic; the other options are the reader's.)
    noncanonical = options.pop("noncanonical", ())
    assert isinstance(noncanonical, tuple)
    # A parameter's name may also end as the function's does, leaving out the type its own end
    # announces (DeepSeek's ``<｜DSML｜parameter name="city">`` with no ``string=``): read by
    # the tool's schema, noncanonical. (Spelled as the name's end, it is that terminal.)
    untyped = options.pop("untyped_parameters", False)
    pairs: list[tuple[str, Iterable[str]]] = [
        ("CALL_OPEN", call_open),
        ("PARAM_OPEN", param_open),
        ("PARAM_NAME_END", param_name_end),
        ("PARAM_CLOSE", param_close),
        ("CALL_CLOSE", call_close),
    ]
    if name_end:
        pairs.insert(1, ("NAME_END", name_end))
    if calls_begin:
        pairs += [("CALLS_BEGIN", calls_begin), ("CALLS_END", calls_end)]
    if untyped:
        pairs.append(("UNTYPED_NAME_END", name_end))
    if self_close:
        pairs.append(("CALL_SELF_CLOSE", self_close))
        noncanonical += self_close
    if cdata:
        pairs += [("CDATA_OPEN", cdata[0]), ("CDATA_CLOSE", cdata[1])]
    piece = "xml_parameters_bare_name" if not name_end else "xml_parameters_section" if calls_begin else "xml_parameters"
    if cdata:
        piece = "xml_parameters_cdata"
    if not name_end:
        options.setdefault("bare_name", True)
    return CallSyntax(
        name=name,
        piece=piece,
        reader="xml_parameters",
        description=description,
        spellings=spelled(*pairs),
        markers=markers,
        reader_options=tuple(options.items()),
        noncanonical=noncanonical,
        call_close=frozenset({"CALL_CLOSE", "CALL_SELF_CLOSE"}) if self_close else frozenset({"CALL_CLOSE"}),
    )


QWEN3_CODER = xml_syntax(
    "qwen3_coder",
    "<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>",
    # The templates write the content trimmed, a newline, then "\n<tool_call>": both newlines
    # are the call's (the content read back is the content rendered).
    # (Models also indent the function's tag, as llama.cpp's tests write it.)
    call_open=tuple(
        lead + "<tool_call>" + tail + "<function="
        for lead in ("", "\n", "\n\n")
        for tail in ("", "\n", "\n\n", " ", "\n  ", "\n    ", "\n\t")
    )
    # Qwen3-Coder models sometimes leave out <tool_call> and </tool_call>: the function's own
    # tags are the call's then (read, with a ``noncanonical`` diagnostic).
    + ("<function=", "\n<function="),
    name_end=around(">", after="\n"),
    param_open=around("<parameter=", before="\n"),
    param_name_end=around(">", after="\n"),
    param_close=around("</parameter>", before="\n", after="\n"),
    # A model may leave out ``</function>``: the call still ends with ``</tool_call>``. (Step
    # 3.5 indents a ``</tool_call>`` it writes after ``</function>``.)
    call_close=tuple(s + "</tool_call>" for s in ("", "\n", *around("</function>", before="\n", after="\n")))
    + tuple(s + gap + "</tool_call>" for s in around("</function>", before="\n") for gap in ("\n  ", "\n\n"))
    + ("</function>", "\n</function>"),
    markers=("<function=", "<parameter="),
    # (Read with a ``noncanonical`` diagnostic: a call with no tag of its own, and one whose
    # ``</function>`` is left out.)
    noncanonical=("<function=", "</tool_call>", "\n</tool_call>"),
)
SEED = xml_syntax(
    "seed",
    "<seed:tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></seed:tool_call>",
    call_open=tuple(s + "<function=" for s in around("<seed:tool_call>", before="\n", after="\n")),
    # The template writes a value with no newline around it: a newline at its edge is the
    # value's (Qwen3-Coder's template writes one on each side, which are the tags'). The
    # newline after the function's name goes with the next tag.
    name_end=(">",),
    param_open=around("<parameter=", before="\n"),
    param_name_end=(">",),
    param_close=around("</parameter>", after="\n"),
    call_close=tuple(s + "</seed:tool_call>" for s in ("", "\n", *around("</function>", before="\n", after="\n"))),
    markers=("<seed:tool_call>", "<function="),
)


def _invoke(
    name: str, prefix: str, section: str | tuple[str, ...], description: str, *, gap: str = "\n", **options: Any
) -> CallSyntax:
    """``gap``: the whitespace the template writes between the content and the section (a model
    may leave it out, or write one newline)."""
    sections = (section,) if isinstance(section, str) else section
    openings = [s for one in sections for s in around(f"<{prefix}{one}>", before="\n", after="\n")]
    openings += [gap + s for s in openings if not s.startswith("\n") and gap != "\n"]
    # ``value_on_its_own_line``: a newline before a parameter's closing tag is the tag's, as
    # the one after its name is (MiniMax-M2 models write ``\nTokyo\n``, which the peers read
    # as ``Tokyo``); elsewhere a value's trailing newline is its own.
    value_edge = "\n" if options.pop("value_on_its_own_line", False) else ""
    # (The templates write every call in the section: one outside it is read, noncanonical.)
    syntax = xml_syntax(
        name,
        description,
        calls_begin=tuple(openings),
        calls_end=tuple(s for one in sections for s in around(f"</{prefix}{one}>", before="\n", after="\n")),
        call_open=around(f'<{prefix}invoke name="', before="\n"),
        name_end=around('">', after="\n"),
        param_open=around(f'<{prefix}parameter name="', before="\n"),
        param_name_end=options.pop("param_name_end", around('">', after="\n")),
        param_close=around(f"</{prefix}parameter>", before=value_edge, after="\n"),
        call_close=around(f"</{prefix}invoke>", before="\n", after="\n"),
        # A call with no parameters written as an empty element (``<invoke name="f"/>``): not
        # what the templates write, but what models trained on XML do.
        self_close=around('"/>', after="\n"),
        markers=(f"<{prefix}invoke name=",),
        **options,
    )
    return replace(syntax, in_section=True)


MINIMAX = _invoke(
    "minimax",
    "",
    "minimax:tool_call",
    '<minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke></minimax:tool_call>',
    value_on_its_own_line=True,
)
_ATEM = _invoke(
    "atem",
    "atem:",
    "function_calls",
    '<atem:function_calls><atem:invoke name="NAME"><atem:parameter name="KEY">VALUE</atem:parameter>…',
    # Muse names a function "TOOL.FUNCTION"; an OpenAI tool's is "NAME.NAME".
    namespaced=True,
)
# Muse Glimmer: the section of calls in a message addressed to the tool.
MUSE = replace(
    _ATEM,
    piece="addressed_xml",
    description='to=NAME<|message|><atem:function_calls><atem:invoke name="NAME"><atem:parameter name="KEY">VALUE</atem:parameter>…',
    spellings=_ATEM.spellings + spelled(("ADDRESS", (" to=",)), ("ADDRESS_END", ("<|message|>",))),
)
# DeepSeek's DSML: each parameter's own flag says whether its value is a string or JSON, and
# the templates write the section after a blank line.
_FLAGGED_PARAMETERS: dict[str, Any] = {
    "param_name_end": ('" string="true">', '" string="false">'),
    "gap": "\n\n",
    "typed_by": {'" string="true">': "string", '" string="false">': "json"},
    "untyped_parameters": True,
}
DSML = _invoke(
    "dsml",
    "｜DSML｜",
    # V3.2's section, and V4's
    ("function_calls", "tool_calls"),
    '<｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter name="KEY" string="true">VALUE…',
    **_FLAGGED_PARAMETERS,
)
# GigaChat 3.5 writes the same with a prefix of its own.
GCML = _invoke(
    "gcml",
    "｜GCML｜",
    "tool_calls",
    '<｜GCML｜tool_calls><｜GCML｜invoke name="NAME"><｜GCML｜parameter name="KEY" string="true">VALUE…',
    **_FLAGGED_PARAMETERS,
)
# The whitespace GLM-4.5 writes between its tags (a newline and an indent, or nothing), and
# what models write there beside it (a blank line, a Windows line end).
_GLM_GAPS = ("", "\n", " ", "  ", "    ", "\t", "\n  ", "\n    ", "\n\t", "\n\n", "\r\n", " \n", "\n ")
_GLM_VALUE_UNOPENED = ("</arg_key>", "</arg_key>\n")
GLM = xml_syntax(
    "glm",
    "<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>",
    call_open=around("<tool_call>", before="\n"),
    name_end=(),
    param_open=tuple(gap + "<arg_key>" for gap in _GLM_GAPS),
    # (A value whose <arg_value> is left out, ``</arg_key>\nNew York</arg_value>``, as GLM-4.6
    # writes it at times: read, noncanonical.)
    param_name_end=tuple("</arg_key>" + gap + "<arg_value>" for gap in _GLM_GAPS) + _GLM_VALUE_UNOPENED,
    param_close=around("</arg_value>", after="\n"),
    call_close=tuple(gap + "</tool_call>" for gap in _GLM_GAPS),
    markers=("<arg_key>",),
    unopened_values=_GLM_VALUE_UNOPENED,
)

# Tencent Hy3: GLM's tags, each suffixed with the deployment's name (":opensource"; the preview's
# tokenizer spells them bare), a separator after the function's name, the calls in a section.
def _hunyuan(name: str, suffix: str) -> CallSyntax:
    def tag(word: str) -> str:
        return f"<{word}{suffix}>"

    return xml_syntax(
        name,
        f"{tag('tool_calls')}{tag('tool_call')}NAME{tag('tool_sep')}{tag('arg_key')}KEY{tag('/arg_key')}"
        f"{tag('arg_value')}VALUE{tag('/arg_value')}{tag('/tool_call')}{tag('/tool_calls')}",
        calls_begin=around(tag("tool_calls"), before="\n", after="\n"),
        calls_end=around(tag("/tool_calls"), before="\n", after="\n"),
        call_open=around(tag("tool_call"), before="\n"),
        name_end=around(tag("tool_sep"), after="\n"),
        param_open=around(tag("arg_key"), before="\n"),
        param_name_end=tuple(tag("/arg_key") + gap + tag("arg_value") for gap in _GLM_GAPS),
        param_close=around(tag("/arg_value"), after="\n"),
        call_close=around(tag("/tool_call"), before="\n", after="\n"),
        markers=(tag("tool_call"), tag("tool_sep"), tag("arg_key")),
    )


HUNYUAN = _hunyuan("hunyuan", ":opensource")
HUNYUAN_BARE = _hunyuan("hunyuan_bare", "")

# MiniCPM 5: XML with the names in attributes; a value holding "<", "&" or a newline is written
# in a CDATA block, whose brackets are the tags' (the value is what they enclose).
MINICPM = xml_syntax(
    "minicpm",
    '<function name="NAME"><param name="KEY">VALUE</param></function>',
    call_open=around('<function name="', before="\n"),
    # (Models also wrap the parameters in <arguments>…</arguments>, as Ollama's tests write
    # them: read too. The name's end and a parameter's are one delimiter.)
    name_end=('">', '"><arguments>'),
    param_open=('<param name="',),
    param_name_end=('">', '"><arguments>'),
    param_close=("</param>",),
    # A CDATA value ends only at its block's end: the tags it holds are its text.
    cdata=(('"><![CDATA[',), ("]]></param>",)),
    call_close=("</function>", "</arguments></function>"),
    markers=('<function name="', '<param name="'),
)

# Kimi K3's tags (XTML): <|open|>TAG ATTRIBUTES<|sep|> … <|close|>TAG<|sep|>. A call is numbered
# in its section, and each argument says its JSON type.
_XTML_TYPES = ("string", "number", "boolean", "null", "object", "array")
XTML = xml_syntax(
    "xtml",
    '<|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
    calls_begin=("<|open|>tools<|sep|>",),
    calls_end=("<|close|>tools<|sep|>",),
    call_open=('<|open|>call tool="',),
    # (The index a call is written with is its place in the section: nothing to read.)
    name_end=numbered('" index="1"<|sep|>'),
    param_open=('<|open|>argument key="',),
    param_name_end=tuple(f'" type="{kind}"<|sep|>' for kind in _XTML_TYPES),
    param_close=("<|close|>argument<|sep|>",),
    call_close=("<|close|>call<|sep|>",),
    markers=('<|open|>call tool="', '<|open|>argument key="'),
    # The argument's own type says whether its value is a string or JSON.
    typed_by={f'" type="{kind}"<|sep|>': "string" if kind == "string" else "json" for kind in _XTML_TYPES},
    escaped_attributes=True,
    # Arguments given as JSON text are written whole in a block of their own.
    json_block=('<|open|>json type="object"<|sep|>', "<|close|>json<|sep|>"),
)

# MiniMax-M3: every tag after the template's mark; each argument between tags named by its key.
_MM = "]<]minimax[>["
MINIMAX_M3 = CallSyntax(
    name="minimax_m3",
    piece="key_tags_section",
    reader="key_tags",
    description=f'{_MM}<tool_call>\\n{_MM}<invoke name="NAME">{_MM}<KEY>VALUE{_MM}</KEY>…{_MM}</invoke>\\n{_MM}</tool_call>',
    spellings=spelled(
        # (The template writes the mark right after the content: a newline before it is the content's.)
        ("CALLS_BEGIN", around(f"{_MM}<tool_call>", after="\n")),
        ("CALLS_END", around(f"{_MM}</tool_call>", before="\n", after="\n")),
        ("CALL_OPEN", around(f'{_MM}<invoke name="', before="\n")),
        ("NAME_END", ('">',)),
        ("CALL_CLOSE", around(f"{_MM}</invoke>", after="\n")),
    ),
    markers=(f'{_MM}<invoke name="',),
    reader_options=(("mark", _MM),),
)

# -- Python calls, Gemma's calls ------------------------------------------------------------------

PYTHONIC = CallSyntax(
    name="pythonic",
    piece="pythonic_in_tags",
    reader="pythonic",
    description='<|tool_call_start|>[get_weather(city="Paris"), f(x=1)]<|tool_call_end|>',
    spellings=spelled(
        ("CALL_OPEN", around("<|tool_call_start|>", before="\n", after="\n")),
        ("CALL_CLOSE", around("<|tool_call_end|>", before="\n", after="\n")),
    ),
    markers=("<|tool_call_start|>",),
    # LFM2's templates that render no calls still open the tools prompt their way; the models
    # write Python calls in these tags unless told to write JSON.
    template_markers=("List of tools: ",),
)
OLMO3 = CallSyntax(
    name="olmo3",
    piece="pythonic_in_tags",
    reader="pythonic",
    description='<function_calls>get_weather(city="Paris")\\nf(x=1)</function_calls>',
    spellings=spelled(
        ("CALL_OPEN", around("<function_calls>", before="\n", after="\n")),
        ("CALL_CLOSE", around("</function_calls>", before="\n", after="\n")),
    ),
    markers=("<function_calls>", "</function_calls>"),
)
GEMMA = CallSyntax(
    name="gemma",
    piece="gemma",
    reader="gemma",
    description='<|tool_call>call:NAME{key:<|"|>value<|"|>}<tool_call|>',
    call_open=frozenset({"CALL_OPEN", "CALL_NEXT", "BARE_CALL_OPEN"}),
    call_close=frozenset({"CALL_CLOSE", "CALL_NEXT"}),
    spellings=spelled(
        # (vLLM's tests document ``<|tool_call>:call:`` in real output: read, noncanonical.)
        ("CALL_OPEN", ("<|tool_call>call:", "<|tool_call>:call:")),
        # (And ``call:NAME{…}`` with no opening tag, as the answer or after the thought channel.)
        ("BARE_CALL_OPEN", ("call:",)),
        ("ARGS_OPEN", ("{",)),
        # (mlx-lm and others read them: "call:a{…}call:b{…}" in one block.)
        ("CALL_NEXT", ("}call:", "} call:", "}\ncall:")),
        # The template answers a call in the model's own turn: the model stops at
        # <|tool_response>, which is no part of its answer.
        ("CALL_CLOSE", ("<tool_call|>", "<tool_call|><|tool_response>")),
    ),
    markers=("<|tool_call>call:",),
    noncanonical=("<|tool_call>:call:",),
)

# Tried in this order on a template's rendered calls; the first whose grammar reads them back
# is the template's. More specific syntaxes come before the ones they contain.
CANDIDATES: tuple[CallSyntax, ...] = (
    QWEN3_CODER,
    SEED,
    HUNYUAN,
    HUNYUAN_BARE,
    GLM,
    MINIMAX,
    MINICPM,
    XTML,
    MINIMAX_M3,
    MUSE,
    DSML,
    GCML,
    HERMES,
    KIMI,
    MISTRAL,
    MISTRAL_LIST,
    GRANITE,
    *JSON_LISTS,
    MINIMAX_M1,
    FUNCTOOLS,
    LFM2_JSON,
    INTERNLM2,
    PYTHONIC,
    OLMO3,
    GIGACHAT,
    GIGACHAT3,
    GRANITE_20B_FC,
    HYPERCLOVAX,
    GEMMA,
    HARMONY,
    HARMONY_END_CLOSED,
    FUNCTIONARY,
    FUNCTIONARY_V3_2,
    FUNCTIONARY_V2,
    SOLAR,
    LLAMA4_JSON,
    LLAMA_JSON,
    PYTHONIC_LIST,
    BARE_LIST,
)
CALL_SYNTAXES: dict[str, CallSyntax] = {s.name: s for s in (*CANDIDATES, DEEPSEEK, DEEPSEEK_V3)}
