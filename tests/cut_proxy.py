"""A real TCP proxy in front of a test worker that a test can cut, to break streams mid-flight."""

from __future__ import annotations

import asyncio
import contextlib


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to the worker; `cut()` aborts every open connection (TCP RST).

    `hold()` stops passing the worker's bytes on to the client (they wait in the proxy), so a cut after
    it loses data the worker believes it sent — the case a re-attaching client must recover from.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.connections = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.AbstractServer | None = None
        self.port = 0
        self._flowing = asyncio.Event()
        self._flowing.set()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> CuttableProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer, held=True))
        self._writers -= {writer, up_writer}

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, held: bool = False
    ) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await source.read(65536):
                if held:
                    await self._flowing.wait()
                if sink.is_closing():
                    return
                sink.write(data)
                await sink.drain()
        sink.close()

    def hold(self) -> None:
        self._flowing.clear()

    def cut(self) -> None:
        """Abort every connection (what the proxy held is lost) and let later connections flow."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        self._flowing.set()

    async def close(self) -> None:
        """Stop accepting (later connections are refused) and cut what is open."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.cut()
