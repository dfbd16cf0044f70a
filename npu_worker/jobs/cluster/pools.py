"""The node's connections to Redis: four pools of sizes set here, where a command waits its turn for a
connection instead of failing at once.

redis-py's own pool refuses a command at once when its cap is reached (`MaxConnectionsError`, a
`ConnectionError`, so read as Redis down: 800 `GET .../audio` at once on one node answered most 503
`Redis is unreachable`), and its cap is redis-py's to choose (2**31 in older releases, 100 in recent
ones). Here each pool's size is ours, a command waits up to `wait` s for a connection, and only then
is refused as `ConnectionsBusy`. The node's own blocking reads (its engine's claim, its writer's, the
cancel channel) have a pool of their own: callers' streams, each holding a connection for up to 2 s a
read, never leave them waiting. So have its beat and its view of the cluster (`OWN_COMMANDS`): behind a
flood of callers' commands, /health's 1 s read ran out waiting for a connection (`Redis is unreachable`)
and the beat passed the 5 s after which peers count the node out.

A new connection's host name is looked up on threads of the node's own (`LOOKUPS`), not in the loop's
default executor where asyncio looks names up: that executor's threads are the ones a wav's pieces are
read from, each waiting for a Redis answer (`RedisJournal.call`); with every one of them waiting for an
answer whose connection waited for a lookup behind them, nothing moved until the connect timeout, and
the answers failed `Timeout connecting to server` (a burst of downloads on a `redis://NAME` URL: 503s,
and wavs cut after their headers). Connections opened at once share one lookup (`Lookups`).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.asyncio.connection import Connection, SSLConnection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError, ReadOnlyError
from redis.exceptions import ConnectionError as RedisConnectionError

# Commands, the callers' and the node's loops' alike: each holds a connection for one round trip.
COMMAND_CONNECTIONS = 100
# Callers' blocking reads (a followed job's log, its PCM): each held for up to its block time (2 s).
FOLLOW_CONNECTIONS = 100
# The node's own commands: its beat and its view of the cluster (the heartbeat loop, /health, /ready; the
# presence loop's check every 5 s).
OWN_COMMANDS = 3
# The node's own blocking reads: engine claim, writer, cancel channel and presence (`presence.py`; both
# held for good), room for a retry.
OWN_CONNECTIONS = 5


class ConnectionsBusy(RedisConnectionError):
    """Every connection of a pool stayed in use for as long as a command may wait for one: Redis is up,
    this node is busy (a caller is told so, not `Redis is unreachable`; a loop retries as for an outage)."""


class Lookups:
    """Threads that look up the Redis host's name for new connections, and do nothing else; one lookup
    of a name at a time, its answer shared by every connection that asked meanwhile. A lookup each, a
    burst of new connections (downloads at once, a Redis restart) queued on these threads behind one
    another, and with a resolver taking 0.5 s an answer, 28 of 40 waited past the connect timeout
    (`Timeout connecting to server`); a resolver that hangs holds one thread, not all of them."""

    def __init__(self, threads: int) -> None:
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="redis-lookup")
        self._running: dict[tuple[str, int], Future[list[Any]]] = {}
        self.resolve: Callable[..., list[Any]] = socket.getaddrinfo  # (a test's resolver in its place)
        self._lock = threading.Lock()

    async def addresses(self, host: str, port: int) -> list[Any]:
        """`getaddrinfo`'s answer for a stream to `host:port`; a caller that stops waiting (its timeout)
        leaves the lookup running for the others (`shield`)."""
        key = (host, port)
        with self._lock:
            running = self._running.get(key)
            started = running is None
            if running is None:
                running = self._threads.submit(self.resolve, host, port, type=socket.SOCK_STREAM)
                self._running[key] = running
        if started:  # (outside the lock: it runs at once if the lookup is done already)
            running.add_done_callback(functools.partial(self._forget, key))
        return await asyncio.shield(asyncio.wrap_future(running))

    def _forget(self, key: tuple[str, int], done: Future[list[Any]]) -> None:
        """The next connection looks the name up again (a DNS change is followed)."""
        with self._lock:
            if self._running.get(key) is done:
                del self._running[key]


LOOKUPS = Lookups(threads=4)


class LookedUpConnection(Connection):
    """redis-py's TCP connection, its host's name looked up on `LOOKUPS`, then each address it names
    tried in turn (as asyncio does): asyncio would look it up in the loop's default executor, behind
    threads that may be waiting for this very connection. Each address is connected as `getaddrinfo`
    gave it, its IPv6 zone (scope id) kept: passed on as a host string, a link-local address lost its zone
    (`Invalid argument`) or, written `fe80::1%eth0`, was looked up again in that executor. The connect
    timeout bounds the lookup and every address's try together (each had it in full: a slow lookup, then a
    silent address, 4 s), each address its share of what is left (`_share`), and a connection that fails
    says each address's failure, not the last's, also the one the timeout's end cut short (a name whose
    every address hangs was `Timeout connecting to server`, naming none)."""

    _tried_socket: socket.socket | None = None  # the address's connected socket, until its transport owns it

    demoted = False  # answered READONLY over a name: dropped as it is given back (`WaitingPool.release`)

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's read; a READONLY answer to a connection to a name marks it to be dropped once its
        command (a pipeline: every reply) is read, so the next connects again, the name looked up anew:
        after a failover behind a DNS name the pooled connections stayed with the demoted master, every
        write refused for as long as each lived. (An address would reach the same server again.)"""
        try:
            return await super().read_response(*args, **kwargs)
        except ReadOnlyError:
            self.demoted = _is_name(self.host)
            raise

    async def _connect(self) -> None:
        failures: list[str] = []
        trying = f"{self.host}: no answer to its lookup"  # what the whole's end cuts short, said so
        try:
            async with asyncio.timeout(self.socket_connect_timeout) as whole:  # the lookup and every try
                found = await LOOKUPS.addresses(self.host, self.port)
                for tried, (family, kind, proto, _, address) in enumerate(found):
                    trying = f"{_shown(address)}: no answer"
                    try:
                        async with asyncio.timeout_at(_share(whole.when(), len(found) - tried)):
                            self._tried_socket = await _connected(family, kind, proto, address)
                        return await self._handed_over()
                    except TimeoutError:  # its share spent (the whole's end is the `except` below)
                        failures.append(trying)
                    except OSError as exc:  # refused, unreachable: the next address
                        failures.append(f"{_shown(address)}: {exc.strerror or exc or type(exc).__name__}")
                    finally:
                        self._tried_socket = None
                trying = ""
        except TimeoutError:  # (never re-raised: redis-py says `Timeout connecting to server`, naming none)
            failures += [trying, f"out of time after {self.socket_connect_timeout:g} s"]
        raise OSError(f"{self.host} names no address" if not failures else "; ".join(failures))

    async def _handed_over(self) -> None:
        """redis-py's connect over the tried socket, which its transport owns from `_connection_arguments`
        on; one that failed before that (a `rediss://` TLS context that could not be made: a CA file that
        is none) is closed here, where it was left to the garbage collector (`ResourceWarning`)."""
        sock = self._tried_socket
        try:
            await super()._connect()
        except BaseException:
            if sock is not None and self._tried_socket is sock:  # (never handed to a transport)
                sock.close()
            raise

    def _connection_arguments(self) -> Mapping[str, Any]:
        arguments = dict(super()._connection_arguments())
        if self._tried_socket is not None:
            del arguments["host"], arguments["port"]
            arguments["sock"], self._tried_socket = self._tried_socket, None  # (the transport's from here)
            if "ssl" in arguments:  # the certificate is checked against the name, not the address
                arguments["server_hostname"] = self.host
        return arguments


