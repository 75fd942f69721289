"""Reading a template's framing off its own output.

The template renders small probe conversations whose texts are sentinels (``cCu1Cc``...); the
text around the sentinels is what the template writes around a message of that role. Comparing
conversations that differ in one message (with and without a system message, generation prompt
on and off, a tool call and its result, one tool or two) separates each role's header from the
previous turn's footer, the end token from the generation prompt, and the tools block from the
system prompt. Nothing here knows any model: only the template's output is read.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatcodec.errors import ChatCodecError, UnsupportedTemplateError
from chatcodec.formats.framing import WHITESPACE, Framing, ToolsBlock, spellings

Render = Callable[..., str]

SYSTEM = "cCs0Cc"
USER = "cCu1Cc"
USER_2 = "cCu2Cc"
ASSISTANT = "cCa1Cc"
ASSISTANT_2 = "cCa2Cc"
REASONING = "cCr1Cc"
TOOL_RESULT = "cCt1Cc"
TOOL_RESULT_2 = "cCt2Cc"
PROBE_TOOL = "cc_probe_tool"
PROBE_TOOL_2 = "cc_other_tool"

# Template keywords that switch thinking on or off, as templates spell them.
THINKING_SWITCHES = ("enable_thinking", "thinking", "reasoning", "enable_reasoning", "thinking_mode")


def probe_tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "Probe " + name,
            "parameters": {
                "type": "object",
                "properties": {"cc_arg": {"type": "string", "description": "Probe argument"}},
                "required": ["cc_arg"],
            },
        },
    }


def probe_call(name: str, value: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": {"cc_arg": value}}}


@dataclass
class Probes:
    """The renders of one template, each tried once (``None`` where the template refused)."""

    render: Render
    template_source: str
    cache: dict[str, str | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # Tools given to every render: a ``tool_use`` template may refuse to render without them.
    base_tools: list[dict[str, Any]] | None = None

    def get(
        self,
        key: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        generation_prompt: bool = False,
        **kwargs: Any,
    ) -> str | None:
        if key not in self.cache:
            if tools is None:
                tools = self.base_tools
            try:
                self.cache[key] = self.render(messages, tools=tools, add_generation_prompt=generation_prompt, **kwargs)
            except ChatCodecError as exc:
                self.cache[key] = None
                self.errors[key] = str(exc)
        return self.cache[key]


def _user(text: str = USER) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str = ASSISTANT, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def _between(text: str, first: str, second: str) -> str | None:
    """The text between the first occurrence of ``first`` and the next ``second``."""
    start = text.find(first)
    if start < 0:
        return None
    start += len(first)
    end = text.find(second, start)
    return text[start:end] if end >= 0 else None


def _after(text: str, marker: str) -> str | None:
    at = text.rfind(marker)
    return text[at + len(marker) :] if at >= 0 else None


def _before(text: str, marker: str) -> str | None:
    at = text.find(marker)
    return text[:at] if at >= 0 else None


# Special tokens (``<|im_start|>``, ``<｜User｜>``, ``[INST]``): a delimiter never begins or ends
# inside one, so a cut that would split one moves to its edge.
_TOKEN = re.compile(r"<[^<>\s]{1,40}>|\[[^\[\]\s]{1,40}\]")


def _common_prefix(*texts: str) -> str:
    first = texts[0]
    n = len(first)
    for other in texts[1:]:
        limit = min(n, len(other))
        k = 0
        while k < limit and first[k] == other[k]:
            k += 1
        n = k
    for token in _TOKEN.finditer(first, max(0, n - 42), min(len(first), n + 42)):
        if token.start() < n < token.end():
            n = token.start()
            break
    return first[:n]


def _raw_common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _common_suffix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    cut = len(a) - n
    for token in _TOKEN.finditer(a, max(0, cut - 42), min(len(a), cut + 42)):
        if token.start() < cut < token.end():
            cut = token.end()
            break
    return a[cut:]


class FramingNotFound(UnsupportedTemplateError):
    """The template's output does not show where each message lies."""


# Jinja's error for a name the template reads and nobody gave it.
_UNDEFINED_NAME = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' is undefined")
# Names a render always gives (a template that finds one undefined has another problem).
_GIVEN_NAMES = frozenset({"messages", "tools", "add_generation_prompt"})
MAX_TEMPLATE_VARIABLES = 4


def template_variables(render: Render) -> dict[str, str]:
    """The variables of its own a template needs to render a conversation at all, each as an
    empty string (firefunction v2 adds ``functions`` and ``datetime`` to its system prompt):
    what reading its format gives it, where the caller gives them when rendering. Empty for
    a template that renders without."""
    needed: dict[str, str] = {}
    while True:
        try:
            render([_user()], add_generation_prompt=True, **needed)
        except ChatCodecError as exc:
            missing = _UNDEFINED_NAME.search(str(exc))
            name = missing.group(1) if missing is not None else None
            if name is None or name in needed or name in _GIVEN_NAMES or len(needed) >= MAX_TEMPLATE_VARIABLES:
                return {}
            needed[name] = ""
            continue
        return needed


