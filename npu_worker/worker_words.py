"""A worker's words (a job id, an error it sent) made safe for a terminal or a log line: the one way the
client commands and the Python client library write them. Stdlib only: the client carries none of the
worker's modules (as `bearer.py`)."""

from __future__ import annotations


def printable(text: object) -> str:
    """`text` (words from the worker among it) as it may reach a terminal: control and format
    characters written as escapes (`\\x1b`), so a hostile or broken worker cannot move the cursor,
    retitle the window, or hide text behind a bidi override in an error it sends. Newlines stay."""
    return "".join(
        char if char.isprintable() or char == "\n" else char.encode("unicode_escape").decode("ascii")
        for char in str(text)
    )


def one_line(text: object) -> str:
    """`printable`, and a line break written as `\\n` too: words from the worker inside a line of our
    own (its error, a path) broke it in two, and the worker's second line read as the command's (a
    forged `s01 ok`, or a summary's `2/2 sections ok`)."""
    return printable(text).replace("\n", "\\n")