def _is_name(host: str) -> bool:
    """`host` is a name a lookup may answer differently, not an address (an IPv6 one with its zone too)."""
    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return True
    return False


def _share(deadline: float | None, left: int) -> float | None:
    """An address's deadline: its share of the time left, the last one all of it. A silent first address
    (a dead host of a round robin, a firewall that drops) took the whole timeout: the next, never tried."""
    if deadline is None or left <= 1:
        return deadline
    now = asyncio.get_running_loop().time()
    return now + max(0.0, deadline - now) / left


async def _connected(family: int, kind: int, proto: int, address: tuple[Any, ...]) -> socket.socket:
    """A socket connected to one of `getaddrinfo`'s answers, as given (an IPv6 zone is its scope id)."""
    sock = socket.socket(family, kind, proto)
    try:
        sock.setblocking(False)
        host, *rest = address  # `fe80::1%eth0` where Python keeps the zone in the text: the number only
        await asyncio.get_running_loop().sock_connect(sock, (str(host).partition("%")[0], *rest))
    except BaseException:
        sock.close()
        raise
    return sock


def _shown(address: tuple[Any, ...]) -> str:
    """An address as a log or an error says it: `10.0.0.5:6379`, `[fe80::1%4]:6379` (zone as scope id)."""
    host, port = str(address[0]).partition("%")[0], address[1]
    if len(address) < 4:
        return f"{host}:{port}"
    return f"[{host}%{address[3]}]:{port}" if address[3] else f"[{host}]:{port}"


