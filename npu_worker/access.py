"""Who may call the worker: an optional bearer token and a browser-origin check (HTTP API and /ws).

Pure functions over header values (no aiohttp); `http_compat/errors.py` applies them to every request
before its handler runs, so a WebSocket is refused before the upgrade. Browsers send an
`Origin` header on every WebSocket handshake and cannot be made to omit it, so checking it stops other
web pages (including DNS-rebinding attacks on a loopback worker) from driving the worker through a
visitor's browser; programs that send no Origin (pipelines, curl, the Python client) are not browsers and
are let through, and a token is what guards them when one is configured.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import unicodedata
from collections.abc import Sequence
from urllib.parse import urlsplit

import idna

from .protocol import BadRequest, OriginNotAllowed, Unauthorized

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_PORTS = {"http": 80, "https": 443}
ANY_ORIGIN = "*"
HOSTS_REMEMBERED = 32  # `Host` values whose answer is kept (each at most a header line, 8 KiB)
ORIGINS_REMEMBERED = 32  # `Origin` values whose answer is kept (the same bound)
MAX_NAME_CHARS = 253  # a DNS name's most: a caller's 8 KiB `Origin` in Unicode is not mapped, only refused


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case with the default port left off, the host in its ASCII
    (punycode) form, or None if not http(s). None too for userinfo, a query or a fragment, which no
    browser's `Origin` holds: `http://evil.example@localhost` was read as `http://localhost`."""
    if any(mark in origin for mark in "@?#"):
        return None
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), ascii_host(parts.hostname or "")
    if scheme not in DEFAULT_PORTS or not host or parts.path not in ("", "/"):
        return None
    shown_host = f"[{host}]" if ":" in host else host
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{shown_host}"
    return f"{scheme}://{shown_host}:{port}"


def ascii_host(host: str) -> str | None:
    """A host name as a browser sends it (`Origin`, `Host`): an international name in punycode, by
    UTS #46 as browsers map it (the URL Standard's domain to ASCII: `bücher.example` is
    `xn--bcher-kva.example`, `ß` stays `ß`, `☃.net` is `xn--n3h.net`), so an `--allowed-origins`
    entry written in Unicode matches the page's ASCII `Origin`; None if no browser reaches the name.
    ASCII names are only lower-cased (IDNA refuses `_` and other names browsers still send)."""
    if host.isascii():
        return host.lower()
    if len(host) > MAX_NAME_CHARS:
        return None
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        labels = [_ascii_label(label) for label in mapped.split(".")]
    except ValueError:  # (idna.IDNAError, a UnicodeError, is one; so is unicodedata's in its checks)
        return None
    return ".".join(labels)


# Code points no host holds, once mapped (the URL Standard's forbidden domain code points).
FORBIDDEN_IN_HOST = frozenset(map(chr, range(0x21))) | frozenset("#%/:<>?@[\\]^|\x7f")


def _ascii_label(label: str) -> str:
    """One mapped label in its ASCII form, checked as browsers check it: IDNA 2008's own checks
    (`idna.encode`) refused names browsers reach (symbols such as `☃.net`, `_` or `--` beside
    non-ASCII letters), and a Unicode entry of one failed the start as no `http(s)://host`."""
    if any(char in FORBIDDEN_IN_HOST for char in label):
        raise idna.IDNAError(f"{label!r} holds a code point no host name holds")
    if label.isascii():
        return label
    if unicodedata.category(label[0]).startswith("M"):
        raise idna.IDNAError(f"{label!r} begins with a combining mark")
    joiners = (pos for pos, char in enumerate(label) if char in "\u200c\u200d")
    if not all(idna.valid_contextj(label, pos) for pos in joiners):
        raise idna.IDNAError(f"{label!r} holds a joiner out of its context")
    idna.check_bidi(label)
    return "xn--" + label.encode("punycode").decode("ascii")


def is_loopback_origin(origin: str) -> bool:
    """http(s)://127.0.0.1, localhost, a name under it (`app.localhost`; `localhost.` too) or [::1], any
    port: Chromium and Firefox answer `*.localhost` with the loopback themselves, never through DNS, as the
    `Host` rule takes it, so a page there is one served on this machine (`http://app.localhost:5173` was
    refused 403 while its `Host` was answered)."""
    normalized = normalize_origin(origin)
    return normalized is not None and is_localhost(urlsplit(normalized).hostname or "")


def is_localhost(name: str) -> bool:
    """A loopback name: an IP literal of LOOPBACK_HOSTS, `localhost` and a name under it, each
    with or without the root's trailing dot (`localhost.`, the same name written absolute). Browsers
    answer these with the loopback themselves, never through DNS (RFC 6761), so no page elsewhere is
    served under one; a page at `http://localhost.:7768` was refused as a stranger (a 403)."""
    name = name.lower().removesuffix(".")
    return name in LOOPBACK_HOSTS or name.endswith(".localhost")


def origin_allowed(origin: str | None, allowed: Sequence[str]) -> bool:
    """No Origin header: allowed (not a browser). Otherwise loopback by default, or the configured list.

    A configured list replaces the loopback default (list the loopback origins too if the page is also
    opened locally); `*` allows every origin.
    """
    if origin is None:
        return True
    return _origin_answer(origin, tuple(allowed))


@functools.lru_cache(maxsize=ORIGINS_REMEMBERED)
def _origin_answer(origin: str, allowed: tuple[str, ...]) -> bool:
    """`origin_allowed`'s answer, kept for the few origins a worker's pages send: a browser's every
    request was parsed on the loop twice (the CORS headers and the access check), and with
    `--allowed-origins` every listed origin too. Bounded as `_names_this_worker` is."""
    if not allowed:
        return is_loopback_origin(origin)
    if ANY_ORIGIN in allowed:
        return True
    normalized = normalize_origin(origin)
    return normalized is not None and normalized in {normalize_origin(a) for a in allowed}


