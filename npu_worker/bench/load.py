"""Open-loop load: Poisson arrivals at fixed rates, each request on its own task at its own moment.

Open-loop means a request is sent at its scheduled time whether or not earlier ones have finished,
as independent listeners would; a closed loop (send when the last one finishes) would hide queueing.
Every run is bounded: a duration and a request count per rate, a timeout per request, loopback only.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from npu_worker.bench.bounded_body import AnswerTooLarge, bounded_text
from npu_worker.bench.interrupted import RunSoFar
from npu_worker.bench.measure import RequestRecord, http_request, ws_request
from npu_worker.bench.wav_folder import WAV_SETTLE_SECONDS, removed_once_settled, temp_wav_dir, wav_dir_hint
from npu_worker.client.common import auth_headers
from npu_worker.printable import one_line, printable

MAX_RATE = 50.0
MAX_DURATION = 600.0
MAX_REQUESTS = 1000
TRANSPORTS = ("ws", "http")


class TargetNotAllowed(ValueError):
    """The benchmark only loads workers on this machine (loopback addresses)."""


def check_loopback(base: str) -> str:
    """`base` without a trailing slash if its host is a loopback address or `localhost`; else raise."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetNotAllowed(f"not an http(s) URL: {base!r}")
    host = parts.hostname
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise TargetNotAllowed(
                f"refusing to load {host!r}: only loopback targets (127.0.0.0/8, ::1, localhost)"
            )
    return base.rstrip("/")


@dataclass(frozen=True)
class LoadConfig:
    base: str
    rates: tuple[float, ...]
    texts: tuple[str, ...]
    transports: tuple[str, ...] = TRANSPORTS
    duration: float = 20.0
    max_requests: int = 40
    timeout: float = 60.0
    drain_timeout: float = 120.0
    lang: str = "ko"
    seed: int = 1
    token: str | None = None
    wav_dir: str | None = None  # where /synth writes its wavs (must be an allowed root); default: temp dir

    def __post_init__(self) -> None:
        check_loopback(self.base)
        if not self.rates or any(not 0 < r <= MAX_RATE for r in self.rates):
            raise ValueError(f"--rps must be in (0, {MAX_RATE}] requests/s")
        if len(set(self.rates)) < len(self.rates):  # its runs would share seeds and one report row
            raise ValueError(f"--rps: each rate once, not {', '.join(f'{r:g}' for r in self.rates)}")
        if not 0 < self.duration <= MAX_DURATION:
            raise ValueError(f"--duration must be in (0, {MAX_DURATION}] s")
        if not 0 < self.max_requests <= MAX_REQUESTS:
            raise ValueError(f"--requests must be in (0, {MAX_REQUESTS}]")
        if idle := [f"{rate:g}" for rate in self.rates if not self.first_arrival(rate)]:  # a row left out
            raise ValueError(
                f"--rps {', '.join(idle)}: no request arrives within --duration {self.duration:g} s "
                f"(--seed {self.seed}): raise --duration or the rate"
            )
        if not 0 < self.timeout <= MAX_DURATION:  # 0: every request would fail at once
            raise ValueError(f"--timeout must be in (0, {MAX_DURATION}] s")
        auth_headers(self.token)  # a token no header can carry fails every request: say so now
        if not self.texts:
            raise ValueError("no texts to send")
        unknown = set(self.transports) - set(TRANSPORTS)
        if unknown or not self.transports:
            raise ValueError(f"--transports takes ws, http or both, not {','.join(self.transports)!r}")

    def first_arrival(self, rate: float) -> list[float]:
        """The first of `rate`'s arrivals within the duration, as `run_rate` draws them; none: that rate
        would send nothing, and its row went missing from the report without a word."""
        return poisson_schedule(rate, self.duration, 1, random.Random(f"{self.seed}:{rate}"))

    def public(self) -> dict[str, Any]:
        """The configuration as recorded with the results (texts counted, token never written)."""
        recorded = asdict(self)
        recorded["texts"] = len(self.texts)
        recorded["token"] = bool(self.token)
        return recorded


def poisson_schedule(rate: float, duration: float, max_requests: int, rng: random.Random) -> list[float]:
    """Arrival offsets (s) of a Poisson process at `rate`, within `duration`, at most `max_requests`."""
    offsets: list[float] = []
    moment = 0.0
    while len(offsets) < max_requests:
        moment += rng.expovariate(rate)
        if moment > duration:
            break
        offsets.append(moment)
    return offsets


class Redirected(aiohttp.ClientError):
    """The target answered with a redirect: never followed, as it could lead off loopback."""


