"""The ``chatcodec`` command line.

Every subcommand reads JSON or text from a file or stdin and prints to stdout. Errors are one line
on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import IO, Any, NoReturn

import chatcodec
from chatcodec.render.isolated import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from chatcodec.check.batch import EXIT_LOSSY, BatchSummary, RoundTripSettings, conversation_parts
from chatcodec.check.jsonl import InvalidLine
from chatcodec.check.roundtrip import LOSS_KINDS
from chatcodec.cli.errors import CliError
from chatcodec.cli.runs import Progress, add_run_options, check_run_options, run_job
from chatcodec.errors import ChatCodecError
from chatcodec.events import Diagnostic
from chatcodec.formats.describe import as_text
from chatcodec.parse.spans import Span
from chatcodec.parse.transcript import MessageSpan, Transcript

EXIT_USAGE = 2

# Kept importable from here, where they used to live.
__all__ = ["BatchSummary", "CliError", "Progress", "RoundTripSettings", "build_parser", "main"]


def _read_input(path: str | None) -> str:
    try:
        if path is None or path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"cannot read {path or 'stdin'}: not UTF-8 text (byte {exc.start})") from None


def _read_json(path: str | None, what: str) -> Any:
    text = _read_input(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise CliError(f"{what} is nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise CliError(f"{what} holds a value that cannot be read: {exc}") from None


def _conversation(data: Any) -> tuple[list[Any], list[Any] | None]:
    """``{"messages": [...], "tools": [...]}`` or a bare list of messages."""
    try:
        return conversation_parts(data)
    except InvalidLine as exc:
        raise CliError(str(exc)) from None


def _parse_value(text: str) -> Any:
    # --set KEY=VALUE: JSON when it parses (true, 3, "x", {...}), else the plain string.
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


# What the command itself passes to the template: --set may not take them over.
_OWN_VARIABLES = {
    "messages": "give the conversation as the input",
    "tools": "use --tools",
    "add_generation_prompt": "use --add-generation-prompt",
}


def _template_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--set expects KEY=VALUE, got {pair!r}")
        if key in _OWN_VARIABLES:
            raise CliError(f"--set {key}=... is not a template variable here: {_OWN_VARIABLES[key]}")
        if not key.isidentifier():
            raise CliError(f"--set {key!r}: a template variable is a name (letters, digits, _)")
        kwargs[key] = _parse_value(value)
    return kwargs


def cmd_templates(args: argparse.Namespace) -> int:
    for name in chatcodec.bundled_template_names():
        print(name)
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def cmd_render(args: argparse.Namespace) -> int:
    codec = _load(args)
    template_kwargs = _template_kwargs(args.set)
    messages, tools = _conversation(_read_json(args.file, "the conversation"))
    if args.tools:
        tools = _read_json(args.tools, "the tools file")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
    if args.timeout is not None or args.memory_mb is not None:
        text = chatcodec.render_isolated(
            codec,
            messages,
            tools,
            args.add_generation_prompt,
            timeout=args.timeout if args.timeout is not None else DEFAULT_TIMEOUT,
            memory_mb=args.memory_mb if args.memory_mb is not None else DEFAULT_MEMORY_MB,
            **template_kwargs,
        )
    else:
        text = codec.render(messages, tools=tools, add_generation_prompt=args.add_generation_prompt, **template_kwargs)
    # The text exactly as rendered; a terminal gets a final newline so the prompt starts on its own line.
    sys.stdout.write(text)
    if sys.stdout.isatty() and not text.endswith("\n"):
        sys.stdout.write("\n")
    return 0


def _read_text_exactly(path: str | None) -> str:
    """A completion or prompt, byte for byte: no newline translation (``\r\n`` is text too)."""
    try:
        if path is None or path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            return stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{path or 'stdin'} is not UTF-8 text (byte {exc.start})") from None


def _tool_list(path: str | None) -> list[Any] | None:
    """A JSON file holding a list of tool definitions (or ``{"tools": [...]}``)."""
    if not path:
        return None
    tools = _read_json(path, "the tools file")
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise CliError("the tools file must hold a JSON list of tool definitions")
    return tools


def _parser_for(args: argparse.Namespace) -> tuple[chatcodec.Codec, Any]:
    """The codec and a fresh stream parser, set up from the shared parse/stream options."""
    codec = _load(args)
    prompt = _read_text_exactly(args.prompt) if args.prompt else None
    parser = codec.stream(prompt, tools=_tool_list(args.tools), strict=args.strict, reasoning=args.reasoning or None)
    return codec, parser


def _warn(diagnostics: Sequence[Diagnostic]) -> None:
    # One line each, so that the JSON on stdout stays machine-readable on its own.
    for diagnostic in diagnostics:
        message = " ".join(diagnostic.message.split())
        print(f"chatcodec: warning: {diagnostic.kind} at character {diagnostic.position}: {message}", file=sys.stderr)


def cmd_parse(args: argparse.Namespace) -> int:
    from chatcodec.adapters.openai import completion_response, message_to_openai

    codec, parser = _parser_for(args)
    completion = _read_text_exactly(args.file)
    parser.feed(completion)
    parser.close()
    result = parser.result()
    if args.response:
        output = completion_response(result, model=args.model or codec.name, reasoning_field=args.reasoning_field)
    else:
        output = message_to_openai(result.message, reasoning_field=args.reasoning_field)
    print(json.dumps(output, indent=2, ensure_ascii=False))
    _warn(result.diagnostics)
    return 0


def cmd_stream(args: argparse.Namespace) -> int:
    from chatcodec.adapters.openai import SSE_DONE, ChunkAdapter, stream_chunks, to_sse

    if args.chunk < 1:
        raise CliError(f"--chunk must be at least 1, got {args.chunk}")
    codec, parser = _parser_for(args)
    completion = _read_text_exactly(args.file)
    deltas = (completion[i : i + args.chunk] for i in range(0, len(completion), args.chunk))
    adapter = ChunkAdapter(args.model or codec.name, reasoning_field=args.reasoning_field)
    reported = 0
    for chunk in stream_chunks(parser, deltas, adapter):
        if args.sse:
            sys.stdout.write(to_sse(chunk))
        else:
            sys.stdout.write(json.dumps(chunk, ensure_ascii=False) + "\n")
        sys.stdout.flush()  # a consumer downstream sees each chunk as it is made
        _warn(adapter.diagnostics[reported:])
        reported = len(adapter.diagnostics)
    if args.sse:
        sys.stdout.write(SSE_DONE)
    return 0


# -- transcript ------------------------------------------------------------------------------


def _part_dict(part: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": part.kind, "start": part.start, "end": part.end}
    if part.name is not None:
        out["name"] = part.name
    if part.index is not None:
        out["index"] = part.index
    return out


def _span_dict(span: MessageSpan) -> dict[str, Any]:
    return {
        "index": span.index,
        "role": span.role,
        "start": span.start,
        "end": span.end,
        "body_start": span.body_start,
        "parts": [_part_dict(part) for part in span.parts],
    }


def _transcript_message(message: chatcodec.Message, keep_ids: bool) -> dict[str, Any]:
    """The message as an OpenAI dict. The bundled formats write no tool-call ids, so the ids
    the parser makes up are random; they are left out unless asked for, which keeps the output
    the same from run to run (and diffable)."""
    out = message.to_openai()
    if not keep_ids:
        for call in out.get("tool_calls") or []:
            call.pop("id", None)
    return out


def transcript_to_dict(transcript: Transcript, *, keep_ids: bool = False) -> dict[str, Any]:
    """What ``chatcodec transcript`` prints: the recovered conversation, with where it lies."""
    return {
        "messages": [_transcript_message(message, keep_ids) for message in transcript.messages],
        "tools": transcript.tools,
        "add_generation_prompt": transcript.add_generation_prompt,
        "template_kwargs": transcript.template_kwargs,
        "spans": [_span_dict(span) for span in transcript.spans],
        "unparsed": [list(pair) for pair in transcript.unparsed],
        "diagnostics": [
            {"kind": d.kind, "position": d.position, "message": d.message} for d in transcript.diagnostics
        ],
    }


def cmd_transcript(args: argparse.Namespace) -> int:
    codec = _load(args)
    transcript = codec.parse_transcript(_read_text_exactly(args.file))
    print(json.dumps(transcript_to_dict(transcript, keep_ids=args.ids), indent=2, ensure_ascii=False))
    return 0


# -- roundtrip -------------------------------------------------------------------------------

# A text that does not come back is never acceptable: it is what the whole check is about.
IGNORABLE = tuple(kind for kind in LOSS_KINDS if kind != "text_not_reproduced")


def _ignored_kinds(kinds: Sequence[str] | None) -> frozenset[str]:
    for kind in kinds or []:
        if kind not in IGNORABLE:
            raise CliError(f"--ignore expects one of {', '.join(IGNORABLE)}; got {kind!r}")
    return frozenset(kinds or [])


def _roundtrip_settings(args: argparse.Namespace) -> RoundTripSettings:
    codec = _load(args)
    _ = codec.family  # a template chatcodec cannot parse fails here, once, not on every line
    return RoundTripSettings(
        codec,
        _tool_list(args.tools),
        args.add_generation_prompt,
        _template_kwargs(args.set),
        _ignored_kinds(args.ignore),
        args.prefixes,
    )


def cmd_roundtrip(args: argparse.Namespace) -> int:
    if args.jsonl is not None and args.file is not None:
        # Most often an unquoted glob the shell expanded: its second file lands here.
        raise CliError(
            "give either --jsonl FILE or a conversation FILE, not both "
            "(quote a glob, --jsonl 'data/*.jsonl', or repeat --jsonl for several files)"
        )
    check_run_options(args)
    settings = _roundtrip_settings(args)
    if args.jsonl is not None:
        summary = run_job(settings, args)
        print(json.dumps(summary.to_dict(), indent=2) if args.json else summary.table())
        return summary.exit_code()
    report = settings.check(_read_json(args.file, "the conversation"))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report.summary())
    return 0 if report.lossless else EXIT_LOSSY


# -- masks -----------------------------------------------------------------------------------


def cmd_masks(args: argparse.Namespace) -> int:
    from chatcodec.check.mask_job import MaskSettings, load_tokenizer

    check_run_options(args)
    codec = _load(args)
    _ = codec.family  # a template chatcodec cannot parse fails here, once, not on every line
    try:
        load_tokenizer(args.tokenizer)  # a bad tokenizer file fails here, not once per worker
    except ImportError:
        raise CliError("chatcodec masks needs the tokenizers package: pip install tokenizers") from None
    except Exception as exc:  # the Rust extension raises plain Exception for every problem
        raise CliError(f"cannot load the tokenizer {args.tokenizer}: {_one_line(str(exc))}") from None
    settings = MaskSettings(
        codec, args.tokenizer, _template_kwargs(args.set), args.end_token, args.template_think
    )
    # With the masks on stdout, the summary goes to stderr so that the two do not mix.
    report_to = sys.stderr if args.out == "-" else sys.stdout
    opened: AbstractContextManager[IO[str] | None]
    if args.out is None:
        opened = nullcontext(None)
    elif args.out == "-":
        opened = nullcontext(sys.stdout)
    else:
        opened = _output_file(args.out)
    with opened as output:
        summary = run_job(settings, args, output)
    print(json.dumps(summary.to_dict(), indent=2) if args.json else summary.table(), file=report_to)
    return summary.exit_code()


def _output_file(path: str) -> AbstractContextManager[IO[str]]:
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise CliError(f"--out: cannot write {path}: {exc.strerror}") from None


def cmd_inspect(args: argparse.Namespace) -> int:
    codec = _load(args)
    if args.grammar:
        sys.stdout.write(codec.format.grammar_text)
        return 0
    description = codec.describe()
    if args.json:
        print(json.dumps(description, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(as_text(description))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from chatcodec.demo import run_demo

    return run_demo(sys.stdout)


Command = Callable[[argparse.Namespace], int]


def _one_line_errors(p: argparse.ArgumentParser) -> None:
    """Report usage mistakes as one line (argparse prints the whole usage first), so that
    callers scraping stderr see the same shape as for every other error."""

    def error(message: str) -> NoReturn:
        p.exit(EXIT_USAGE, f"{p.prog}: error: {message} (see {p.prog} --help)\n")

    p.error = error  # type: ignore[method-assign]


def _add_template_options(p: argparse.ArgumentParser) -> None:
    """One-line errors, and the template to use (every command but ``templates`` and ``demo``)."""
    _one_line_errors(p)
    p.add_argument("--template", "-t", required=True, help="bundled name, .jinja file, model folder, or the template's text")
    p.add_argument("--template-name", help="a named template in a model folder (e.g. tool_use)")
    p.add_argument(
        "--reasoning-tags",
        nargs=2,
        metavar=("OPEN", "CLOSE"),
        help="the model's reasoning markers, where its template never writes them (e.g. '<think>' '</think>')",
    )


def _load(args: argparse.Namespace) -> chatcodec.Codec:
    tags = tuple(args.reasoning_tags) if args.reasoning_tags else None
    return chatcodec.load(args.template, template_name=args.template_name, reasoning_tags=tags)


def _add_parse_options(p: argparse.ArgumentParser) -> None:
    """The options ``parse`` and ``stream`` share."""
    _add_template_options(p)
    p.add_argument("--prompt", help="the rendered prompt the completion continues (text file)")
    p.add_argument("--tools", help="JSON file with a list of tool definitions; calls to other names stay text")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) on output that breaks the format")
    p.add_argument("--reasoning", action="store_true", help="the completion starts inside a reasoning block")
    p.add_argument("--model", help="model name for the OpenAI objects (default: the template's name)")
    p.add_argument(
        "--reasoning-field",
        choices=("reasoning_content", "reasoning"),
        default="reasoning_content",
        help="key for reasoning text (default: reasoning_content)",
    )
    p.add_argument("file", nargs="?", help="the raw completion text (default: stdin)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatcodec", description=chatcodec.__doc__)
    parser.add_argument("--version", action="version", version=f"chatcodec {chatcodec.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("templates", help="list the bundled templates")
    p.set_defaults(func=cmd_templates)

    p = sub.add_parser(
        "render",
        help="render a conversation (JSON) through a chat template",
        description='Render {"messages": [...], "tools": [...]} or a bare list of messages, exactly as '
        "transformers' apply_chat_template(tokenize=False) would, and print the text unchanged.",
    )
    _add_template_options(p)
    p.add_argument("--tools", help="JSON file with a list of tool definitions (replaces the conversation's)")
    p.add_argument("--add-generation-prompt", action="store_true", help="end with the assistant header")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="template variable, JSON or else a string (repeatable)"
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        help=f"render in a child process killed after SECONDS (default with --memory-mb: {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--memory-mb",
        type=_positive_int,
        metavar="MB",
        help=f"render in a child process that may grow by MB megabytes (default with --timeout: {DEFAULT_MEMORY_MB})",
    )
    p.add_argument("file", nargs="?", help="conversation JSON (default: stdin)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser(
        "parse",
        help="parse a raw completion into an OpenAI assistant message (JSON)",
        description="Read a model's raw completion text and print the assistant message as OpenAI JSON. "
        "Diagnostics (malformed tool calls, truncation...) go to stderr, one warning line each.",
    )
    _add_parse_options(p)
    p.add_argument("--response", action="store_true", help="print a whole chat.completion object instead")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser(
        "stream",
        help="stream a raw completion as OpenAI chat.completion.chunk objects",
        description="Feed a raw completion to the streaming parser a few characters at a time and print "
        "one chat.completion.chunk JSON object per line (or Server-Sent Events with --sse).",
    )
    _add_parse_options(p)
    p.add_argument("--chunk", type=int, default=4, metavar="N", help="characters per delta (default: 4)")
    p.add_argument("--sse", action="store_true", help="print SSE frames (data: {...}), ending with data: [DONE]")
    p.set_defaults(func=cmd_stream)

    p = sub.add_parser(
        "transcript",
        help="read a rendered conversation back into messages (JSON)",
        description="Parse text a chat template rendered and print the conversation it holds: OpenAI-shaped "
        "messages, tools, whether it ends with a generation prompt, the template keywords the text implies, "
        "where each message lies (character offsets), and diagnostics. The text carries no tool-call ids, so "
        "tool calls have none unless --ids asks for fresh random ones.",
    )
    _add_template_options(p)
    p.add_argument("--ids", action="store_true", help="give each tool call a fresh random id")
    p.add_argument("file", nargs="?", help="the rendered text (default: stdin)")
    p.set_defaults(func=cmd_transcript)

    p = sub.add_parser(
        "roundtrip",
        help="render, parse back and render again; report what the template loses",
        description="Render a conversation, read the text back, render what was read, and report every "
        "difference. Exit code: 0 lossless, 1 the template loses something, 2 bad input. With --jsonl, "
        "check one conversation per line and print counts; exit 2 if any line is invalid, else 1 if any "
        "conversation is lossy, else 0.",
    )
    _add_template_options(p)
    p.add_argument("--tools", help="JSON file with a list of tool definitions (replaces the conversation's)")
    p.add_argument("--add-generation-prompt", action="store_true", help="end with the assistant header")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="template variable, JSON or else a string")
    p.add_argument("--json", action="store_true", help="print the report (or the --jsonl summary) as JSON")
    p.add_argument(
        "--ignore",
        action="append",
        metavar="KIND",
        help="a kind of loss to accept, e.g. tool_call_id_not_rendered (repeatable)",
    )
    p.add_argument(
        "--prefixes",
        action="store_true",
        help="also check that each assistant message's prompt is a prefix of the conversation (prefix_changed)",
    )
    add_run_options(
        p,
        "check every line of FILE (- for stdin, or a quoted glob), one conversation each (repeatable)",
    )
    p.add_argument("file", nargs="?", help="conversation JSON (default: stdin)")
    p.set_defaults(func=cmd_roundtrip)

    p = sub.add_parser(
        "masks",
        help="token ids and assistant masks for every conversation of JSONL files",
        description="Render each conversation (one per line), tokenize it, and write one JSON line "
        '{"input_ids": [...], "assistant_masks": [...]} per valid conversation; 1 marks a token the '
        "assistant wrote. Print counts: conversations, tokens, assistant tokens, invalid lines. "
        "Invalid lines are counted (and listed with --failures), never written; exit 2 if any.",
    )
    _add_template_options(p)
    p.add_argument("--tokenizer", required=True, metavar="FILE", help="the model's tokenizer.json")
    p.add_argument("--out", metavar="FILE", help="write the masks there, one JSON line each (- for stdout)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="template variable, JSON or else a string")
    p.add_argument(
        "--end-token",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="count the end token of each assistant turn as the assistant's (default: yes)",
    )
    p.add_argument(
        "--template-think",
        action="store_true",
        help="count the empty think blocks the template writes into turns without reasoning as the assistant's",
    )
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_run_options(p, "conversations, one per line (- for stdin, or a quoted glob; repeatable)", required=True)
    p.set_defaults(func=cmd_masks)

    p = sub.add_parser(
        "inspect",
        help="show what chatcodec reads in a template: framing, reasoning, call syntax, capabilities",
        description="Print the framing's delimiters (read from the template's own output), the reasoning "
        "tags and the call syntax (or why calls are not parsed), and what the template can do.",
    )
    _add_template_options(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print it as JSON")
    shown.add_argument("--grammar", action="store_true", help="print the composed Lark grammar instead")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("demo", help="show the main job on bundled example data")
    p.set_defaults(func=cmd_demo)
    return parser


def _utf8_streams() -> None:
    """Read and write UTF-8 whatever the locale says (prompts are UTF-8 text)."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(encoding="utf-8", errors="backslashreplace" if stream is sys.stderr else "strict")
            except (ValueError, OSError):
                pass  # a stream already in use keeps its encoding


def main(argv: Sequence[str] | None = None) -> int:
    _utf8_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, ChatCodecError, InvalidLine) as exc:
        print(f"chatcodec: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except UnicodeEncodeError as exc:
        print(f"chatcodec: error: the output holds text UTF-8 cannot write ({exc.reason}: {exc.object[exc.start:exc.end]!a})", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        print("chatcodec: error: the input is nested too deeply", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("chatcodec: error: out of memory", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")) if "\n" in text else text


if __name__ == "__main__":
    sys.exit(main())
