"""A format for any template: the framing read off its output, the reasoning tags it writes,
and the call syntax its tool calls are written in (when chatcodec knows it)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from chatcodec.check.special_tokens import TOKEN_SHAPE
from chatcodec.errors import ChatCodecError, GrammarError
from chatcodec.formats.base import Format
from chatcodec.formats.framing import WHITESPACE, Framing, grammar_piece
from chatcodec.formats.learned import learned_json_syntax, learned_named_syntaxes
from chatcodec.formats.probe import (
    ASSISTANT,
    PROBE_TOOL,
    TOOL_RESULT,
    _TOKEN,
    FramingNotFound,
    REASONING,
    USER,
    Probes,
    Render,
    _assistant,
    _prefills,
    _user,
    probe_call,
    probe_tool,
    read_framing,
    without_unasked_prompt,
)
from chatcodec.formats.calls import CANDIDATES, HERMES, RECIPIENT_MARKS, CallSyntax
from chatcodec.formats.syntax import (
    KNOWN_ANSWER_TAGS,
    KNOWN_REASONING_PHRASES,
    KNOWN_REASONING_TAGS,
    MODEL_REASONING_TAGS,
    OPENING_VARIANTS,
    ReasoningSyntax,
)
from chatcodec.parse.stream import StreamParser


# An end of turn, and the end of message its template writes beside it (Llama 3.1+ and
# Llama 4's end of a turn that awaits a tool's answer).
ALTERNATE_ENDS = (("<|eot_id|>", "<|eom_id|>"), ("<|eot|>", "<|eom|>"))


def closing_token_of_every_turn(framing: Framing) -> str | None:
    """The special token every turn's footer ends with, where an answer's footer has more
    before it (Kimi K3's ``<|close|>message<|sep|><|end_of_msg|>``): the model's stop token,
    which a server strips, when no end-of-sequence token is given (a template read alone)."""
    footer = framing.footers.get("assistant", "").rstrip(WHITESPACE)
    last = next(reversed(list(TOKEN_SHAPE.finditer(footer))), None)
    if last is None or last.end() != len(footer) or not footer[: last.start()].strip(WHITESPACE):
        return None
    token = last.group()
    footers = [f.rstrip(WHITESPACE) for f in framing.footers.values() if f.strip(WHITESPACE)]
    return token if all(f.endswith(token) for f in footers) else None


def derive_format(
    name: str,
    render: Render,
    template_source: str,
    eos_token: str | None = None,
    *,
    reasoning_tags: tuple[str, str] | None = None,
) -> Format:
    """The format of a template, read off its output (raises ``FramingNotFound``). A model
    ends its answer with the template's footer or with its end-of-sequence token: both end it.
    ``reasoning_tags`` are the reasoning markers where the caller knows them (the template may
    never write them)."""
    asked_only = without_unasked_prompt(render)
    probes = Probes(asked_only, template_source)
    framing = read_framing(name, probes)
    if asked_only is not render:
        framing = replace(framing, prompt_written_unasked=True)
    turn_tags = [*framing.headers.values(), *framing.footers.values()]
    if (
        eos_token
        and eos_token.strip()
        and eos_token not in framing.end
        # (Where every turn ends with it, Cohere's <|END_OF_TURN_TOKEN|>, it is no end of its own,
        # unless the answer's footer ends with it: a model that leaves out the tag before it,
        # Command A's <|END_RESPONSE|>, still stops there.)
        and (
            not any(eos_token in tag for tag in turn_tags)
            or framing.footers.get("assistant", "").endswith(eos_token)
        )
    ):
        framing = replace(framing, end=(*framing.end, eos_token))
    stop_token = eos_token if eos_token and eos_token.strip() else closing_token_of_every_turn(framing)
    if stop_token:
        # The model stops at the end-of-sequence token, and a server strips it from what it
        # returns: a footer that holds it (Command A's <|END_RESPONSE|><|END_OF_TURN_TOKEN|>,
        # or with the next turn's opening after it) ends the answer without it too. (Not with
        # it: where the next turn's header begins with the token, that would take it away.)
        short = [end[: end.index(stop_token)] for end in framing.end if stop_token in end]
        # A footer that opens with the token and goes on to a turn of the template's own
        # (Command R's tool-use templates write a system turn of instructions after the last
        # one): the model stops at the token, which ends the answer.
        short += [stop_token for end in framing.end if end.startswith(stop_token) and end != stop_token]
        added = tuple(dict.fromkeys(end for end in short if end.strip() and end not in framing.end))
        if added:
            framing = replace(framing, end=(*framing.end, *added))
    # Llama writes a second end of message after a call it expects a tool's answer to: the
    # model ends such a turn with it.
    alternates = tuple(
        alternate
        for end, alternate in ALTERNATE_ENDS
        if end in framing.end and alternate not in framing.end and alternate in template_source
    )
    if alternates:
        framing = replace(framing, end=(*framing.end, *alternates))
    if reasoning_tags is None:
        reasoning_tags = next((tags for line, tags in MODEL_REASONING_TAGS if line in template_source), None)
    if reasoning_tags is not None:
        reasoning: ReasoningSyntax | None = ReasoningSyntax.from_tags(*reasoning_tags)
    else:
        reasoning = find_reasoning(probes, framing)
    if reasoning is not None:
        reasoning = reasoning.with_openings(OPENING_VARIANTS.get(reasoning.open_tag, ()))
        framing = header_before_reasoning(probes, framing, reasoning)
    framing = with_answer_opening(probes, framing, reasoning)
    framing = recipient_mark_in_answer(framing)
    calls, calls_note = find_call_syntax(name, probes, framing, reasoning)
    reserved = frozenset(reasoning.open_spellings + reasoning.close_spellings) if reasoning else frozenset()
    if calls is not None:
        reserved |= frozenset(calls.delimiters())
    try:
        piece = grammar_piece(framing, reserved)
    except GrammarError as exc:
        raise FramingNotFound(f"template {name!r} does not write a format chatcodec can parse: {exc}") from None
    unprompted = reasoning is not None and any(
        _opens_reasoning(prefill, reasoning) for prefill, _ in framing.prefills
    )
    found = Format(
        name=name,
        framing=piece,
        reasoning=reasoning,
        calls=calls,
        unprompted=unprompted,
        source=framing,
        prefill_keywords=framing.prefills,
        system_turn_always=_writes_empty_system_turn(framing),
        calls_note=calls_note,
    )
    try:
        found.grammar  # compiled now, so that a framing no LALR grammar can hold is told at once
    except GrammarError as exc:
        raise FramingNotFound(f"template {name!r} does not write a format chatcodec can parse: {exc}") from None
    return found


def recipient_mark_in_answer(framing: Framing) -> Framing:
    """The answer's, not the header's, the mark an assistant header ends with where each part
    of the answer begins with it and names its recipient (Functionary's ``>>>`` and
    ``<|recipient|>``, then ``all`` and the text to the user, or a function's name and its
    arguments): a second part's mark then reads as the first's, and the prompt's mark as the
    first part's."""
    header = framing.headers.get("assistant", "")
    mark = next((mark for mark in RECIPIENT_MARKS if header.endswith(mark)), None)
    if mark is None or header == mark or not framing.answer_open.startswith("all\n"):
        return framing
    return replace(
        framing,
        headers={**framing.headers, "assistant": header[: -len(mark)]},
        answer_open=mark + framing.answer_open,
        prefills=tuple((mark + text, keywords) for text, keywords in framing.prefills),
    )


def _writes_empty_system_turn(framing: Framing) -> bool:
    """Does the template write an empty system turn when there is no system message?"""
    header = framing.headers.get("system", "")
    return bool(header) and framing.default_system == header + framing.footers.get("system", "")


def _opens_reasoning(prefill: str, reasoning: ReasoningSyntax) -> bool:
    """Does a generation prompt leave the reasoning block open?"""
    return prefill.rstrip(WHITESPACE).endswith(reasoning.open_tag)


def find_reasoning(probes: Probes, framing: Framing) -> ReasoningSyntax | None:
    """The reasoning tags: as the template renders ``reasoning_content``, else as its
    generation prompt or its source spells a known pair."""
    header = framing.headers.get("assistant", "")
    text = probes.get("ua(reasoning)", [_user(), _assistant(reasoning_content=REASONING)])
    if text is not None and REASONING in text and ASSISTANT in text and header:
        start = text.index(USER) + len(USER)
        at_reasoning = text.index(REASONING, start)
        at_answer = text.find(ASSISTANT, at_reasoning)
        before = text[start:at_reasoning]
        prompt = framing.generation_prompt
        own_kind = header not in before and _own_message_header(prompt, header) and prompt in before
        if own_kind:
            # The reasoning is a message of its own whose header names its kind right after
            # the generation prompt (HyperCLOVA X's ``<|im_start|>assistant/think\n``, where an
            # answer's is ``<|im_start|>assistant\n``): the model writes the kind, the tag.
            header = prompt
        if at_answer > at_reasoning and header in before:
            opening = before[before.rindex(header) + len(header) :].strip(WHITESPACE)
            closing_raw = text[at_reasoning + len(REASONING) : at_answer]
            if header in closing_raw:
                # The answer is a message of its own (harmony's analysis, then final): the
                # reasoning ends where the next message's header does.
                closing_raw = closing_raw[: closing_raw.index(header) + len(header)]
            closing = closing_raw.strip(WHITESPACE)
            known = dict(KNOWN_REASONING_TAGS).get(opening)
            if known and closing.startswith(known) and closing != known:
                # The template opens the answer right after the tag (Command A Reasoning's
                # <|END_THINKING|><|START_RESPONSE|>); a model may go on to a call instead.
                closing = known
            if not opening and _marker_like(closing):
                # No opening tag in the message: the generation prompt opens the reasoning with
                # a line of its own (Apriel 1.6's "Here are my reasoning steps:"), which stands
                # for the tag, and a marker ends it ("[BEGIN FINAL RESPONSE]").
                opening = _opening_line(framing)
            if _tag_like(opening) and _tags_on_lines(closing) or opening and _marker_like(closing):
                after = len(closing_raw) - len(closing_raw.rstrip("\n"))
                found = ReasoningSyntax.from_tags(opening, closing, newlines_after_close=max(2, after))
                # (A message of its own ends with the next one's header written out: HyperCLOVA X
                # writes no shorter form, and its end alone ends every turn.)
                if closing.endswith(header) and closing != header and not own_kind:
                    found = found.with_closings(_header_left_out(closing, header))
                return found
    for prefill, _ in framing.prefills:
        empty_block = _empty_block(prefill)
        if empty_block is not None:
            return ReasoningSyntax.from_tags(*empty_block)
    # An empty block the template writes before every answer without reasoning, which the
    # assistant header then ends with (Hy3's ``<think:opensource></think:opensource>``).
    for token in _TOKEN.finditer(header):
        empty_block = _empty_block(header[token.start() :])
        if empty_block is not None and empty_block[1] == empty_block[0].replace("<", "</", 1):
            return ReasoningSyntax.from_tags(*empty_block)
    prompts = " ".join(prefill for prefill, _ in framing.prefills) + framing.generation_prompt
    for opening, closing in KNOWN_REASONING_TAGS:
        if opening in prompts or closing in prompts:
            return ReasoningSyntax.from_tags(opening, closing)
    for opening, closing in KNOWN_REASONING_TAGS:
        if opening in probes.template_source and closing in probes.template_source:
            return ReasoningSyntax.from_tags(opening, closing)
    for openings, closings in KNOWN_REASONING_PHRASES:
        if openings[0] in probes.template_source and closings[0] in probes.template_source:
            return ReasoningSyntax.from_phrases(openings, closings)
    return None


def header_before_reasoning(probes: Probes, framing: Framing, reasoning: ReasoningSyntax) -> Framing:
    """An assistant header that ends in the reasoning tag (every answer opens with a think
    block) stops before it: the tag is the model's, or the generation prompt's prefill."""
    header = framing.headers.get("assistant", "")
    at = header.find(reasoning.open_tag)
    if at < 0:
        # Or in the closing tag alone, which stands for no reasoning (Laguna writes
        # ``<assistant>\n</think>`` before an answer with none, and its prompt with thinking on
        # ends ``<assistant>\n<think>``).
        at = header.find(reasoning.close_tag)
    if at < 0:
        return framing
    header = header[:at]
    headers = {**framing.headers, "assistant": header}
    return replace(framing, headers=headers, prefills=_prefills(probes, framing.generation_prompt, header))


def with_answer_opening(probes: Probes, framing: Framing, reasoning: ReasoningSyntax | None) -> Framing:
    """What the template writes between the generation prompt and a plain answer: leading
    whitespace, and text that opens the visible answer (an empty reasoning block aside)."""
    prompt = probes.get("u+gp", [_user()], generation_prompt=True)
    full = probes.get("ua", [_user(), _assistant()])
    if prompt is not None and full is not None and USER in prompt and USER in full:
        # (Read from the user's turn on: a template may write more before it when asked for the
        # prompt, vLLM's Muse Glimmer its default system block.)
        prompt, full = prompt[prompt.index(USER) :], full[full.index(USER) :]
    if prompt is not None and full is not None and not full.startswith(prompt) and reasoning is not None:
        # A generation prompt that opens the reasoning (or writes an empty block) where the
        # answer the template renders has none (Command A North's <|START_THINKING|>, then
        # <|START_TEXT|> before an answer): the answer's opening is read after the prompt less it.
        blocks = [o + c for o in reasoning.open_spellings for c in reasoning.close_spellings]
        for written in sorted([*blocks, *reasoning.open_spellings], key=len, reverse=True):
            if prompt.endswith(written) and full.startswith(prompt[: -len(written)]):
                prompt = prompt[: -len(written)]
                break
    if prompt is None or full is None or not full.startswith(prompt) or ASSISTANT not in full[len(prompt) :]:
        return framing
    between = full[len(prompt) : full.index(ASSISTANT, len(prompt))]
    lead = between[: len(between) - len(between.lstrip(WHITESPACE))]
    rest = between[len(lead) :]
    if reasoning is not None:
        # An empty reasoning block, or the closing tag of one the prompt opened.
        blocks = [o + c for o in reasoning.open_spellings for c in reasoning.close_spellings]
        for written in sorted([*blocks, *reasoning.close_spellings], key=len, reverse=True):
            if rest.startswith(written):
                rest = rest[len(written) :]
                break
    answer_open = rest if rest.strip(WHITESPACE) else ""
    answer_close = ""
    closing = dict(KNOWN_ANSWER_TAGS).get(answer_open.strip(WHITESPACE), "")
    if closing and framing.end and framing.end[0].startswith(closing):
        # The template closes the answer before the turn ends (Kimi K3's
        # <|close|>response<|sep|>, then <|close|>message<|sep|>…): its calls come after
        # that closing tag, and the turn ends after them without it.
        answer_close = closing
        # (Not what is whitespace alone once the tag is taken away, ERNIE's ``</response>\n``:
        # a newline is no end of a turn.)
        unclosed = tuple(
            end[len(closing) :]
            for end in framing.end
            if end.startswith(closing) and end[len(closing) :].strip(WHITESPACE) and end[len(closing) :] not in framing.end
        )
        framing = replace(framing, end=(*framing.end, *unclosed))
    if not answer_open and reasoning is not None:
        # Tags the system prompt asks the answer to be written between (Granite 3.3: "write
        # your response between <response></response>"), which the template does not write.
        for opening, closing in KNOWN_ANSWER_TAGS:
            if opening + closing in probes.template_source:
                answer_open, answer_close = opening, closing
                break
    return replace(framing, lead=lead, answer_open=answer_open, answer_close=answer_close)


def _marker_like(text: str) -> bool:
    """A marker that ends reasoning written out in words: one short line in brackets
    (``[BEGIN FINAL RESPONSE]``), or a tag."""
    if _tag_like(text):
        return True
    return 2 < len(text) <= 40 and text[0] == "[" and text[-1] == "]" and "\n" not in text


def _opening_line(framing: Framing) -> str:
    """The one line of text the default generation prompt writes after the assistant header,
    or ""."""
    for prefill, keywords in framing.prefills:
        line = prefill.strip(WHITESPACE)
        if not keywords and line and "\n" not in line and len(line) <= 60:
            return line
    return ""


def _header_left_out(closing: str, header: str) -> tuple[str, ...]:
    """A closing that ends the reasoning's message and opens the answer's with the assistant
    header (harmony's ``<|end|><|start|>assistant``), as models and peers' tests also write
    it: with a newline between the two, without the header's role (``<|end|><|start|>``), or
    without the header, the message's end alone, the answer's channel following it."""
    end = closing[: -len(header)]
    token = _TOKEN.match(header)
    without_role = [end + token.group()] if token is not None and token.end() < len(header) else []
    return (end + "\n" + header, *without_role, end)


def _own_message_header(prompt: str, header: str) -> bool:
    """Does the generation prompt stop inside the assistant header, short of whitespace alone
    (the model writes the newline, or a word before it)?"""
    return bool(prompt) and header != prompt and header.startswith(prompt) and not header[len(prompt) :].strip(WHITESPACE)


def _tags_on_lines(text: str) -> bool:
    """A tag, or tags a line each (a message's end, then the next one's header)."""
    return all(_tag_like(line) for line in text.split("\n"))


def _tag_like(text: str) -> bool:
    """A reasoning tag is short and has no spaces (``<think>``, ``[THINK]``, ``<|channel>thought``)."""
    return 0 < len(text) <= 40 and not any(c in text for c in WHITESPACE)


def _empty_block(prefill: str) -> tuple[str, str] | None:
    """A prefill that is an empty reasoning block (thinking switched off): its two tags."""
    text = prefill.strip(WHITESPACE)
    tokens = list(_TOKEN.finditer(text))
    if len(tokens) < 2 or tokens[-1].end() != len(text) or tokens[0].start() != 0:
        return None
    closing = tokens[-1].group()
    opening = text[: tokens[-1].start()].strip(WHITESPACE)
    if not _tag_like(opening) or not any(word in opening.lower() for word in ("think", "thought", "reason")):
        return None
    return opening, closing


def rendered_call(probes: Probes, framing: Framing, *, two: bool = False) -> str | None:
    """The text the template writes for an assistant turn holding the probe tool call (or two
    calls, the second with a number and a string), from after the assistant header."""
    text = None
    # Some templates need the calls' ids, in their own shape: Kimi's "functions.NAME:INDEX",
    # Mistral's nine letters and digits.
    for ids in (None, ("functions.cc_probe_tool:0", f"functions.{SECOND_TOOL}:1"), ("a1b2c3d4e", "f5g6h7i8j")):
        calls = [probe_call(PROBE_TOOL, "v1")]
        if two:
            calls.append({"type": "function", "function": {"name": SECOND_TOOL, "arguments": SECOND_ARGUMENTS}})
        if ids is not None:
            calls = [{**call, "id": id_} for call, id_ in zip(calls, ids)]
        key = ("ua(call,other)" if two else "ua(call)") + (f"|{ids[0]}" if ids else "")
        messages = [_user(), _assistant("", tool_calls=calls)]
        if ids is not None:
            messages += [{"role": "tool", "tool_call_id": id_, "content": TOOL_RESULT} for id_ in ids[: len(calls)]]
        text = probes.get(key, messages, tools=[probe_tool(PROBE_TOOL)])
        if text is not None and USER in text and PROBE_TOOL in text[text.index(USER) :]:
            break
    else:
        return None
    if text is None or (two and SECOND_TOOL not in text):
        return None
    if TOOL_RESULT in text:
        text = text[: text.index(TOOL_RESULT)]
    body = text[text.index(USER) + len(USER) :]
    user_footer = framing.footers.get("user", "")
    if user_footer and body.startswith(user_footer):
        body = body[len(user_footer) :]
    header = framing.headers.get("assistant", "")
    if header and body.startswith(header):
        body = body[len(header) :]
    elif header.strip() and header in body:
        # (Something of the template's own stands between the user's turn and the answer's
        # header. A header of whitespace alone, Mistral's " " before a plain answer, is found
        # only where it begins the turn: a call's turn may begin without it, "[TOOL_CALLS] [".)
        body = body[body.index(header) + len(header) :]
    return body


SECOND_TOOL = "other_fn"
SECOND_ARGUMENTS = {"n": 2, "s": "x"}


def find_call_syntax(
    name: str, probes: Probes, framing: Framing, reasoning: ReasoningSyntax | None
) -> tuple[CallSyntax | None, str | None]:
    """The call syntax the template writes calls in, and why calls are not parsed if they are
    not. A syntax is the template's when its grammar reads back exactly the calls the template
    renders (two calls where the template renders two), so a template is never given a syntax
    it does not write."""
    both = rendered_call(probes, framing, two=True)
    one = rendered_call(probes, framing)
    if one is not None:
        expected_one = [(PROBE_TOOL, {"cc_arg": "v1"})]
        expected_both = [*expected_one, (SECOND_TOOL, SECOND_ARGUMENTS)]
        for syntax in CANDIDATES:
            if not all(marker in one for marker in syntax.markers):
                continue
            if not _reads_back(name, framing, reasoning, syntax, one, expected_one):
                continue
            if both is not None and not _reads_back(name, framing, reasoning, syntax, both, expected_both):
                # Two calls must read back too, unless the template botches the second (Hermes
                # 2 Pro's JSON-schema copy drops its opening tag): then the first must.
                if _opening_count(both, syntax) >= 2 or not _reads_back(
                    name, framing, reasoning, syntax, both, expected_both, first_only=True
                ):
                    continue
            return _sections_as_written(syntax, one), None
        # No known syntax reads the calls: one learned from how the template writes them.
        footer = framing.footers.get("assistant", "")
        json_syntax = learned_json_syntax(one, PROBE_TOOL, expected_one[0][1], footer)
        tagged = learned_named_syntaxes(one, PROBE_TOOL, "cc_arg", "v1", footer, two=both, second=SECOND_TOOL)
        for learned in [*([json_syntax] if json_syntax else []), *tagged]:
            if _reads_back(name, framing, reasoning, learned, one, expected_one) and (
                both is None or _reads_back(name, framing, reasoning, learned, both, expected_both)
            ):
                return learned, None
        instructed = _instructed_syntax(probes)
        if instructed is not None:
            # (The template renders past calls in a form no syntax reads, its values unquoted:
            # the model writes them as its tools prompt tells it to.)
            return instructed, None
        cut = one.find("v1")
        snippet = one[: cut + 10] if cut >= 0 else one[:80]
        return None, f"the template writes calls in a syntax chatcodec does not read yet: {snippet!r}"
    source = probes.template_source
    instructed = _instructed_syntax(probes)
    if instructed is not None:
        # The template renders no calls, but its tools prompt tells the model how to write them.
        return instructed, None
    named = _named_by_markers(source)
    if named is not None:
        # The template renders no calls (or fails to), but spells the special tokens of one
        # syntax: the model writes that one.
        return named, None
    if "<tool_call>" in source and "</tool_call>" in source:
        return HERMES, None
    other = [marker for marker in OTHER_CALL_MARKERS if marker in source]
    if other:
        return None, f"the template mentions {other[0]!r}, a call syntax chatcodec does not read yet"
    if "<|im_start|>" in framing.headers.get("user", "") and not _mentions_tool_calls(source):
        # ChatML templates that render no tools (Hermes 3's default, Qwen2.5-VL) belong to
        # models trained on Hermes-style calls.
        return HERMES, None
    return None, "the template renders no tool calls"


def _instructed_syntax(probes: Probes) -> CallSyntax | None:
    """The syntax the template's tools prompt tells the model to write its calls in."""
    prompt = probes.get("u+tool+gp", [_user()], tools=[probe_tool(PROBE_TOOL)], generation_prompt=True) or ""
    return next(
        (syntax for syntax in CANDIDATES if syntax.instructed_by and any(marker in prompt for marker in syntax.instructed_by)),
        None,
    )


def _sections_as_written(syntax: CallSyntax, rendered: str) -> CallSyntax:
    """``syntax`` with the section openers the template does not write read as noncanonical,
    where it reads several (DeepSeek V3.2 opens its calls with ``function_calls``, V4 with
    ``tool_calls``: each model's output in the other's is read, and said to be so)."""
    openers = {spelling.strip() for spelling in dict(syntax.spellings).get("CALLS_BEGIN", ())}
    others = tuple(sorted(opener for opener in openers if opener not in rendered))
    if len(others) == len(openers) or not others:
        return syntax
    return replace(syntax, noncanonical=syntax.noncanonical + others)


def _named_by_markers(source: str) -> CallSyntax | None:
    """The syntax whose markers the template's source spells, when they are special tokens
    (``<|tool_calls_section_begin|>``, not ``<tool_call>``, which prose may quote) and only
    one syntax's are there (the one with the longest markers, where one's include another's)."""
    found = [
        syntax
        for syntax in CANDIDATES
        if syntax.markers
        and all(_special_token(marker) and marker in source for marker in syntax.markers)
    ]
    found += [
        syntax
        for syntax in CANDIDATES
        if syntax.template_markers and all(marker in source for marker in syntax.template_markers)
    ]
    if not found:
        return None
    found.sort(key=lambda syntax: -sum(len(marker) for marker in syntax.markers))
    best = found[0]
    if any(other is not best and not all(marker in "".join(best.markers) for marker in other.markers) for other in found[1:]):
        return None  # two syntaxes spelled apart: the template does not say which
    return best


def _special_token(marker: str) -> bool:
    return (marker.startswith("<|") and marker.endswith("|>")) or (marker.startswith("[") and marker.endswith("]"))


# Markers of call syntaxes chatcodec does not read: a template that mentions one is not given
# Hermes by the ChatML convention.
OTHER_CALL_MARKERS = (
    "<|tool_call_start|>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<function=",
    "<|tool_call|>",
    "<tool_calls>",
    "<|tool_calls_section_begin|>",
    "functools[",
    "<|START_ACTION|>",
)


def _mentions_tool_calls(source: str) -> bool:
    return "tool_calls" in source or "tool_call" in source


def _reads_back(
    name: str,
    framing: Framing,
    reasoning: ReasoningSyntax | None,
    syntax: CallSyntax,
    body: str,
    expected: list[tuple[str, Any]],
    *,
    first_only: bool = False,
) -> bool:
    """Does the format with this call syntax read the rendered calls back exactly (or, with
    ``first_only``, the first of them)?"""
    reserved = frozenset(reasoning.open_spellings + reasoning.close_spellings) if reasoning else frozenset()
    reserved |= frozenset(syntax.delimiters())
    try:
        candidate = Format(name, grammar_piece(framing, reserved), reasoning, syntax)
        parser = StreamParser(candidate)
        parser.feed(body)
        parser.close()
    except ChatCodecError:
        return False
    message = parser.message
    # (A template's own calls read back as written: not cut short, not malformed, and not
    # only in a form the parser accepts beside the canonical one, such as a call that ends
    # with the turn's end.)
    if not first_only and any(d.kind in ("malformed_tool_call", "unclosed_tool_call", "noncanonical") for d in parser.diagnostics):
        return False
    found = [(call.function.name, call.function.parsed_arguments) for call in message.tool_calls or []]
    return found[:1] == expected[:1] if first_only else found == expected


def _opening_count(body: str, syntax: CallSyntax) -> int:
    """How often the syntax's first marker (its opening) occurs in a render."""
    return body.count(syntax.markers[0]) if syntax.markers else 0


def capabilities(probes: Probes, found: Format) -> dict[str, Any]:
    """What the template does, as ``inspect`` reports it (read from its output)."""
    two = _assistant("", tool_calls=[probe_call(PROBE_TOOL, "v1"), probe_call(PROBE_TOOL, "v2")])
    parallel = probes.get("ua(call,call)", [_user(), two], tools=[probe_tool(PROBE_TOOL)])
    history = probes.get("ua(reasoning)u", [_user(), _assistant(reasoning_content=REASONING), _user("cCu2Cc")])
    last = probes.get("ua(reasoning)", [_user(), _assistant(reasoning_content=REASONING)])
    if found.reasoning is None:
        kept = "no reasoning"
    elif last is None or REASONING not in last:
        kept = "never"
    elif history is not None and REASONING in history:
        kept = "every turn"
    else:
        kept = "after the last user message"
    with_tools = probes.get("u+tool", [_user()], tools=[probe_tool(PROBE_TOOL)])
    if found.source is not None:
        system = found.source.system
    else:
        system = "leading" if found.leading_text_role == "system" else "turn"
    source = probes.template_source.replace("{%-", "{%").replace("-%}", "%}")
    return {
        "system_role": system,
        "tool_role": "tool" in found.turn_roles.values(),
        "tools_rendered": with_tools is not None and PROBE_TOOL in with_tools,
        "reasoning_kept": kept,
        "parallel_calls": parallel is not None and "v1" in parallel and "v2" in parallel,
        "generation_tag": "{% generation %}" in source or "{%generation%}" in source.replace(" ", ""),
    }