def without_unasked_prompt(render: Render) -> Render:
    """``render``, or where the template writes the generation prompt whether or not it is
    asked for (ERNIE 4.5 Thinking ends every conversation with ``<|im_start|>assistant\\n<think>\\n``),
    a render that leaves that prompt out unless it is asked for: read as part of the last turn,
    it would hide where a turn ends and where an answer begins."""
    try:
        asked = render([_user()], add_generation_prompt=True)
        unasked = render([_user()], add_generation_prompt=False)
        with_answer = render([_user(), _assistant()], add_generation_prompt=False)
        two_turns = render([_user(), _assistant(), _user(USER_2)], add_generation_prompt=False)
    except ChatCodecError:
        return render
    if asked != unasked or USER not in unasked or ASSISTANT not in with_answer:
        return render
    head = unasked[: unasked.index(USER)]
    after = unasked[unasked.index(USER) + len(USER) :]
    # The prompt opens the answer's turn as the user's turn is opened: it begins where a token
    # of the user's header stands again after the user's text, a footer before it. The longest
    # such tail that ends every conversation is the prompt.
    tails = [after[after.rfind(token) :] for token in {m.group() for m in _TOKEN.finditer(head[-64:])} if 0 < after.rfind(token)]
    tails = [tail for tail in tails if with_answer.endswith(tail) and two_turns.endswith(tail) and tail.strip(WHITESPACE)]
    if not tails:
        return render
    tail = max(tails, key=len)

    def asked_for(*args: Any, add_generation_prompt: bool = False, **kwargs: Any) -> str:
        text = render(*args, add_generation_prompt=add_generation_prompt, **kwargs)
        if not add_generation_prompt and text.endswith(tail):
            return text[: len(text) - len(tail)]
        return text

    return asked_for


def derive_framing(name: str, render: Render, template_source: str) -> Framing:
    """Read a framing off the template's output (see the module docstring)."""
    return read_framing(name, Probes(render, template_source))


def read_framing(name: str, probes: Probes) -> Framing:
    """The framing, from a template's renders."""
    only_user = probes.get("u", [_user()])
    if only_user is None:
        # Templates written for tool use may need tools to render at all.
        for tools in ([], [probe_tool(PROBE_TOOL)]):
            retry = Probes(probes.render, probes.template_source, base_tools=tools)
            if retry.get("u", [_user()]) is not None:
                probes.cache, probes.errors, probes.base_tools = retry.cache, retry.errors, tools
                only_user = probes.cache["u"]
                break
    if only_user is None or USER not in only_user:
        reason = probes.errors.get("u", "the user's text does not appear in the output")
        raise FramingNotFound(
            f"template {name!r} does not write a format chatcodec can parse: a conversation of one user "
            f"message does not render ({reason})"
        )
    with_prompt = probes.get("u+gp", [_user()], generation_prompt=True)
    generation_prompt = ""
    if with_prompt is not None and with_prompt.startswith(only_user):
        generation_prompt = with_prompt[len(only_user) :]
    elif with_prompt is not None and USER in with_prompt:
        # Asked for the prompt, the template writes more before the user's turn as well (vLLM's
        # Muse Glimmer writes its default system block only then): what follows the same user
        # turn is the prompt.
        asked_tail, unasked_tail = with_prompt[with_prompt.index(USER) :], only_user[only_user.index(USER) :]
        if asked_tail.startswith(unasked_tail):
            generation_prompt = asked_tail[len(unasked_tail) :]
    user_footer = only_user[only_user.index(USER) + len(USER) :]

    pair = probes.get("ua", [_user(), _assistant()])
    if pair is None or ASSISTANT not in pair:
        # Say why where the template said (Mistral's templates need an eos_token to end a turn).
        reason = f" ({probes.errors['ua']})" if probes.errors.get("ua") else ""
        raise FramingNotFound(
            f"template {name!r} does not write a format chatcodec can parse: an assistant answer does not render{reason}"
        )
    three = probes.get("uau", [_user(), _assistant(), _user(USER_2)])
    glues = [_between(pair, USER, ASSISTANT) or ""]
    if three is not None and USER_2 in three and ASSISTANT in three:
        glues.append(_between(three, USER, ASSISTANT) or "")
    if user_footer and not all(glue.startswith(user_footer) for glue in glues):
        # The footer the template writes at the very end differs from the one before an answer.
        user_footer = _common_prefix(*glues, user_footer)
    # An answer after the last user message may open with more than an earlier one (an empty
    # think block): the header is what every answer opens with.
    assistant_header = _common_prefix(*(glue[len(user_footer) :] for glue in glues))
    if generation_prompt and not generation_prompt.startswith(assistant_header):
        stops_inside = assistant_header.startswith(generation_prompt) and not assistant_header[
            len(generation_prompt) :
        ].strip(WHITESPACE)
        if not stops_inside:
            assistant_header = _common_prefix(assistant_header, generation_prompt)
    assistant_footer = pair[pair.rindex(ASSISTANT) + len(ASSISTANT) :]
    lead = assistant_header[: len(assistant_header) - len(assistant_header.lstrip(WHITESPACE))]
    if lead and user_footer.strip(WHITESPACE) and assistant_header.strip(WHITESPACE):
        # Whitespace between two turns belongs to the footer before it.
        user_footer += lead
        assistant_header = assistant_header[len(lead) :]

    if not (user_footer.strip(WHITESPACE) or assistant_header.strip(WHITESPACE)):
        raise FramingNotFound(
            f"template {name!r} does not write a format chatcodec can parse: nothing in its output "
            "separates a user message from the answer"
        )
    prompt_head = only_user[: only_user.index(USER)]
    user_header = ""
    last_footer = assistant_footer  # the template may end its last answer differently
    if three is not None and USER_2 in three:
        between = _between(three, ASSISTANT, USER_2) or ""
        opener = _TOKEN.match(assistant_header)
        shared = _common_prefix(between, assistant_footer) if assistant_footer else ""
        if assistant_footer and between.startswith(assistant_footer):
            user_header = between[len(assistant_footer) :]
        elif (
            shared.strip(WHITESPACE)
            and _TOKEN.fullmatch(assistant_footer[len(shared) :].strip(WHITESPACE))
            and _TOKEN.match(between[len(shared) :])
        ):
            # The last answer's footer adds a trailer (an end-of-text token the template writes
            # once, at the very end): between two turns the footer is what they share.
            assistant_footer, user_header = shared, between[len(shared) :]
        elif opener is not None and between.rfind(opener.group()) > 0:
            # Headers begin with the same token (``<|start|>``): the user's starts there, and
            # what comes before it ends the answer.
            at = between.rfind(opener.group())
            user_header, assistant_footer = between[at:], between[:at]
        else:
            user_header = _common_suffix(between, prompt_head)
            middle_footer = between[: len(between) - len(user_header)]
            if middle_footer:
                assistant_footer = middle_footer
    else:
        user_header = _header_like(prompt_head, assistant_header)
    if not prompt_head.endswith(user_header):
        user_header = _common_suffix(prompt_head, user_header)
    lead = user_header[: len(user_header) - len(user_header.lstrip(WHITESPACE))]
    if lead and assistant_footer.strip(WHITESPACE) and user_header.strip(WHITESPACE):
        # Whitespace between two turns belongs to the footer before it (the template may leave
        # it out after the last message; the end token is spelled with and without it).
        assistant_footer += lead
        user_header = user_header[len(lead) :]
    head = prompt_head[: len(prompt_head) - len(user_header)]  # prefix + default system turn

    headers = {"user": user_header, "assistant": assistant_header}
    footers = {"user": user_footer, "assistant": assistant_footer}
    notes: list[str] = []
    prefix, default_system, system = head, "", "none"
    opens_user = [False]
    with_system = probes.get("su", [{"role": "system", "content": SYSTEM}, _user()])
    if with_system is not None and SYSTEM in with_system and USER in with_system:
        system, prefix, default_system = _system_frame(
            opens_user,
            with_system, head, headers, footers, user_header, assistant_header
        )
    else:
        notes.append("the template refuses a system message or drops it")

    end = _end_spellings(assistant_footer)
    if last_footer != assistant_footer:
        end = tuple(sorted(set(end) | set(_end_spellings(last_footer)), key=lambda s: (len(s), s)))
    framing = Framing(
        name=name,
        headers=headers,
        footers=footers,
        end=end,
        prefix=prefix,
        default_system=default_system,
        system=system,  # type: ignore[arg-type]
        system_opens_user=opens_user[0] and system == "turn",
        generation_prompt=generation_prompt,
        prefills=_prefills(probes, generation_prompt, assistant_header),
        notes=tuple(notes),
    )
    framing = _with_tool_role(probes, framing)
    framing = _with_tools_block(probes, framing)
    _check_no_text_in_delimiters(framing)
    return framing


