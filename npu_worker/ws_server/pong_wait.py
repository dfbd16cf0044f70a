"""A peer still taking the bytes sent before a ping has not yet seen the ping: its pong may wait.

aiohttp's heartbeat drops a socket whose pong has not come within half a heartbeat interval of the
ping (1006, no close frame). The ping goes out behind everything written before it: a reader on a slow
link, or a page taking a long request's audio at a few times real time, may have megabytes of it still
queued in the kernel (a loopback reader of 235 KB/s met the ping 11 s after it was sent, behind 4 MB),
and was dropped mid-request, though it read all the while (docs/protocol.md: a reader slower than the
engine but reading is not cut). The kernel counts the bytes the peer has acknowledged (TCP_INFO's
`tcpi_bytes_acked`, Linux 4.1 on); while that count grows from one pong deadline to the next, the wait
goes on. A peer that takes nothing is dropped as before, at the first deadline it took nothing by.

The wait keeps aiohttp's half interval, with no floor: a wait longer than the interval (1 s at
`--heartbeat-interval 0.2`, tried at stop 55) always holds one of a waiting request's `heartbeat` events,
which the peer acknowledges, so a peer that reads but never answers a ping was kept for as long as its
request waited (`test_ws_control`'s peer that stops answering pings, never dropped).
"""

from __future__ import annotations

import socket
import struct
from typing import Any

_BYTES_ACKED = struct.Struct("=Q")
_BYTES_ACKED_AT = 120  # struct tcp_info: 8 bytes of u8 fields, 24 u32, pacing_rate, max_pacing_rate
_TCP_INFO_SIZE = _BYTES_ACKED_AT + _BYTES_ACKED.size


def bytes_acked(transport: Any) -> int | None:
    """How many bytes the peer has acknowledged on `transport`'s TCP socket; None where the system does
    not say (not Linux, not TCP, a kernel older than 4.1, the socket gone)."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    tcp_info = getattr(socket, "TCP_INFO", None)
    if sock is None or tcp_info is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, tcp_info, _TCP_INFO_SIZE)
    except OSError:
        return None
    if len(info) < _TCP_INFO_SIZE:
        return None
    return int(_BYTES_ACKED.unpack_from(info, _BYTES_ACKED_AT)[0])


class AckWatch:
    """One socket's looks at what its peer has acknowledged: `still_taking()` at each deadline says
    whether the peer acknowledged more of what was sent since `start` (or the last look), and so may
    have the ping yet to read or the send yet to take (the pong wait and `opening.taken`)."""

    def __init__(self) -> None:
        self._acked: int | None = None

    def start(self, transport: Any) -> bool:
        """The count now; False where the system does not say (then `still_taking` is always False)."""
        self._acked = bytes_acked(transport)
        return self._acked is not None

    def still_taking(self, transport: Any) -> bool:
        now = bytes_acked(transport)
        if now is None or self._acked is None or now <= self._acked:
            return False
        self._acked = now
        return True