@functools.lru_cache(maxsize=16)
def loopback_bind(host: str) -> bool:
    """The worker listens on a loopback address only (the default, 127.0.0.1). `localhost.` is not taken
    for one: a browser answers that name with the loopback itself, but the worker's bind asks the
    resolver, which need not read an absolute name from /etc/hosts (glibc does not: it asks DNS) and may
    answer it with any address (the bind then warns as any beyond loopback does)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(
    host: str | None, allowed_origins: Sequence[str], token_configured: bool, loopback: bool
) -> bool:
    """On a worker bound to loopback (`loopback`) without a token: the `Host` a request names is an IP
    literal, `localhost` or `*.localhost` (which browsers resolve to loopback themselves), with or without
    the trailing dot (`is_localhost`), or the host of an allowed origin. Anything goes with a token, with
    origins `*`, on a worker bound beyond loopback (callers may use its LAN name; such a worker needs a
    token anyway), and without a Host.

    Why: after DNS rebinding, a page at `http://evil.example:7768` reaches a loopback worker as its own
    origin, and a browser sends no `Origin` on a same-origin GET, so the origin check alone would let that
    page read `/jobs` and the sections' audio. Its requests still carry `Host: evil.example:7768`, a
    name no program on this machine needs to reach a loopback worker.
    """
    if not loopback or host is None or token_configured or ANY_ORIGIN in allowed_origins:
        return True
    return _names_this_worker(host, tuple(allowed_origins))


@functools.lru_cache(maxsize=HOSTS_REMEMBERED)
def _names_this_worker(host: str, allowed_origins: tuple[str, ...]) -> bool:
    """`host_allowed`'s answer for a loopback worker without a token, kept for the few `Host` values its
    callers send: worked out again on every request, its split and `ipaddress` parse were ≈ 15 Python
    calls on the event loop a request (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 62). Bounded, so a
    caller sending a new `Host` every request only evicts: ≤ `HOSTS_REMEMBERED` headers kept."""
    try:
        name = (urlsplit(f"//{host.strip()}").hostname or "").lower()
    except ValueError:
        return False
    if not name:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    if is_localhost(name):
        return True
    return name in _origin_hosts(allowed_origins)


@functools.lru_cache(maxsize=16)
def _origin_hosts(allowed_origins: tuple[str, ...]) -> frozenset[str]:
    """The host names of the allowed origins (the setting is fixed: worked out once, not per request)."""
    return frozenset(
        host
        for origin in allowed_origins
        if (normalized := normalize_origin(origin))
        if (host := urlsplit(normalized).hostname)
    )


def presented_tokens(authorization: str | None, query_token: str | None) -> tuple[str, ...]:
    """Every token the request presents: a `Bearer` header's and a non-empty `?token=`'s. Only spaces
    and tabs around a header's token are none of it (HTTP's whitespace): `str.strip` also took U+2028
    or U+00A0 after the token for whitespace. Another scheme (`Basic`, a browser's cached login) is no
    token of ours."""
    tokens = []
    if authorization:
        scheme, _, value = authorization.strip(" \t").partition(" ")
        if scheme.lower() == "bearer" and value.strip(" \t"):
            tokens.append(value.strip(" \t"))
    if query_token:
        tokens.append(query_token)
    return tuple(tokens)


def token_valid(expected: str | None, presented: str | None) -> bool:
    """True when no token is configured, else a constant-time comparison."""
    if not expected:
        return True
    if presented is None:
        return False
    # aiohttp decodes header bytes that are not UTF-8 as lone surrogates: encoded back the same way,
    # such a header is a wrong token, not an UnicodeEncodeError.
    return hmac.compare_digest(presented.encode("utf-8", "surrogateescape"), expected.encode())


def check_origin_and_host(
    allowed_origins: Sequence[str],
    origin: str | None,
    host: str | None,
    loopback: bool,
    token_configured: bool,
) -> None:
    """Raise OriginNotAllowed (403) for a browser origin or a `Host` this worker does not answer
    (`host_allowed`), BadRequest (400) for a `Host` carrying userinfo (no HTTP client sends one; it was
    read as the host after its `@`). Checked before anything about the credentials: a refused page is
    told 403 and nothing about how it sent its token."""
    if not origin_allowed(origin, allowed_origins):
        raise OriginNotAllowed(f"origin {origin!r} is not allowed")
    if host is not None and "@" in host:  # urlsplit took `evil.example@localhost` for `localhost`
        raise BadRequest(
            f"the Host header {host[:80]!r} carries userinfo ('@'); it names a host and port alone"
        )
    if not host_allowed(host, allowed_origins, token_configured, loopback):
        raise OriginNotAllowed(
            f"host {(host or '')[:80]!r} is not a name of this worker (a browser reaching it through another "
            "name, as in DNS rebinding); use 127.0.0.1 or localhost, list the page's origin in "
            "--allowed-origins, or set --token"
        )


def check_token(token: str | None, authorization: str | None, query_token: str | None) -> None:
    """Raise Unauthorized (401) unless `token` is unset or every token presented is it, at least one:
    `?token=wrong` beside a right `Authorization` was let in (the header's was the one read), so a
    wrong credential passed where it stood beside a right one."""
    if not token:
        return
    presented = presented_tokens(authorization, query_token)
    if not presented or not all([token_valid(token, given) for given in presented]):  # (each compared)
        raise Unauthorized("a valid token is required (Authorization: Bearer <token> or ?token=<token>)")