# Each probe message's text, and the role of the turn it belongs in.
_SENTINEL_ROLES = {
    SYSTEM: "system",
    USER: "user",
    USER_2: "user",
    ASSISTANT: "assistant",
    ASSISTANT_2: "assistant",
    REASONING: "assistant",
    TOOL_RESULT: "tool",
    TOOL_RESULT_2: "tool",
}


def _check_no_text_in_delimiters(framing: Framing) -> None:
    """Refuse a framing where one role's delimiters hold another message's text: the template
    writes the conversation into one text of its own (ShieldGemma's policy question around the
    user's message), and no delimiter tells one message from another. (A template that writes
    a message's own text twice, a system prompt before the turns and in them, keeps its framing.)"""
    for role, header in framing.headers.items():
        tags = header + framing.footers.get(role, "")
        if any(sentinel in tags for sentinel, owner in _SENTINEL_ROLES.items() if owner != role):
            raise FramingNotFound(
                f"template {framing.name!r} does not write a format chatcodec can parse: the {role} "
                "turn's delimiters hold another message's text (it writes the conversation inside a text of its own)"
            )


def _header_like(text: str, other_header: str) -> str:
    """The tail of ``text`` that starts the way another role's header does."""
    marker = other_header[: max(1, len(other_header) // 2)].strip(WHITESPACE)
    at = text.rfind(marker) if marker else -1
    return text[at:] if at >= 0 else ""


def _system_frame(
    opens_user: list[bool],
    text: str,
    head: str,
    headers: dict[str, str],
    footers: dict[str, str],
    user_header: str,
    assistant_header: str,
) -> tuple[str, str, str]:
    """Where a system message goes: its own turn (header, footer), text before the first turn,
    or merged into the first user turn. Returns (placement, prefix, default system text)."""
    before = text[: text.index(SYSTEM)]
    after = text[text.index(SYSTEM) + len(SYSTEM) : text.index(USER)]
    opens_user[0] = False
    if user_header and after.endswith(user_header):
        system_footer = after[: len(after) - len(user_header)]
    elif user_header and before.endswith(user_header):
        # System text inside the user turn, before the user's: merged.
        return "merged", head, ""
    else:
        system_footer = after
        # The user's text follows the system footer without its own header.
        opens_user[0] = bool(user_header) and bool(after.strip(WHITESPACE))
    if before == head or (head.startswith(before) and not before.strip(WHITESPACE)):
        # No header: the system prompt is the text before the first turn (DeepSeek).
        headers["system"] = ""
        footers["system"] = system_footer
        return "leading", before, head[len(before) :] if head.startswith(before) else ""
    # Headers of one framing usually begin alike (``<|im_start|>``, ``<|start_header_id|>``).
    marker = _raw_common_prefix(user_header.lstrip(WHITESPACE), assistant_header.lstrip(WHITESPACE)).strip(WHITESPACE)
    start = before.rfind(marker) if marker else -1
    if start < 0:
        # Else the special token that names the role (``[SYSTEM_PROMPT]``, ``<|begin_system|>``).
        named = [t for t in _TOKEN.finditer(before) if "system" in t.group().lower()]
        if named:
            start = named[-1].start()
    if start < 0:
        start = len(_common_prefix(before, head))
        if head.startswith(before[:start]) and start == len(head):
            pass
        else:
            start = len(_common_prefix(before, head))
    prefix = before[:start]
    system_header = before[start:]
    if system_header == user_header and system_footer and not system_footer.strip(WHITESPACE):
        return "merged", head, ""
    headers["system"] = system_header
    footers["system"] = system_footer
    default_system = head[len(prefix) :] if head.startswith(prefix) else ""
    return "turn", prefix, default_system


def _end_spellings(footer: str) -> tuple[str, ...]:
    """How an assistant's turn ends: the template's footer and the end token alone (a model
    writes ``<|im_end|>`` without the newline the template puts after it)."""
    if not footer.strip(WHITESPACE):
        return ()
    return spellings(footer, trailing_optional=True, leading_optional=True)


def _prefills(probes: Probes, default_prompt: str, assistant_header: str) -> tuple[tuple[str, tuple[tuple[str, object], ...]], ...]:
    """What the generation prompt writes after the assistant header, and under which keywords."""
    found: dict[str, tuple[tuple[str, object], ...]] = {}
    candidates: list[tuple[tuple[str, object], ...]] = [()]
    for switch in THINKING_SWITCHES:
        if switch in probes.template_source:
            candidates += [((switch, True),), ((switch, False),)]
    if "reasoning_effort" in probes.template_source:
        # A level, not a switch (Hy3 opens the reasoning at "high" and closes it at its
        # default, "no_think"); gpt-oss's levels change only its system prompt.
        candidates.append((("reasoning_effort", "high"),))
    for kwargs in candidates:
        key = "u+gp" + "".join(f"|{k}={v}" for k, v in kwargs)
        plain_key = "u" + "".join(f"|{k}={v}" for k, v in kwargs)
        switches: dict[str, Any] = dict(kwargs)
        plain = probes.get(plain_key, [_user()], **switches)
        prompted = probes.get(key, [_user()], generation_prompt=True, **switches)
        if plain is None or prompted is None or not prompted.startswith(plain):
            continue
        prompt = prompted[len(plain) :].lstrip(WHITESPACE) if assistant_header.strip(WHITESPACE) else prompted[len(plain) :]
        # (A header that opens with a newline, Apriel's "\n<|begin_assistant|>\n", was just
        # stripped of it.)
        header = assistant_header if prompt.startswith(assistant_header) else assistant_header.lstrip(WHITESPACE)
        if not prompt.startswith(header):
            continue
        prefill = prompt[len(header) :]
        if prefill not in found or (not found[prefill] and kwargs):
            # A prefill the default also writes implies nothing; keep the keyword-free form.
            if prefill in found and not found[prefill]:
                continue
            found[prefill] = kwargs
    default_prefill = default_prompt[len(assistant_header) :] if default_prompt.startswith(assistant_header) else ""
    if default_prefill in found:
        found[default_prefill] = ()
    return tuple(sorted(found.items(), key=lambda item: item[0]))


# Ids a template may require on calls, in the shapes templates check: none, Kimi's
# "functions.NAME:INDEX", Mistral's nine letters and digits.
CALL_ID_STYLES: tuple[tuple[str, str] | None, ...] = (
    None,
    ("functions.cc_probe_tool:0", "functions.cc_probe_tool:1"),
    ("a1b2c3d4e", "f5g6h7i8j"),
)


def _call_and_results(ids: tuple[str, str] | None, results: Sequence[str]) -> list[dict[str, Any]]:
    """A user message, an assistant turn calling the probe tool once per result, the results."""
    calls = [probe_call(PROBE_TOOL, f"v{i + 1}") for i in range(len(results))]
    tool_messages: list[dict[str, Any]] = [{"role": "tool", "content": result} for result in results]
    if ids is not None:
        calls = [{**call, "id": id_} for call, id_ in zip(calls, ids)]
        tool_messages = [{**message, "tool_call_id": id_} for message, id_ in zip(tool_messages, ids)]
    return [_user(), _assistant("", tool_calls=calls), *tool_messages]


def _with_tool_role(probes: Probes, framing: Framing) -> Framing:
    """Frame the tool role from a tool call and its result (where the template renders them)."""
    tools = [probe_tool(PROBE_TOOL)]
    for ids in CALL_ID_STYLES:
        tag = f"|{ids[0]}" if ids else ""
        one = probes.get("ua(call)t" + tag, _call_and_results(ids, [TOOL_RESULT]), tools=tools)
        if one is not None and TOOL_RESULT in one:
            break
    else:
        return framing
    before = one[: one.index(TOOL_RESULT)]
    header = _tool_header(probes, framing, before, ids, tag)
    footer = one[one.index(TOOL_RESULT) + len(TOOL_RESULT) :]
    id_close = ""
    if ids is not None and ids[0] in header and header.index(ids[0]) > 0:
        # The header names the call it answers: the id is the message's, not the template's.
        at = header.index(ids[0])
        header, id_close = header[:at], header[at + len(ids[0]) :]
        if not id_close:
            return framing
    written_footer = footer
    id_open = ""
    if ids is not None and not id_close and (written_id := _id_written_in(footer, ids[0])):
        # The footer names the call the result answers (Mistral Nemo's ``"call_id": "…"}``).
        at = footer.index(written_id)
        if at > 0 and footer[at + len(written_id) :]:
            id_open, footer = footer[:at], footer[at + len(written_id) :]
    name_close = ""
    numbered = False
    if not id_close and PROBE_TOOL in header and header.index(PROBE_TOOL) > 0 and TOOL_RESULT not in header:
        # The header names the tool that answers (harmony's ``<|start|>functions.NAME to=...``).
        at = header.index(PROBE_TOOL)
        header, name_close = header[:at], header[at + len(PROBE_TOOL) :]
        if not name_close or PROBE_TOOL in name_close:
            return framing
    if not header or header == framing.headers.get("user") or PROBE_TOOL in header + id_close:
        # No header of its own, or the result is written inside the assistant's turn.
        return framing
    two = probes.get("ua(call,call)tt" + tag, _call_and_results(ids, [TOOL_RESULT, TOOL_RESULT_2]), tools=tools)
    separator = ""
    if two is not None and TOOL_RESULT_2 in two:
        between = _between(two, TOOL_RESULT, TOOL_RESULT_2) or ""
        second_header = header + ids[1] + id_close if id_close and ids is not None else header
        second_header += PROBE_TOOL + name_close if name_close else ""
        if name_close and between == footer + header + PROBE_TOOL + name_close.replace("1", "2"):
            # The header numbers the results after the tool's name (Kimi K3's ``index="1"``).
            numbered = True
        elif between != written_footer + second_header:
            separator = between
    if id_open and separator:
        id_open, footer = "", written_footer  # (results merged in one turn: not read apart)
    headers = {**framing.headers, "tool": header}
    footers = {**framing.footers, "tool": footer}
    answer = probes.get(
        "ua(call)ta" + tag, [*_call_and_results(ids, [TOOL_RESULT]), _assistant(ASSISTANT)], tools=tools
    )
    after_tool = None
    if answer is not None and ASSISTANT in answer and one.endswith(footer) and answer.startswith(one):
        # What the template writes between a tool result and the answer that follows it.
        written = answer[len(one) : answer.index(ASSISTANT, len(one))]
        header = framing.headers.get("assistant", "")
        if header and header not in written and written.strip(WHITESPACE):
            after_tool = written  # the answer's header is spelled otherwise here
    return _replace(
        framing,
        headers=headers,
        footers=footers,
        tool_separator=separator,
        tool_id_close=id_close,
        tool_id_open=id_open,
        tool_name_close=name_close,
        tool_name_numbered=numbered,
        tool_content_json=_content_as_json_string(probes, tag, ids, header + name_close + id_close, footer),
        assistant_after_tool=after_tool,
    )


def _id_written_in(footer: str, call_id: str) -> str:
    """The call's id as the footer writes it: whole, or its end (Mistral Small 3.1 writes the
    last nine characters); "" when the footer does not name the call."""
    for length in range(len(call_id), 5, -1):
        if call_id[-length:] in footer:
            return call_id[-length:]
    return ""


def _content_as_json_string(probes: Probes, tag: str, ids: tuple[str, str] | None, header: str, footer: str) -> bool:
    """Does the template write a tool result as a JSON string (``"..."``, escaped)?"""
    if not (header.endswith('"') and footer.startswith('"')):
        return False
    messages = _call_and_results(ids, ['a"b'])
    text = probes.get("ua(call)t(quote)" + tag, messages, tools=[probe_tool(PROBE_TOOL)])
    return text is not None and '"a\\"b"' in text


def _tool_header(probes: Probes, framing: Framing, before: str, ids: tuple[str, str] | None, tag: str) -> str:
    """The tool turn's header: what the result's turn adds to the render without it, or else
    what follows the assistant's footer before the result."""
    without = probes.get("ua(call)" + tag, _call_and_results(ids, [TOOL_RESULT])[:2], tools=[probe_tool(PROBE_TOOL)])
    end = framing.footers.get("assistant", "")
    if without is not None and before.startswith(without) and PROBE_TOOL in without and len(before) > len(without):
        header = before[len(without) :]
        # Whitespace the footer ends with is written only when a turn follows: it is the
        # footer's, not the header's.
        trailing = end[len(end.rstrip(WHITESPACE)) :]
        if trailing and without.endswith(end.rstrip(WHITESPACE)) and header.startswith(trailing):
            header = header[len(trailing) :]
        return header
    after_user = before[before.index(USER) + len(USER) :] if USER in before else before
    if end and end in after_user:
        return after_user[after_user.rindex(end) + len(end) :]
    return ""


def _with_tools_block(probes: Probes, framing: Framing) -> Framing:
    """Find the block the template writes for tool definitions: in the system turn (after the
    system prompt, before it, or in its footer), at the start of the user's turn, as a turn of
    its own, or in the text before the first turn. Text the template adds elsewhere when there
    are tools (Llama's "Environment: ipython" in the system header) becomes another spelling of
    the delimiter it lands in."""
    if framing.system not in ("turn", "none", "leading", "merged"):
        return framing
    with_system = framing.system in ("turn", "leading")
    messages = [{"role": "system", "content": SYSTEM}, _user()] if with_system else [_user()]
    key = "su" if with_system else "u"
    plain = probes.get(key, messages)
    one = probes.get(key + "+tool", messages, tools=[probe_tool(PROBE_TOOL)])
    two = probes.get(key + "+tools", messages, tools=[probe_tool(PROBE_TOOL), probe_tool(PROBE_TOOL_2)])
    if plain is None or one is None or two is None:
        return framing
    insertions, replaced = _block_insertions(plain, one)
    if not insertions:
        return framing
    # The block is the insertion that names the tool; the others touch delimiters.
    holding = [ins for ins in insertions if PROBE_TOOL in ins[1]]
    if len(holding) != 1:
        return framing
    at, block_text = _past_prefix(plain, *holding[0], framing)
    placement = _placement(plain, at, framing)
    if placement is None or (replaced and placement != "footer"):
        return framing
    empty_list_written = probes.base_tools == [] or probes.get(key + "+[]", messages, tools=[]) != plain
    longer = [text for _, text in _block_insertions(plain, two)[0] if PROBE_TOOL in text]
    found = _definitions(block_text, plain, one, two, empty_list_written) or (
        _own_form(block_text, longer[0], bounded=placement == "footer") if len(longer) == 1 else None
    )
    if found is None:
        return framing
    begin, end, separator, wraps_function, definition, notation = found
    begin_alone = None
    header = framing.headers.get("system", "")
    alone = probes.get("u+tool", [_user()], tools=[probe_tool(PROBE_TOOL)])
    system_footer = framing.footers.get("system", "")
    if placement == "prefix":
        begin, end = framing.prefix[:at] + begin, end + framing.prefix[at:]
    elif placement == "footer":
        # Inside the system turn's footer: the block's end closes the turn.
        k = at - (plain.index(SYSTEM) + len(SYSTEM))
        begin, end = system_footer[:k] + begin, end + system_footer[k + replaced :]
    end_alone = None
    header_alone: tuple[str, str] | None = None
    leading = framing.system == "leading" and alone is not None and alone.startswith(framing.prefix)
    if placement in ("after", "before", "footer") and alone is not None and (header or leading) and definition in alone:
        start = alone.find(header) if header else len(framing.prefix)
        definition_at = alone.index(definition)
        if header and not 0 <= start < definition_at:
            # The header opens with a line of its own that only a system prompt brings
            # (gpt-oss's "# Instructions"): without one, the turn has the header's tokens alone.
            short = _header_tokens(header, alone[:definition_at])
            if short:
                header_alone = (header, short)
                header, start = short, alone.rfind(short, 0, definition_at)
        if 0 <= start < definition_at:
            written = alone[start + len(header) : definition_at]
            begin_alone = written if written != begin else None
        # Without a system prompt the block may end otherwise (no blank line before the prompt).
        definition_end = definition_at + len(definition)
        footer_at = alone.find(system_footer, definition_end) if system_footer and placement != "footer" else -1
        if footer_at > definition_end and alone[definition_end:footer_at] != end:
            end_alone = alone[definition_end:footer_at]
    if not begin or not end:
        return framing
    block = ToolsBlock(begin, separator, end, wraps_function, begin_alone, placement, notation, end_alone)  # type: ignore[arg-type]
    variants = _delimiter_variants(framing, plain, [ins for ins in insertions if ins is not holding[0]])
    if header_alone is not None:
        variants += (header_alone,)
    return _replace(framing, tools_block=block, tools_variants=variants)


def _header_tokens(header: str, text: str) -> str:
    """The longest head of ``header`` that ends with one of its special tokens (the second or a
    later one: ``<|start|>developer<|message|>``) and that ``text`` holds, or ""."""
    tokens = list(_TOKEN.finditer(header))
    if not tokens or tokens[0].start() != 0:
        return ""
    for match in reversed(tokens[1:]):
        if header[: match.end()] in text:
            return header[: match.end()]
    return ""


def _block_insertions(plain: str, rendered: str) -> tuple[list[tuple[int, str]], int]:
    """What rendering with tools inserted into ``plain`` (see ``_insertions``), and how many
    characters of it the block replaced: a template may write a short word where there are no
    tools (Apertus's "Tool Capabilities: disabled"), which the block then stands for."""
    insertions = _insertions(plain, rendered)
    if insertions is not None:
        return insertions, 0
    prefix = len(_raw_common_prefix(plain, rendered))
    suffix = len(_raw_common_prefix(plain[prefix:][::-1], rendered[prefix:][::-1]))
    removed = plain[prefix : len(plain) - suffix]
    inserted = rendered[prefix : len(rendered) - suffix]
    if not removed.strip(WHITESPACE) or len(removed) > 16 or "\n" in removed or PROBE_TOOL not in inserted:
        return [], 0
    return [(prefix, inserted)], len(removed)


def _past_prefix(plain: str, at: int, inserted: str, framing: Framing) -> tuple[int, str]:
    """An insertion in the whitespace that ends the text before the first turn, where no system
    turn follows, slid to just after that text: a block there may stand between any two turns
    (Mistral 7B v0.3's ``<s> [AVAILABLE_TOOLS]``)."""
    end = len(framing.prefix)
    if framing.system not in ("merged", "none") or not plain.startswith(framing.prefix) or framing.prefix[at:].strip(WHITESPACE):
        return at, inserted
    while at < end and inserted and plain[at] == inserted[0]:
        at, inserted = at + 1, inserted[1:] + plain[at]
    return at, inserted


def _placement(plain: str, at: int, framing: Framing) -> str | None:
    """Where an insertion at ``at`` of a render sits in the framing, if it is a place a block
    can go."""
    system_at = plain.find(SYSTEM)
    if framing.system in ("turn", "leading") and system_at >= 0:
        if at == system_at:
            return "before"
        content_end = system_at + len(SYSTEM)
        if at == content_end:
            return "after"
        if content_end < at < content_end + len(framing.footers.get("system", "")):
            return "footer"
    if framing.prefix and at <= len(framing.prefix) and plain.startswith(framing.prefix):
        # Right after the text before the first turn and before a header, a block may stand
        # between any two turns (Mistral Nemo writes it before the last user turn).
        if at == len(framing.prefix) and framing.system in ("merged", "none") and plain.startswith(framing.headers.get("user") or "\0", at):
            return "turn"
        return "prefix"
    user_at = plain.find(USER)
    if at == user_at and framing.headers.get("user"):
        return "user"
    footers = [f for f in framing.footers.values() if f] + [framing.prefix, framing.default_system]
    headers = [h for h in framing.headers.values() if h]
    after_turn = at == 0 or any(f and plain[:at].endswith(f) for f in footers)
    before_turn = any(plain.startswith(h, at) for h in headers)
    if after_turn and before_turn:
        return "turn"
    return None


def _delimiter_variants(framing: Framing, plain: str, insertions: list[tuple[int, str]]) -> tuple[tuple[str, str], ...]:
    """Other spellings of the framing's delimiters with tools: each extra insertion, put into
    every delimiter that holds the text just before it."""
    fields = [framing.prefix, framing.default_system, *framing.headers.values(), *framing.footers.values()]
    variants: list[tuple[str, str]] = []
    for at, text in insertions:
        context = plain[max(0, at - 24) : at]
        after = plain[at : at + 8]
        for field in fields:
            if not field or not context:
                continue
            index = field.find(context + after) if after else -1
            if index < 0:
                # The field may end before ``after`` does (gpt-oss's tools line, inserted just
                # before the end of the text ahead of the first turn).
                index = field.rfind(context)
                if index >= 0 and not after.startswith(field[index + len(context) :]):
                    index = -1
            if index < 0:
                continue
            cut = index + len(context)
            variants.append((field, field[:cut] + text + field[cut:]))
    return tuple(dict.fromkeys(variants))


def _definitions(
    block_text: str, plain: str, one: str, two: str, empty_list_written: bool
) -> tuple[str, str, str, bool | None, str, str] | None:
    """Split the text one tool adds into (begin, end, separator, wraps_function, definition,
    notation): the definition is the tool (or its function) as JSON, compact or indented, alone
    or as an item of an indented list, or as a Python literal. A template that writes tools in
    a form of its own (``wraps_function`` None) is read only when it writes the block even for
    no tools: then the text one tool adds is its definition, and what a second adds is a
    separator and the second definition (the probe tools' names have the same length)."""
    for wraps_function in (False, True):
        for notation, render in _NOTATIONS:
            definition = render(probe_tool(PROBE_TOOL), wraps_function)
            second = render(probe_tool(PROBE_TOOL_2), wraps_function)
            if definition in block_text and second in two:
                begin = block_text[: block_text.index(definition)]
                end = block_text[block_text.index(definition) + len(definition) :]
                separator = _between(two, definition, second) or ""
                return begin, end, separator, wraps_function, definition, notation
    if not empty_list_written or PROBE_TOOL not in block_text or PROBE_TOOL_2 not in two:
        return None
    at = one.index(block_text) + len(block_text) if block_text in one else -1
    grown = len(two) - len(one) - len(block_text)
    if at < 0 or grown < 0:
        return None
    return "", "", two[at : at + grown], None, block_text, "json"


# What a rendered definition of the probe tool tells of it: its name, its description, its
# parameter.
_PROBE_MARKS = (PROBE_TOOL, "Probe " + PROBE_TOOL, "cc_arg")


def _own_form(block_text: str, longer: str, *, bounded: bool = False) -> tuple[str, str, str, bool | None, str, str] | None:
    """A block a template writes only when there are tools, each definition in a form of its
    own (gpt-oss's TypeScript declarations, Qwen3-Coder's XML, Gemma 4's notation). Its
    opening and closing are the text around the tool's definition, cut at a line's start or at
    a special token, and the block with a second tool must be that opening, the definition, a
    separator, the second tool's definition (the same but for its name) and that closing; a
    cut that needs no separator is taken first. ``longer`` is the block with the second tool;
    a ``bounded`` block (inside a turn's footer, which holds its opening and closing) may also
    be all definitions. The definitions are kept as text, not read (``wraps_function`` None)."""
    marks = [(block_text.find(mark), block_text.rfind(mark) + len(mark)) for mark in _PROBE_MARKS if mark in block_text]
    if not marks:
        return None
    first = min(at for at, _ in marks)
    last = max(end for _, end in marks)
    cuts = _own_form_cuts(block_text, first, last)
    if bounded:
        cuts += [(begin_at, len(block_text)) for begin_at, _ in dict.fromkeys(cuts)] + [(0, len(block_text))]
    found: tuple[str, str, str, bool | None, str, str] | None = None  # the first that needs a separator
    for begin_at, end_at in cuts:
        begin, definition, end = block_text[:begin_at], block_text[begin_at:end_at], block_text[end_at:]
        second = definition.replace(PROBE_TOOL, PROBE_TOOL_2)
        if not bounded and (not begin.strip(WHITESPACE) or not end.strip(WHITESPACE)):
            continue
        if len(longer) < len(block_text) + len(second):
            continue
        if longer.startswith(begin + definition) and longer.endswith(second + end):
            separator = longer[begin_at + len(definition) : len(longer) - len(second) - len(end)]
            if not separator:
                return begin, end, separator, None, definition, "json"
            found = found or (begin, end, separator, None, definition, "json")
    return found


def _own_form_cuts(text: str, first: int, last: int) -> list[tuple[int, int]]:
    """Where a block's opening may end (before ``first``) and its closing begin (after
    ``last``): at the start of a line, else at a special token; the longest opening and the
    shortest closing first."""
    lines = [match.end() for match in re.finditer("\n", text)]
    tokens = list(_TOKEN.finditer(text))
    cuts: list[tuple[int, int]] = []
    for starts, ends in (
        ([at for at in lines if at <= first], [at for at in lines if at >= last]),
        ([m.end() for m in tokens if m.end() <= first], [m.start() for m in tokens if m.start() >= last]),
    ):
        cuts += [(begin_at, end_at) for begin_at in reversed(starts) for end_at in reversed(ends)]
    return cuts


def _list_item_json(tool: dict[str, Any], wraps_function: bool, indent: int) -> str:
    """A tool as an item of a list dumped with ``indent``: nested one level deeper."""
    return json.dumps([tool["function"] if wraps_function else tool], indent=indent)[1:-1].strip()


_NOTATIONS: tuple[tuple[str, Callable[[dict[str, Any], bool], str]], ...] = (
    ("json", lambda tool, wraps: _tool_json(tool, wraps, None)),
    ("json", lambda tool, wraps: _tool_json(tool, wraps, 4)),
    ("json", lambda tool, wraps: _tool_json(tool, wraps, 2)),
    ("json", lambda tool, wraps: _list_item_json(tool, wraps, 4)),
    ("json", lambda tool, wraps: _list_item_json(tool, wraps, 2)),
    ("json", lambda tool, wraps: json.dumps(tool["function"] if wraps else tool, separators=(",", ":"))),
    # Compact with its keys sorted (Kimi K3's template sorts every level).
    ("json", lambda tool, wraps: json.dumps(tool["function"] if wraps else tool, separators=(",", ":"), sort_keys=True)),
    ("python", lambda tool, wraps: str(tool["function"] if wraps else tool)),
)


def _tool_json(tool: dict[str, Any], wraps_function: bool, indent: int | None) -> str:
    value = tool["function"] if wraps_function else tool
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _insertions(before: str, after: str) -> list[tuple[int, str]] | None:
    """The pieces of text inserted into ``before`` to make ``after`` (None if anything was
    removed or replaced), each slid to where it starts a token rather than inside one."""
    prefix = len(_raw_common_prefix(before, after))
    rest_before, rest_after = before[prefix:], after[prefix:]
    suffix = 0
    while suffix < len(rest_before) and rest_before[len(rest_before) - 1 - suffix] == rest_after[len(rest_after) - 1 - suffix]:
        suffix += 1
    if prefix + suffix == len(before):
        return [_at_token_boundary(before, prefix, after[prefix : len(after) - suffix])]
    if len(before) + len(after) > 200_000:
        return None
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    found: list[tuple[int, str]] = []
    for tag, a0, _a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert":
            return None
        found.append(_at_token_boundary(before, a0, after[b0:b1]))
    return found


def _at_token_boundary(text: str, at: int, inserted: str) -> tuple[int, str]:
    """An insertion can slide while the text beside it repeats its ends; prefer the place
    where it starts a token (``<``, ``[``) right after one ends."""
    options = [(at, inserted)]
    a, piece = at, inserted
    while a > 0 and piece and text[a - 1] == piece[-1]:
        a, piece = a - 1, text[a - 1] + piece[:-1]
        options.append((a, piece))
    a, piece = at, inserted
    while a < len(text) and piece and text[a] == piece[0]:
        a, piece = a + 1, piece[1:] + text[a]
        options.append((a, piece))

    def score(option: tuple[int, str]) -> int:
        position, body = option
        before = text[position - 1] if position > 0 else "\n"
        starts = body[:1] in ("<", "[") and before in (">", "]", "\n")
        ends = body[-1:] in (">", "]", "\n")
        return 2 * starts + ends

    # On a tie the place the plain comparison found (the first option) stands.
    return max(options, key=lambda option: (score(option), -abs(option[0] - at)))


def _replace(framing: Framing, **changes: Any) -> Framing:
    from dataclasses import replace

    return replace(framing, **changes)
