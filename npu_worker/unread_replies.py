"""A reply its caller leaves unread ends the connection: the kernel's TCP_USER_TIMEOUT on each
connection `connection_guard.GuardedHandler` serves. A caller that stops reading (a closed receive
window) otherwise held its connection, uncounted by any deadline, for ever. Apart from the guard's
header and body bounds because it is the socket's, set once at connect, not a deadline the guard keeps.
"""

from __future__ import annotations

import asyncio
import socket

# Data a caller leaves untaken this long (its receive window closed) ends the connection (TCP_USER_TIMEOUT):
# a reply the kernel cannot send otherwise holds the connection, uncounted by any deadline, for ever.
UNREAD_SECONDS = 60.0


def drop_when_unread(transport: asyncio.BaseTransport) -> None:
    """Let the kernel end the connection once what it holds for the caller has waited UNREAD_SECONDS
    unsent (a closed receive window) or unacknowledged. A caller that stopped reading otherwise held its
    connection for ever: a reply still being written (aiohttp waits for the socket to drain, no
    deadline), and one already finished, whose close waits for the rest to be sent, when the header
    deadline or an eviction closes it. Progress, however slow, and an idle connection are not affected.
    Linux only (elsewhere the option does not exist)."""
    option = getattr(socket, "TCP_USER_TIMEOUT", None)
    sock = transport.get_extra_info("socket")
    if option is None or sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    sock.setsockopt(socket.IPPROTO_TCP, option, int(UNREAD_SECONDS * 1000))
