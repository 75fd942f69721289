"""The one exception every subcommand reports as a single line on stderr, exit code 2."""


class CliError(Exception):
    """A problem with the command's input, reported as one line."""