# Threads that make a new `rediss://` connection's TLS context, and do nothing else (as `LOOKUPS`, and for
# its reason: in the loop's default executor it waited behind the threads waiting for its connection).
TLS_SETUP = ThreadPoolExecutor(max_workers=2, thread_name_prefix="redis-tls")


class LookedUpSSLConnection(LookedUpConnection, SSLConnection):
    """redis-py's TLS connection (`rediss://`), its host's name looked up as `LookedUpConnection`'s, its
    TLS context made on `TLS_SETUP` before the connect, within the connect timeout: redis-py made it on
    the event loop when the connect asked for it, reading the URL's CA file and the system's CA store
    there (and, since redis-py 8, a `stat` of each at every new connection); made in the default executor
    instead, a burst of downloads (each piece read from a thread of it, waiting for its connection) held
    every thread, and nothing moved until the pieces' timeout."""

    async def _connect(self) -> None:
        if self.ssl_context.context is None:  # (made once per connection object; reconnects reuse it)
            async with asyncio.timeout(self.socket_connect_timeout):
                await asyncio.wrap_future(TLS_SETUP.submit(self.ssl_context.get))
        await super()._connect()


# The connection a URL's scheme chose, and the one the node makes instead (a unix socket's: unchanged).
LOOKED_UP = {Connection: LookedUpConnection, SSLConnection: LookedUpSSLConnection}


class WaitingPool(aioredis.ConnectionPool):
    """redis-py's pool, a connection taken in turn: at most `connections` at once, a command waiting up
    to `wait` s for one (FIFO). The waiting is ours, not redis-py's blocking pool's: how that one ends a
    wait (and what it offers to tell it from a failed connect) differs across the releases allowed."""

    def __init__(self, *, connections: int, wait: float, **settings: Any) -> None:
        chosen = settings.pop("connection_class", Connection)
        settings["connection_class"] = LOOKED_UP.get(chosen, chosen)
        super().__init__(max_connections=connections, **settings)
        self.wait = wait
        self._turns = asyncio.Semaphore(connections)
        self._lent: set[Any] = set()  # connections handed out under a turn (each given back once)

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        try:
            async with asyncio.timeout(self.wait):
                await self._turns.acquire()
        except TimeoutError:
            raise ConnectionsBusy(
                f"all {self.max_connections} connections in use for {self.wait} s"
            ) from None
        try:
            connection = await super().get_connection(*args, **kwargs)
        except BaseException:
            self._turns.release()
            raise
        self._lent.add(connection)
        return connection

    async def release(self, connection: Any) -> None:
        try:
            if getattr(connection, "demoted", False):  # (`LookedUpConnection.read_response`)
                connection.demoted = False
                await connection.disconnect()
            await super().release(connection)
        finally:
            if connection in self._lent:  # (redis-py gives back one it failed to connect itself)
                self._lent.discard(connection)
                self._turns.release()


def _settings() -> dict[str, Any]:
    """What every connection of the node is made with."""
    # A connection Redis dropped (restart) is retried on a fresh one before an error surfaces. A
    # command Redis did not answer within the socket timeout is not: a Redis that is hung (stopped,
    # swapping, a partition without a reset) answers no retry either, and three tries kept a caller
    # waiting 15 s for its 503 instead of the command timeout.
    retry = Retry(
        ExponentialBackoff(cap=0.5, base=0.05),
        retries=2,
        supported_errors=(RedisConnectionError, BusyLoadingError),
    )
    common: dict[str, Any] = {
        "socket_connect_timeout": 2.0,
        "health_check_interval": 5,
        "retry": retry,
        "retry_on_error": [RedisConnectionError, BusyLoadingError],
    }
    # The library version is given, not looked up: redis-py would read package metadata from disk
    # for every new connection, on the event loop.
    try:
        from redis.driver_info import DriverInfo  # redis-py 7+

        common["driver_info"] = DriverInfo(lib_version=redis.__version__)
    except ImportError:
        common.update(lib_name="redis-py", lib_version=redis.__version__)
    return common


def waiting_client(url: str, *, connections: int, wait: float, socket_timeout: float) -> Any:
    """A client whose pool holds at most `connections`, a command waiting up to `wait` s for one.
    Typed Any: redis-py's reply types are unions of every reply shape; `store.py` decodes them."""
    pool = WaitingPool.from_url(
        url, connections=connections, wait=wait, socket_timeout=socket_timeout, **_settings()
    )
    client = aioredis.Redis(connection_pool=pool)
    client.auto_close_connection_pool = True  # (its `aclose` closes the pool, as `from_url`'s does)
    return client
