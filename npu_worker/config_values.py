"""How a setting's text (a flag or an `NPU_WORKER_*` env var) becomes its value: each converter refuses,
in its own words, what the worker could not run with, so a typo is a start-up error and not a hang or a
traceback later. `config.py` names one of them as each field's `kind`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from .access import ANY_ORIGIN, normalize_origin
from .bearer import holds_bearer_scheme

MAX_CHUNK_MS = 3_600_000.0  # an hour: `1e308` ms is finite, but infinite once in samples (a traceback)


def chunk_schedule(text: str) -> tuple[float, ...]:
    """Chunk sizes in ms: at least one, each above zero and at most MAX_CHUNK_MS."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        sizes = tuple(float(part) for part in parts)
    except ValueError:
        sizes = ()
    if not sizes or not all(0 < size <= MAX_CHUNK_MS for size in sizes):
        raise ValueError(
            f"chunk sizes are milliseconds above zero and at most {MAX_CHUNK_MS:.0f} (an hour), "
            f"separated by commas, not {text.strip()!r}"
        )
    return sizes


def whole_number(least: int, most: int | None = None, *, wording: str | None = None) -> Callable[[str], int]:
    """A whole number from `least` (to `most`); `wording` says the bound where the setting's name helps."""
    bound = f"from {least}" + (f" to {most}" if most is not None else " up")
    wording = wording or f"must be a whole number {bound}"

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least or (most is not None and value > most):
            raise ValueError(f"{wording}, not {text.strip()!r}")
        return value

    return convert


MINUTE, DAY = 60.0, 86400.0
TEN_YEARS = 3652.5 * DAY  # well under threading.TIMEOUT_MAX (about 9.2e9 s on Linux)
_SHOWN = {MINUTE: "1 min", DAY: "1 day (86400 s)", TEN_YEARS: "10 years (315576000 s)"}
_DURATION_UNITS = {"s": 1.0, "m": MINUTE, "h": 3600.0, "d": DAY}


def seconds_between(
    least: float, most: float, *, off: bool = False, units: bool = False
) -> Callable[[str], float]:
    """Seconds from `least` to `most` (or 0 where `off`: no bound). Below `least` the worker cannot work
    (a header timeout of a nanosecond cuts every request, a microsecond heartbeat floods the stream);
    above `most` no deployment means it, and a wait past threading.TIMEOUT_MAX (SIGTERM's grace joins a
    thread) overflows. `units`: 90m, 12h and 7d too."""
    bound = f"from {_SHOWN.get(least, f'{least:g} s')} to {_SHOWN.get(most, f'{most:g} s')}"
    wording = ("0 (no time bound) or " if off else "") + (
        f"{bound}, as seconds or a number and s, m, h or d" if units else f"seconds {bound}"
    )

    def convert(text: str) -> float:
        value = text.strip().lower()
        unit = _DURATION_UNITS.get(value[-1:]) if units else None
        try:
            seconds = float(value[:-1] if unit is not None else value) * (unit or 1.0)
        except ValueError:
            seconds = math.nan  # refused below: nan is in no range
        if not (least <= seconds <= most or (off and seconds == 0)):
            raise ValueError(f"must be {wording}, not {text.strip()!r}")
        return seconds

    return convert


def origins(text: str) -> tuple[str, ...]:
    """`scheme://host[:port]` or `*`, comma-separated: a typo would otherwise match no page at all (and
    the list replaces the loopback default)."""
    origins = tuple(part.strip() for part in text.split(",") if part.strip())
    bad = [origin for origin in origins if origin != ANY_ORIGIN and normalize_origin(origin) is None]
    if bad:
        raise ValueError(f"origins are http(s)://host[:port] or *, not {', '.join(map(repr, bad))}")
    return origins


def bearer_token(text: str) -> str:
    """A token a caller can present: the `Authorization` header's value is read without its outer spaces,
    and carries no line break; the client commands send printable ASCII only. A token of two lines (a
    `pass` entry's second line in a --token-file) started a worker that refused every caller's header; so
    did `Bearer X` as --token or NPU_WORKER_TOKEN (a header's value pasted), which --token-file refused."""
    if not text.strip() or text != text.strip():
        raise ValueError(
            "the token must not be blank or begin or end with a space (no caller could present it)"
        )
    if not all(" " <= char <= "~" for char in text):
        raise ValueError(
            "the token must be printable ASCII, with no line break or control character (no header "
            "carries it, and npu-worker's clients send no other)"
        )
    if holds_bearer_scheme(text):  # a header's value, pasted: as --token-file refuses it
        raise ValueError(
            "the token is what follows 'Bearer ' alone, not 'Bearer ' and the token (a caller sending the "
            "token would be refused; only 'Bearer Bearer <token>' would pass)"
        )
    return text


def folders(text: str) -> tuple[str, ...]:
    """Absolute folders (or ~): a relative one would be resolved against wherever the worker was started
    (`/` under systemd), and `/tmp: /srv` named a folder ` /srv` there."""
    paths = tuple(part for part in text.split(os.pathsep) if part.strip())
    relative = [path for path in paths if not os.path.isabs(os.path.expanduser(path))]
    if relative:
        raise ValueError(
            f"folders are absolute paths, '{os.pathsep}'-separated, not {', '.join(map(repr, relative))}"
        )
    return paths


def home_expanded(text: str) -> str:
    """`text` with `~` or `~user` expanded; ValueError where there is no such home (`~nobody_here/`, or
    `~` with HOME unset and no password entry): taken as written, it named a folder `~nobody_here`
    under the folder the worker started in (pathlib raised RuntimeError, a traceback at start-up)."""
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        user = text[1:].split(os.sep, 1)[0]
        raise ValueError(
            f"{text!r}: no home directory for {'~' + user if user else '~ (HOME is unset)'} on this machine"
        )
    return expanded


