"""`npu-worker bench --mode fragments`: texts streamed in like LLM tokens over `WS /v1/audio/speech/stream`.

Each text is sent as fragments of `chars` characters every `interval` seconds (one text at a time), and
the listener's audible TTFA is read off the same playback timeline as the load benchmark:
- `ttfa_from_sentence_ms`: from sending the fragment that carries the first sentence's last character
  (the worker cannot start speaking before it) to the first audible sample being played;
- `ttfa_from_first_fragment_ms`: from sending the first fragment (what an agent's user waits);
- `server_ttfa_ms`: the worker's own `first_audio.ttfa_ms`.
Talks over the wire only (no server modules).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import aiohttp

from npu_worker.bench.load import (
    LanguageRefused,
    check_access,
    check_loopback,
    health_before_run,
    health_or_why_not,
    lost_under_load_lines,
    no_redirects,
    unspoken,
)
from npu_worker.bench.measure import Listener, figure, json_object, sample_rate
from npu_worker.bench.stats import summarize
from npu_worker.client.common import auth_headers
from npu_worker.held_signals import how_stopped
from npu_worker.printable import one_line, printable_lines


@dataclass(frozen=True)
class FragmentConfig:
    base: str
    texts: tuple[str, ...]
    chars: int = 3
    interval: float = 0.03
    lang: str = "ko"
    voice: str = "default"
    timeout: float = 120.0
    token: str | None = None

    def __post_init__(self) -> None:
        check_loopback(self.base)
        if self.chars < 1:  # named as the caller gave it: "fragments need >= 1 character" named no flag
            raise ValueError(f"--fragment-chars must be a whole number >= 1, not {self.chars}")
        if not 0 <= self.interval <= 5:
            milliseconds = self.interval * 1000
            raise ValueError(f"--fragment-interval-ms must be in [0, 5000], not {milliseconds:g}")
        if not 0 < self.timeout <= 600:
            raise ValueError("--timeout must be in (0, 600] s")
        auth_headers(self.token)
        if not self.texts:
            raise ValueError("no texts to send")

    def public(self) -> dict[str, Any]:
        recorded = asdict(self)
        recorded["texts"] = len(self.texts)
        recorded["token"] = bool(self.token)
        return recorded


@dataclass
class FragmentRecord:
    text_idx: int
    fragments: int
    first_sentence: str | None = None
    ttfa_from_sentence_ms: float | None = None
    ttfa_from_first_fragment_ms: float | None = None
    server_ttfa_ms: float | None = None
    sentences: int = 0
    audio_sec: float = 0.0
    underruns: int = 0
    error: str | None = None
    sent_at: list[float] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        body = asdict(self)
        body.pop("sent_at")
        return body


def fragments_of(text: str, chars: int) -> list[str]:
    return [text[start : start + chars] for start in range(0, len(text), chars)]


def sentence_fragment(text: str, sentence: str, chars: int) -> int | None:
    """Index of the fragment that carries the last character of `sentence` (its first place in `text`);
    None for no sentence (it was -1: the last fragment's, a figure measured from the wrong moment)."""
    start = text.find(sentence) if sentence else -1
    return None if start < 0 else (start + len(sentence) - 1) // chars


async def _send(
    ws: aiohttp.ClientWebSocketResponse, pieces: list[str], interval: float, record: FragmentRecord
):  # noqa: ANN202
    loop = asyncio.get_running_loop()
    start = loop.time()
    for number, piece in enumerate(pieces):
        # On a fixed schedule: sleeping `interval` after each send added every send's time and every
        # late wake-up (0.4 ms a fragment on a busy 2-core VM) to the text's arrival.
        await asyncio.sleep(max(0.0, start + number * interval - loop.time()))
        record.sent_at.append(loop.time())
        await ws.send_str(json.dumps({"type": "input.text", "text": piece}))
    await ws.send_str(json.dumps({"type": "input.done"}))


async def _receive(
    ws: aiohttp.ClientWebSocketResponse,
    record: FragmentRecord,
    listener: Listener,
) -> None:
    loop = asyncio.get_running_loop()
    async for message in ws:  # ends quietly, without a message, when the worker closes the socket
        if message.type == aiohttp.WSMsgType.BINARY:
            listener.pcm(loop.time(), message.data)
            continue
        if message.type != aiohttp.WSMsgType.TEXT:
            record.error = record.error or f"socket closed early ({message.type.name})"
            return
        event = json_object(message.data)
        kind = event.get("type")
        if kind == "audio.start" and event.get("sentence_index") == 0:
            sentence = event.get("sentence_text")
            record.first_sentence = sentence if isinstance(sentence, str) else None
        elif kind == "first_audio":
            record.server_ttfa_ms = figure(event.get("ttfa_ms"))
        elif kind == "error":
            record.error = record.error or str(event.get("message") or "an error without a message")
        elif kind == "session.done":
            record.sentences = int(figure(event.get("total_sentences")) or 0)
            return
    record.error = record.error or f"socket closed before session.done (close code {ws.close_code})"


async def stream_one(session: aiohttp.ClientSession, config: FragmentConfig, idx: int) -> FragmentRecord:
    text = config.texts[idx]
    pieces = fragments_of(text, config.chars)
    record = FragmentRecord(text_idx=idx, fragments=len(pieces))
    listener = Listener(t0=0.0)  # places the PCM and finds its onset as it comes: nothing kept
    try:
        async with session.ws_connect(config.base + "/v1/audio/speech/stream") as ws:
            await ws.send_str(
                json.dumps({"type": "session.config", "voice": config.voice, "language": config.lang})
            )
            configured = await _configured(ws, config.timeout)
            if configured.get("code") == "UnknownLanguage":  # every text would be refused so: the run ends
                said = str(configured.get("message"))
                said = said if said.startswith("UnknownLanguage") else f"UnknownLanguage: {said}"
                raise LanguageRefused(config.lang, said)
            if configured.get("type") != "session.configured":
                record.error = str(configured.get("message", configured))
                return record
            listener.sample_rate = sample_rate(configured.get("sample_rate"))
            sender = asyncio.create_task(_send(ws, pieces, config.interval, record))
            try:
                await asyncio.wait_for(_receive(ws, record, listener), config.timeout)
            except TimeoutError:
                record.error = "timeout"
            finally:
                sender.cancel()
    except LanguageRefused:  # a ValueError too, but the run's end, not this text's error
        raise
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:  # this text's error; the run goes on
        record.error = record.error or f"{type(exc).__name__}: {exc}"
        return record
    _audio_figures(record, listener, text, config.chars)
    return record


async def _configured(ws: aiohttp.ClientWebSocketResponse, timeout: float) -> dict[str, Any]:
    """The answer to `session.config`: a JSON object, or one that says why there is none (the worker
    closed the socket, e.g. 1013 when it reclaims connections, or sent something else)."""
    message = await ws.receive(timeout=timeout)
    if message.type != aiohttp.WSMsgType.TEXT:
        return {
            "message": f"the socket closed before session.configured ({message.type.name} {message.data})"
        }
    try:
        answer = json.loads(message.data)
    except ValueError:
        answer = None
    return answer if isinstance(answer, dict) else {"message": f"not a JSON object: {message.data[:80]}"}


def _audio_figures(record: FragmentRecord, listener: Listener, text: str, chars: int) -> None:
    timeline, watch = listener.timeline, listener.watch
    if timeline is None or watch is None:  # no PCM
        return
    record.audio_sec = round(timeline.samples / timeline.sample_rate, 3)
    record.underruns = timeline.underruns
    onset = watch.onset
    if onset is None or not record.sent_at:
        return
    heard = timeline.play_time(onset)
    record.ttfa_from_first_fragment_ms = round((heard - record.sent_at[0]) * 1000.0, 1)
    carrier = sentence_fragment(text, record.first_sentence or "", chars)
    if carrier is not None and carrier < len(record.sent_at):
        record.ttfa_from_sentence_ms = round((heard - record.sent_at[carrier]) * 1000.0, 1)


async def run_fragments(
    config: FragmentConfig, say: Callable[[str], None] = print, so_far: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Every text once, one after another; records and p50/p95/p99 of each figure. `so_far` is given
    `/health` before the run, each text's record as it ends, and the text being sent (`stopped_fragments`)."""
    so_far = {} if so_far is None else so_far
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    async with aiohttp.ClientSession(headers=headers, trace_configs=[no_redirects()]) as session:
        before = await health_before_run(session, config.base)
        if refused := unspoken(config.lang, before):
            raise refused
        await check_access(session, config.base, config.token is not None)
        records: list[dict[str, Any]] = so_far.setdefault("records", [])
        so_far["health"] = before  # the run begins
        for idx in range(len(config.texts)):
            so_far["sending"] = idx
            record = await stream_one(session, config, idx)
            say(f"text {idx}: ttfa from sentence {record.ttfa_from_sentence_ms} ms, error {record.error}")
            records.append(record.to_dict())
        after = await health_or_why_not(session, config.base)  # (a worker that died: `run_failed` says so)
    return fragments_result(config, before, after, records)


def stopped_fragments(
    config: FragmentConfig, so_far: dict[str, Any], stopped: KeyboardInterrupt
) -> dict[str, Any]:
    """The result of a run stopped midway (Ctrl-C, SIGTERM): the texts that had ended, no `/health` asked
    after it, and `interrupted` saying so (it wrote nothing, the texts measured lost)."""
    records = so_far["records"]
    result = fragments_result(config, so_far["health"], None, records)
    result["interrupted"] = (
        f"{how_stopped(stopped)[0].capitalize()} while sending text {so_far.get('sending', 0)}: the figures are"
        f" of the {len(records)} texts that had ended, of {len(config.texts)}"
    )
    return result


def fragments_result(
    config: FragmentConfig,
    before: dict[str, Any],
    after: dict[str, Any] | None,
    records: list[dict[str, Any]],
) -> dict[str, Any]:
    """The run's record: its config, `/health` before and after, each text's figures and their summary."""
    figures = ("ttfa_from_sentence_ms", "ttfa_from_first_fragment_ms", "server_ttfa_ms")
    ok = [r for r in records if r["error"] is None]
    summary: dict[str, Any] = {name: summarize(r[name] for r in ok) for name in figures}
    summary["errors"] = len(records) - len(ok)
    return {
        "config": config.public(),
        "health": before,
        "health_after": after,
        "summary": summary,
        "records": records,
    }


def fragments_markdown(result: dict[str, Any], command: str) -> str:
    config, summary = result["config"], result["summary"]
    lines = [
        f"# Streamed-text TTFA: {one_line(result['health'].get('backend'))} on "
        f"{one_line(result['health'].get('device'))}",
        "",
        f"`{command}`",
        "",
        f"{config['texts']} texts, {config['chars']} characters every {config['interval'] * 1000:g} ms, "
        f"errors: {summary['errors']}",
        "",
        "| figure (ms) | n | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("ttfa_from_sentence_ms", "ttfa_from_first_fragment_ms", "server_ttfa_ms"):
        row = summary[name]
        cells = [row["n"]] + [
            None if row[k] is None else round(row[k], 1) for k in ("p50", "p95", "p99", "max")
        ]
        lines.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    if stopped := result.get("interrupted"):  # a run stopped midway: its record read as a whole run's
        lines += ["", f"**Stopped before its end**: {one_line(str(stopped))}."]
    elif result["health_after"] is not None:  # (none asked after a stopped run)
        lines += lost_under_load_lines(result["health"], result["health_after"])  # as the load's record
    return printable_lines("\n".join(lines)) + "\n"  # a server's words run nothing in a terminal