async def _refuse_redirect(session: Any, context: Any, params: aiohttp.TraceRequestRedirectParams) -> None:
    where = params.response.headers.get("Location", "?")
    raise Redirected(f"the worker redirected to {where[:200]!r}: not followed (loopback targets only)")


def no_redirects() -> aiohttp.TraceConfig:
    """For a session's `trace_configs`: every redirect, /ws handshakes included (ws_connect has no
    `allow_redirects`), ends its request with `Redirected` before it is followed."""
    trace = aiohttp.TraceConfig()
    trace.on_request_redirect.append(_refuse_redirect)
    return trace


ERROR_WORDS = 300  # characters of a server's error said before the run


ASK_SECONDS = 10.0  # /health and /v1/models: a worker answers them in milliseconds, loaded or not
ASK_TIMEOUT = aiohttp.ClientTimeout(total=ASK_SECONDS)
UNANSWERED = f"no answer within {ASK_SECONDS:g} s: is a worker listening there?"


class NotAWorker(ValueError):
    """The target's /health answered no JSON object: something else listens on that port."""


async def health(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    """/health's JSON object, its body read up to MAX_ANSWER_BYTES (it was read whole: an endless or
    gzip-bomb body from a server on that port filled the bench's memory); NotAWorker past it, or past
    ASK_SECONDS (a port that accepts and says nothing held the bench 5 minutes, aiohttp's default)."""
    try:
        async with session.get(base + "/health", timeout=ASK_TIMEOUT) as response:
            try:
                body = json.loads(await bounded_text(response, f"{base}/health"))
            except AnswerTooLarge as exc:
                raise NotAWorker(f"{exc}: is a worker listening there?") from None
            except (ValueError, RecursionError):
                body = None
    except TimeoutError:
        raise NotAWorker(f"{base}/health: {UNANSWERED}") from None
    if not isinstance(body, dict):
        raise NotAWorker(f"{base}/health did not answer a JSON object: is a worker listening there?")
    if 400 <= response.status < 500:  # a --base with a path (/x: 404, /jobs: 405): every request fails so
        raise NotAWorker(
            f"{base}/health answered HTTP {response.status}{error_words(body)}: is a worker listening there?"
            " --base takes the worker's address alone, http://HOST:PORT"
        )
    return body


class WorkerFailed(NotAWorker):
    """The worker's /health says `fail` (its engine failed to load, a 500; its queue's Redis unreachable, a
    503): every request would fail."""


async def health_before_run(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    """/health, refused (WorkerFailed) where it says `fail`: a 500 `fail` was taken as healthy, the whole
    run sent, every request refused, then exit 1."""
    body = await health(session, base)
    if body.get("status") == "fail":
        raise WorkerFailed(
            f"{base}/health says the worker cannot serve (status 'fail'){error_words(body)}: every request"
            " would fail; see its log"
        )
    return body


def error_words(body: dict[str, Any]) -> str:
    """`: ` and the body's `error` as one bounded line, its breaks `␤` (a server on the port chose it: its
    line breaks forged lines of the bench's own on stderr, and 1 MiB of it was one line), or nothing.
    `tell` escapes the rest."""
    error = body.get("error")
    return f": {one_line(str(error)[:ERROR_WORDS])}" if error else ""


class AccessRefused(ValueError):
    """The worker refused the bench's token, or its lack of one: every measured request would fail."""


async def check_access(session: aiohttp.ClientSession, base: str, token_given: bool) -> None:
    """Ask `GET /v1/models`, which wants the token as the measured routes do (`/health` does not): a
    refusal now is one line before the run, not a whole run of failed requests."""
    try:
        async with session.get(base + "/v1/models", timeout=ASK_TIMEOUT) as response:
            status = response.status
    except TimeoutError:
        raise NotAWorker(f"{base}/v1/models: {UNANSWERED}") from None
    if status in (401, 403):
        hint = (
            "check the token"
            if token_given
            else "it wants a token: give --token-file PATH or NPU_WORKER_TOKEN"
        )
        raise AccessRefused(f"{base} refused the bench (HTTP {status}): {hint}")


class LanguageRefused(ValueError):
    """The worker refused `--lang` (UnknownLanguage): every request of the run would fail the same way.
    `lang` and the worker's words (`said`) are kept apart: the command says where the language came from."""

    def __init__(self, lang: str, said: str) -> None:
        super().__init__(f"the worker does not speak --lang {lang}: {said}")
        self.lang, self.said = lang, said


def unspoken(lang: str, health: dict[str, Any]) -> LanguageRefused | None:
    """The run's end before it starts: `/health` lists the languages its engine speaks (`languages`) and
    `lang` is none of them, in the worker's spelling (`" KO_kr "` is `ko-kr`, spoken where `ko` is). The
    first request was sent and refused (`UnknownLanguage`) before. A worker that lists none (one that
    takes any language, an api node whose engine nodes list none, an older one) is asked by the run itself, as before."""
    listed = health.get("languages")
    if not isinstance(listed, list) or not all(isinstance(code, str) for code in listed) or not listed:
        return None
    code, spoken = lang.strip().lower().replace("_", "-"), {known.lower() for known in listed}
    if code in spoken or code.split("-", 1)[0] in spoken:
        return None
    # A worker's bytes, said on the caller's terminal: each bounded and escaped (one entry of 1 MB, or an
    # escape sequence, was printed whole).
    shown = ", ".join(printable(known[:64]) for known in listed[:20])
    shown += f", … ({len(listed)} in all)" if len(listed) > 20 else ""
    return LanguageRefused(lang, f"UnknownLanguage: its /health lists the languages it speaks: {shown}")


def language_refused(config: LoadConfig, record: RequestRecord) -> LanguageRefused | None:
    """The run's end when `record` was refused for its language: the whole run was sent, each request
    refused, then it exited 1 (the refusal named `lang`, not the flag that set it)."""
    if not (record.error or "").startswith("UnknownLanguage"):
        return None
    return LanguageRefused(config.lang, record.error or "")


async def health_or_why_not(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    """/health, or `{"unreachable": why}` once the run has begun: a worker that died under the load
    (what a load benchmark may well do) must not take the requests measured so far with it."""
    try:
        return await health(session, base)
    except (NotAWorker, aiohttp.ClientError, OSError, TimeoutError) as exc:
        return {"unreachable": f"{type(exc).__name__}: {exc}"}


def lost_under_load(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Why the run's figures are those of a worker that did not live through it, or None: unreachable after
    the run (it died), no longer `ok` where it was (`loading`: restarted by its supervisor, a QNN load
    taking minutes; `fail`), or another start's (`start_id`: restarted and loaded again within the run,
    `ok` both times, which read as a clean run): the figures of a run that exits 0 are published. The
    `start_id`s of two cluster nodes (`node`: a load balancer's answers) are not compared: each start of
    one node has its own, so a run through a balancer was told its worker had restarted."""
    if gone := after.get("unreachable"):
        return f"the worker could not be reached after the run ({gone}): it may have died under the load"
    if before.get("status") == "ok" and (status := after.get("status")) != "ok":
        said = one_line(str(status)[:ERROR_WORDS])
        return (
            f"the worker's /health said {said!r} after the run, 'ok' before: it may have restarted or failed"
            " under the load"
        )
    started, now = before.get("start_id"), after.get("start_id")
    # (a worker of before `start_id` has none to compare)
    if isinstance(started, str) and started != now and not _other_node(before, after):
        ids = ", ".join(repr(one_line(str(said)[:ERROR_WORDS])) for said in (started, now))
        return f"the worker's /health named another start after the run ({ids}): it restarted under the load"
    return None


def lost_under_load_lines(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The record's paragraph for `lost_under_load` (none when the worker lived through the run): one
    wording for every bench record, the load's and the fragments'."""
    lost = lost_under_load(before, after)
    return (
        [] if lost is None else ["", f"**Not the figures of a worker that lived through the run**: {lost}."]
    )


def _other_node(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the two /health answers name two nodes of a cluster (`node`, stable across a node's
    restarts; absent on a local worker, empty while a node reads its name)."""
    one, other = before.get("node"), after.get("node")
    return isinstance(one, str) and isinstance(other, str) and "" not in (one, other) and one != other


def run_failed(before: dict[str, Any], after: dict[str, Any], records: list[dict[str, Any]]) -> str | None:
    """The closing line of a run whose figures are no success (both modes), or None: no request succeeded
    (the first error said as one bounded line: a worker's line breaks forged lines of the bench's own),
    or the worker was lost under the load (`lost_under_load`)."""
    if not any(record["error"] is None for record in records):
        first = next((str(record["error"]) for record in records), "no request was sent")
        return f"no request succeeded ({len(records)} sent; {one_line(first[:ERROR_WORDS])})"
    if lost := lost_under_load(before, after):
        failed = sum(1 for record in records if record["error"] is not None)
        return f"{lost}; {failed} of {len(records)} requests failed"
    return None


async def wait_idle(session: aiohttp.ClientSession, base: str, limit: float) -> str | None:
    """Wait (bounded) until the worker reports no queued sections and no running jobs: None then, else
    why not (still busy after `limit`, or unreachable)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while loop.time() < deadline:
        body = await health_or_why_not(session, base)
        if "unreachable" in body:
            return f"worker unreachable ({body['unreachable']})"
        if not body.get("queue") and not body.get("jobs_running"):
            return None
        await asyncio.sleep(0.2)
    return f"worker still busy after {limit:g} s"


async def run_rate(
    session: aiohttp.ClientSession,
    config: LoadConfig,
    transport: str,
    rate: float,
    out_dir: str,
    so_far: RunSoFar | None = None,
) -> list[RequestRecord]:
    """One rate on one transport; the same seed gives both transports the same arrivals and texts. Each
    request is told to `so_far` as it is sent and as it ends (a stopped run reports those that ended)."""
    so_far = so_far or RunSoFar()
    so_far.begin(transport, rate)
    run = so_far.runs
    rng = random.Random(f"{config.seed}:{rate}")
    offsets = poisson_schedule(rate, config.duration, config.max_requests, rng)
    text_indices = [rng.randrange(len(config.texts)) for _ in offsets]
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05

    async def one(index: int, offset: float) -> RequestRecord:
        t0 = start + offset
        record = RequestRecord(transport, rate, index, text_indices[index], offset)
        await asyncio.sleep(max(0.0, t0 - loop.time()))
        record.sched_lag_ms = (loop.time() - t0) * 1000.0
        so_far.sent += 1
        # A fresh seed per request keeps the synthesis cache from answering instead of the engine.
        params = {"lang": config.lang, "seed": rng_seed(config.seed, transport, rate, index)}
        text = config.texts[record.text_idx]
        try:
            if transport == "ws":
                call = ws_request(session, config.base, text, params, record, t0)
            else:
                call = http_request(session, config.base, text, params, record, t0, out_dir)
            await asyncio.wait_for(call, timeout=config.timeout)
        except TimeoutError:
            record.timeout, record.error = True, f"timeout after {config.timeout:g} s"
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
        so_far.ended.append((run, record))
        if refused := language_refused(config, record):
            raise refused
        return record

    tasks = [asyncio.ensure_future(one(i, offset)) for i, offset in enumerate(offsets)]
    try:
        return list(await asyncio.gather(*tasks))
    finally:  # a refused language ends the run: the requests still to come are not sent
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def rng_seed(seed: int, transport: str, rate: float, index: int) -> int:
    return (
        seed * 1_000_003 + TRANSPORTS.index(transport) * 100_003 + int(rate * 1000) * 1009 + index
    ) % 2**31


async def run_load(
    config: LoadConfig, say: Callable[[str], None] = lambda line: None, so_far: RunSoFar | None = None
) -> dict[str, Any]:
    """Every rate on every transport, the worker drained in between; returns health and raw records.
    `so_far` is told what is measured as it is (a run stopped midway reports it)."""
    so_far = so_far or RunSoFar()
    records: list[RequestRecord] = []
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else None
    # No connection limit: the load generator must never be the queue (requests per rate are bounded).
    connector = aiohttp.TCPConnector(limit=0)
    # No session-wide bound: --timeout bounds each request (aiohttp's 5 minutes cut a `--timeout 600` one,
    # said as "timeout after 600 s"); the asks have their own, ASK_TIMEOUT.
    unbounded = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(
        headers=headers, connector=connector, trace_configs=[no_redirects()], timeout=unbounded
    ) as session:
        before = await health_before_run(session, config.base)
        if refused := unspoken(config.lang, before):
            raise refused
        await check_access(session, config.base, config.token is not None)
        so_far.health = before  # the run begins
        out_dir = await asyncio.to_thread(temp_wav_dir, config.wav_dir)
        try:
            for rate in config.rates:
                for transport in config.transports:
                    so_far.waiting_before(transport, rate)
                    if problem := await wait_idle(session, config.base, config.drain_timeout):
                        say(f"warning: {problem}; going on")
                    batch = await run_rate(session, config, transport, rate, out_dir, so_far)
                    records.extend(batch)
                    failed = sum(1 for r in batch if r.error)
                    say(f"{transport} at {rate:g}/s: {len(batch)} requests, {failed} failed")
                    if hint := wav_dir_hint(batch, out_dir):
                        say(hint)
        finally:
            settled = functools.partial(wait_idle, session, config.base, WAV_SETTLE_SECONDS)
            if left := await removed_once_settled(out_dir, settled):
                say(f"warning: {left}")
        after = await health_or_why_not(session, config.base)
    return {"health": before, "health_after": after, "records": [r.to_dict() for r in records]}
