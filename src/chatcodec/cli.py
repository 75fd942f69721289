"""The ``chatcodec`` command line.

Every subcommand reads JSON or text from a file or stdin and prints to stdout. Errors are one line
on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import chatcodec
from chatcodec.errors import ChatCodecError
from chatcodec.events import Diagnostic

EXIT_USAGE = 2


class CliError(Exception):
    """A problem with the command's input, reported as one line."""


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


def _conversation(data: Any) -> tuple[list[Any], list[Any] | None]:
    """``{"messages": [...], "tools": [...]}`` or a bare list of messages."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        tools = data.get("tools")
        return data["messages"], tools
    raise CliError('expected a JSON list of messages or an object {"messages": [...], "tools": [...]}')


def _parse_value(text: str) -> Any:
    # --set KEY=VALUE: JSON when it parses (true, 3, "x", {...}), else the plain string.
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _template_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--set expects KEY=VALUE, got {pair!r}")
        kwargs[key] = _parse_value(value)
    return kwargs


def cmd_templates(args: argparse.Namespace) -> int:
    for name in chatcodec.bundled_template_names():
        print(name)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    codec = chatcodec.load(args.template, template_name=args.template_name)
    template_kwargs = _template_kwargs(args.set)
    messages, tools = _conversation(_read_json(args.file, "the conversation"))
    if args.tools:
        tools = _read_json(args.tools, "the tools file")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
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
    codec = chatcodec.load(args.template)
    prompt = _read_text_exactly(args.prompt) if args.prompt else None
    parser = codec.stream(prompt, tools=_tool_list(args.tools), strict=args.strict, reasoning=args.reasoning or None)
    return codec, parser


def _warn(diagnostics: Sequence[Diagnostic]) -> None:
    # One line each, so that the JSON on stdout stays machine-readable on its own.
    for diagnostic in diagnostics:
        message = " ".join(diagnostic.message.split())
        print(f"chatcodec: warning: {diagnostic.kind} at character {diagnostic.position}: {message}", file=sys.stderr)


def cmd_parse(args: argparse.Namespace) -> int:
    from chatcodec.openai import completion_response, message_to_openai

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
    from chatcodec.openai import SSE_DONE, ChunkAdapter, stream_chunks, to_sse

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


def _add_parse_options(p: argparse.ArgumentParser) -> None:
    """The options ``parse`` and ``stream`` share."""
    _one_line_errors(p)
    p.add_argument("--template", "-t", required=True, help="bundled name, .jinja file or model folder")
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
    _one_line_errors(p)
    p.add_argument("--template", "-t", required=True, help="bundled name, .jinja file or model folder")
    p.add_argument("--template-name", help="a named template in a model folder (e.g. tool_use)")
    p.add_argument("--tools", help="JSON file with a list of tool definitions (replaces the conversation's)")
    p.add_argument("--add-generation-prompt", action="store_true", help="end with the assistant header")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="template variable, JSON or else a string (repeatable)"
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

    p = sub.add_parser("demo", help="show the main job on bundled example data")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, ChatCodecError) as exc:
        print(f"chatcodec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
