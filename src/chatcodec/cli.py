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
from typing import Any

import chatcodec
from chatcodec.errors import ChatCodecError

EXIT_USAGE = 2


class CliError(Exception):
    """A problem with the command's input, reported as one line."""


def _read_input(path: str | None) -> str:
    if path is None or path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None


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
    codec = chatcodec.load(args.template)
    messages, tools = _conversation(_read_json(args.file, "the conversation"))
    if args.tools:
        tools = _read_json(args.tools, "the tools file")
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
    text = codec.render(
        messages, tools=tools, add_generation_prompt=args.add_generation_prompt, **_template_kwargs(args.set)
    )
    sys.stdout.write(text)
    if not text.endswith("\n"):
        sys.stdout.write("\n")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from chatcodec.demo import run_demo

    return run_demo(sys.stdout)


Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatcodec", description=chatcodec.__doc__)
    parser.add_argument("--version", action="version", version=f"chatcodec {chatcodec.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("templates", help="list the bundled templates")
    p.set_defaults(func=cmd_templates)

    p = sub.add_parser("render", help="render a conversation (JSON) through a chat template")
    p.add_argument("--template", "-t", required=True, help="bundled name, .jinja file or model folder")
    p.add_argument("--tools", help="JSON file with a list of tool definitions")
    p.add_argument("--add-generation-prompt", action="store_true", help="end with the assistant header")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="template variable (JSON or string)")
    p.add_argument("file", nargs="?", help="conversation JSON (default: stdin)")
    p.set_defaults(func=cmd_render)

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
