"""The ``chatcodec`` command line."""

from chatcodec.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
