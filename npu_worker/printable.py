"""Text a caller sent, made safe to write into a log line or an error's words.

aiohttp's pure-Python parser (`AIOHTTP_NO_EXTENSIONS=1`, or a platform without its C extension) lets
bytes through that llhttp refuses: a request path may hold C1 controls (U+009B is a terminal's CSI, as
ESC [ is), line and paragraph separators, direction overrides, and bytes that are not UTF-8 (decoded as
lone surrogates, which no UTF-8 encoder takes: an error body naming such a path was a 500). Each of
them, and the backslash that starts an escape, is written as a Python escape instead, so a log line
stays one line, a terminal paging the log runs nothing, and any text can be encoded. Pure code.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every character `str.isprintable` refuses (controls, separators, format characters,
    surrogates) written as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`, and `\\` as `\\\\`; most text is returned
    as it is, at the cost of one scan."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(escaped(char) for char in text)


def printable_lines(text: str) -> str:
    """`text` line by line as `printable` writes it, its newlines kept: what a program prints to a
    terminal from words another party chose (a server on the bench's port naming its backend)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def one_line(value: object) -> str:
    """`value` as words for one line of a document another party's words are placed in (the bench's
    markdown): each line break a `␤`, so a server naming its backend `x\n## Fake` adds no heading or
    table rows of its own (`printable_lines` keeps line breaks, escaping the rest)."""
    return str(value).replace("\r\n", "\n").replace("\n", "\u2424")


def escaped(char: str) -> str:
    """One character as `printable` writes it (also how an error's words write a lone surrogate)."""
    if char == "\\":
        return "\\\\"
    if char.isprintable():
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): the byte itself
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