def home_folder(text: str) -> str:
    """A folder as given (`~` expanded where it is used), refused here if its `~` has no home."""
    home_expanded(text)
    return text


def local_file(text: str) -> str | None:
    """A file on the worker's machine as an absolute path: `~` is its user's home (where no shell
    expanded it: an env var, a systemd unit), a relative path is taken from where it was started.
    Blank is none, as an env var set to "" is (`--ref-wav "$REF"` with REF unset named the folder the
    worker started in)."""
    if not text.strip():
        return None
    return os.path.abspath(home_expanded(text))


# The query keys redis-py takes as a secret (it passes every query key on as a connection argument).
SECRET_QUERY_KEYS = frozenset({"password", "ssl_password"})


def shown_url(url: str) -> str:
    """A queue URL as logs and messages may show it: a password in it is `***`, whether in the userinfo
    (`redis://:secret@host`) or the query (`?password=`, `?ssl_password=`)."""
    return _masked(url)[0]


def holds_password(url: str) -> bool:
    """Whether `url` holds something `shown_url` hides (not whether `shown_url` spells it otherwise:
    `Redis://h` and a bare trailing `?` come back respelt, and hold no secret)."""
    return _masked(url)[1]


def _masked(url: str) -> tuple[str, bool]:
    """`shown_url`'s answer, and whether it hid anything."""
    hidden = False
    scheme, separator, rest = url.partition("://")
    userinfo, at, host_on = rest.rpartition("@")
    host_ends = min((i for mark in "/?#" if (i := rest.find(mark)) >= 0), default=len(rest))
    user, colon, _ = rest[:host_ends].partition(":")
    if separator and at and len(userinfo) > host_ends and colon and "[" not in user:
        # A `/`, `?` or `#` in a password not percent-encoded (base64 makes `/`) ends urlsplit's host
        # before the `@`, so urlsplit sees no password and the refusal quoted it: everything after the
        # user's `:` up to the last `@` may be the secret.
        url, hidden = f"{scheme}://{user}:***@{host_on}", True
    try:
        parts = urlsplit(url)
    except ValueError:  # (an unclosed `[` after the last `@`): nothing of it is shown
        return f"{scheme}://***" if separator else "***", True
    if parts.password is not None:
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}:***@{parts.netloc.rpartition('@')[2]}")
        hidden = True
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if any(key in SECRET_QUERY_KEYS for key, _ in pairs):
        shown = (f"{key}={'***' if key in SECRET_QUERY_KEYS else value}" for key, value in pairs)
        parts = parts._replace(query="&".join(shown))
        hidden = True
    return urlunsplit(parts), hidden


def parse_bool(text: str) -> bool:
    """1/true/yes/on or 0/false/no/off (any case; empty is no): flags, env vars and query parameters."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def queue_url(text: str) -> str:
    """`local`, or `redis://HOST[:PORT][/DB]` (checked here so a typo is a start-up error, not a hang)."""
    value = text.strip()
    if value == "local":
        return value
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"bad port in queue URL {shown_url(text)!r}") from exc
    database = parts.path.lstrip("/")
    if parts.scheme not in ("redis", "rediss") or not parts.hostname or (database and not database.isdigit()):
        raise ValueError(f"queue must be 'local' or redis://HOST:PORT/DB, not {shown_url(text)!r}")
    del port
    _check_queue_query(parts.scheme, parts.query, text)
    return value


# What a queue URL's query may say: who connects, and, over TLS, how (redis-py passes every key on).
QUEUE_QUERY_KEYS = frozenset({"password", "username"})
QUEUE_TLS_KEYS = frozenset(
    {
        "ssl_keyfile",
        "ssl_certfile",
        "ssl_password",
        "ssl_cert_reqs",
        "ssl_ca_certs",
        "ssl_ca_path",
        "ssl_ca_data",
        "ssl_check_hostname",
        "ssl_min_version",
        "ssl_ciphers",
    }
)


def _check_queue_query(scheme: str, query: str, text: str) -> None:
    """Each key of the query one the worker leaves to the URL: redis-py takes any key as a setting of its
    connections, so `?protocol=3` (replies of another shape) started a node whose `/health` said 200 while
    its loops failed, `?max_connections=1` one whose loops waited for a connection for ever, and
    `?decode_responses=true`, an unknown key or a value redis-py cannot read was a traceback."""
    allowed = QUEUE_QUERY_KEYS | (QUEUE_TLS_KEYS if scheme == "rediss" else frozenset())
    for key, _ in parse_qsl(query, keep_blank_values=True):
        if key in allowed:
            continue
        if key in QUEUE_TLS_KEYS:
            why = "a TLS setting needs a rediss:// URL"
        else:
            why = (
                "the worker sets its connections' timeouts, pool, retries and replies itself; a queue URL "
                "gives only ?password=, ?username= and, with rediss://, TLS settings (?ssl_...=), and its "
                "database as the path (/DB)"
            )
        raise ValueError(f"queue URL setting {key!r} refused: {why}: {shown_url(text)!r}")
    try:
        from redis.asyncio.connection import parse_url
    except ImportError:  # without the redis extra `serve` says to install it
        return
    try:
        parse_url(text.strip())
    except ValueError as exc:
        raise ValueError(f"the queue URL cannot be read ({exc}): {shown_url(text)!r}") from None
