"""Turns raw request records into per-rate percentiles, and writes them as JSON, markdown and a PNG."""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
import platform
import sys
from pathlib import Path
from typing import Any

from npu_worker.bench.load import LoadConfig, lost_under_load_lines
from npu_worker.bench.report_files import check_ours, write_file
from npu_worker.bench.stats import summarize
from npu_worker.cli_progress import printable_json
from npu_worker.printable import one_line, printable_lines

# (record field, column title) of every latency figure summarised per rate.
METRICS = (
    ("sched_lag_ms", "scheduling lag"),
    ("ttfb_ms", "TTFB"),
    ("first_chunk_ms", "first playable chunk"),
    ("ttfa_ms", "audible TTFA"),
    ("leading_silence_ms", "leading silence"),
    ("e2e_ms", "end-to-end"),
    ("rtf", "RTF (elapsed / audio s)"),
    ("server_ttfa_ms", "server-reported TTFA"),
    ("underrun_ms", "underrun time"),
    (
        "overhead_ms",
        "TTFA − engine alone (first audible chunk for ws, whole wav and its leading silence for http)",
    ),
)


def _overhead(record: dict[str, Any], baseline: dict[str, Any] | None) -> float | None:
    """Audible TTFA minus what the engine alone needs before the same text can start playing (in-process):
    its first audible chunk for a stream (/ws), the whole wav for a file (/synth). A file's leading
    silence is left out too: the worker trims none (only a preview's first section), so it is the
    engine's own (up to 50 ms of espeak-ng's, counted as the server's)."""
    if not baseline or record.get("ttfa_ms") is None:
        return None
    http = record["transport"] == "http"
    per_text = baseline.get("per_text_whole_ms" if http else "per_text_first_audible_ms") or []
    idx = record["text_idx"]
    if idx >= len(per_text) or per_text[idx] is None:
        return None
    silence = float(record.get("leading_silence_ms") or 0.0) if http else 0.0
    return float(record["ttfa_ms"]) - silence - float(per_text[idx])


def summarize_runs(
    records: list[dict[str, Any]], baseline: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One row per (transport, rate) in run order: counts, and percentiles of the successful requests."""
    groups: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record["transport"], record["rate"]), []).append(record)
    rows = []
    for (transport, rate), group in groups.items():
        ok = [r for r in group if not r.get("error")]
        for r in ok:
            r["overhead_ms"] = _overhead(r, baseline)
        errors = sorted({str(r["error"]) for r in group if r.get("error")})
        span = max((r["scheduled_s"] for r in group), default=0.0)
        rows.append(
            {
                "transport": transport,
                "rate": rate,
                "sent": len(group),
                "ok": len(ok),
                "errors": len(group) - len(ok),
                "timeouts": sum(1 for r in group if r.get("timeout")),
                "cached": sum(1 for r in ok if r.get("cached")),
                "no_onset": sum(1 for r in ok if r.get("ttfa_ms") is None),
                "underrun_requests": sum(1 for r in ok if r.get("underruns")),
                "underruns": sum(int(r.get("underruns") or 0) for r in ok),
                "offered_span_s": span,
                "metrics": {name: summarize(r.get(name) for r in ok) for name, _ in METRICS},
                "error_samples": errors[:3],
            }
        )
    return rows


def build_report(
    result: dict[str, Any],
    config: LoadConfig,
    command: str,
    started: str,
    baseline: dict[str, Any] | None,
    note: str | None,
    load_at_start: list[float] | None = None,
) -> dict[str, Any]:
    return {
        "command": command,
        "started_at": started,
        "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(note, load_at_start),
        "config": config.public(),
        "health": result["health"],
        "health_after": result["health_after"],
        "engine_baseline": baseline,
        "summary": summarize_runs(result["records"], baseline),
        "records": result["records"],
    }


def load_average() -> list[float] | None:
    """1/5/15-minute load averages: on a shared machine they say how much else was running."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine_info(note: str | None, load_at_start: list[float] | None = None) -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_average_start": load_at_start,
        "load_average_end": load_average(),
        "note": note,
    }


def _ms(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.0f}"


def _row(row: dict[str, Any]) -> str:
    m = row["metrics"]
    cells = [
        f"{row['rate']:g}",
        f"{row['sent']}",
        f"{row['errors']}" + (f" ({row['timeouts']} t/o)" if row["timeouts"] else ""),
        _ms(m["sched_lag_ms"]["p50"]),
        _ms(m["ttfb_ms"]["p50"]),
        _ms(m["first_chunk_ms"]["p50"]),
        _ms(m["ttfa_ms"]["p50"]),
        _ms(m["ttfa_ms"]["p95"]),
        _ms(m["ttfa_ms"]["p99"]),
        _ms(m["ttfa_ms"]["max"]),
        _ms(m["leading_silence_ms"]["p50"]),
        _ms(m["e2e_ms"]["p50"]),
        _ms(m["e2e_ms"]["p95"]),
        "–" if m["rtf"]["p50"] is None else f"{m['rtf']['p50']:.3f}",
        f"{row['underrun_requests']}/{row['ok']} ({_ms(m['underrun_ms']['max'])} ms max)",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| rate /s | sent | errors | lag p50 | TTFB p50 | 1st chunk p50 | **TTFA p50** | TTFA p95 | TTFA p99 | TTFA max "
    "| lead silence p50 | e2e p50 | e2e p95 | RTF p50 | underruns (req) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)
TITLES = {"ws": "WebSocket /ws (streaming preview)", "http": "HTTP /synth (whole wav, for comparison)"}


def _loads(machine: dict[str, Any]) -> str:
    start, end = machine.get("load_average_start"), machine.get("load_average_end")
    shown = f"{start[0]:g} at start, " if start else ""
    return shown + (f"{end[0]:g} at end (1 min)" if end else "unknown at end")


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: its header, a table per transport with notes on what the columns leave
    out, what the server adds, the worker's state after the run and the errors seen."""
    lines = _header_lines(report)
    for transport in ("ws", "http"):
        rows = [r for r in report["summary"] if r["transport"] == transport]
        if rows:
            lines += ["", f"## {TITLES[transport]}", "", HEADER, *map(_row, rows)]
            notes = _left_out_notes(rows)
            lines += [""] * bool(notes) + notes
    lines += _overhead_lines([r for r in report["summary"] if r["metrics"]["overhead_ms"]["n"]])
    health_said = report.get("health") or {}
    if gone := (report.get("health_after") or {}).get("unreachable"):
        lines += [
            "",
            f"**The worker could not be reached after the run** ({gone}): it may have died under it.",
        ]
    elif after := report.get("health_after"):
        # restarted or failed under the load: the command ends with exit 1, and the record said nothing
        # (a report from before `health_after` was recorded, rerendered, has none to compare)
        lines += lost_under_load_lines(health_said, after)
    errors = [(r["transport"], r["rate"], e) for r in report["summary"] for e in r["error_samples"]]
    if errors:
        lines += ["", "Errors seen: " + "; ".join(f"{t} {rate:g}/s: {one_line(e)}" for t, rate, e in errors)]
    return printable_lines("\n".join(lines)) + "\n"  # a server's words run nothing in a terminal


def _header_lines(report: dict[str, Any]) -> list[str]:
    """The title (the worker's backend and device), the command, the run, the machine, how figures read."""
    health = {k: one_line(v) for k, v in (report.get("health") or {}).items()}  # a server's words
    engine = ", ".join(
        f"{k} `{health.get(k)}`" for k in ("backend", "device", "model", "precision") if k in health
    )
    lines = [
        f"# TTFA under load: {health.get('backend', '?')} on {health.get('device', '?')}",
        "",
        f"Command: `{report['command']}`  ",
        f"Run: {report['started_at']} → {report['finished_at']}; engine: {engine}  ",
        f"Machine: {report['machine']['platform']}, {report['machine']['cpu_count']} CPUs"
        + (f"; load average {_loads(report['machine'])}" if report["machine"].get("load_average_end") else "")
        + (f"; {report['machine']['note']}" if report["machine"].get("note") else ""),
        "",
        "Milliseconds from each request's scheduled moment (open-loop Poisson arrivals). Audible TTFA: the first "
        "sustained audible sample (20 ms RMS windows, 10 ms hop, DC removed, ≥ −45 dBFS for 2 windows; clicks "
        "excluded) on a simulated playback timeline that starts with the first chunk. RTF = elapsed / audio "
        "seconds (lower is faster). Percentiles by nearest rank.",
    ]
    if stopped := report.get("interrupted"):  # a run stopped midway: its record read as a whole run's
        lines += ["", f"**Stopped before its end**: {one_line(str(stopped))}."]
    return lines


def _left_out_notes(rows: list[dict[str, Any]]) -> list[str]:
    """What a transport's columns leave out, said beside them: failed requests (an overloaded run's p95
    read as every request's, its timeouts left out), silent answers, answers from the cache."""
    return (
        [
            f"At {r['rate']:g}/s, {r['errors']} of {r['sent']} requests failed ({r['timeouts']} timed out): "
            f"left out of every column, whose figures are of the {r['ok']} that succeeded.  "
            for r in rows
            if r["errors"]
        ]
        + [
            f"At {r['rate']:g}/s, {r['no_onset']} of {r['ok']} successful requests had no audible onset "
            "(silence only): left out of the TTFA columns.  "
            for r in rows
            if r["no_onset"]
        ]
        + [
            f"At {r['rate']:g}/s, {r['cached']} of {r['ok']} successful requests were answered from the "
            "worker's cache: their figures are the cache's (a rerun with the same --seed; start the worker "
            "with --cache-max-bytes 0).  "
            for r in rows
            if r["cached"]
        ]
    )


def _overhead_lines(overhead: list[dict[str, Any]]) -> list[str]:
    """The table of what the server adds over the engine alone, where the run measured it."""
    if not overhead:
        return []
    lines = [
        "",
        "## What the server adds",
        "",
        "Audible TTFA minus the engine's own time for the same text, in-process on the same machine: to its "
        "first audible chunk for /ws (early first segment on), to the whole wav for /synth (off), as the "
        "scheduler runs them, and for /synth the wav's leading silence is the engine's (a file is not "
        "trimmed): left out. What remains at low load is the server's own cost (plus, for /ws, the 10 ms of "
        "silence it keeps before the onset); growth with load is queueing.",
        "",
        "| transport | rate /s | p50 | p95 | max |",
        "|---|---|---|---|---|",
    ]
    for r in overhead:
        o = r["metrics"]["overhead_ms"]
        lines.append(
            f"| {r['transport']} | {r['rate']:g} | {_ms(o['p50'])} | {_ms(o['p95'])} | {_ms(o['max'])} |"
        )
    return lines


PLOT_HINT = "no plot written: matplotlib is not installed (pip install '.[bench]' in the npu-worker checkout for the PNG)"


def can_plot() -> bool:
    """matplotlib is only in the [bench] extra; without it the JSON and markdown are still written."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_plot(report: dict[str, Any], path: Path) -> None:
    """TTFA p50/p95/p99 against offered load, one colour per transport."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=120)
    styles = {"p50": "-", "p95": "--", "p99": ":"}
    for transport, colour in (("ws", "tab:blue"), ("http", "tab:orange")):
        rows = [r for r in report["summary"] if r["transport"] == transport and r["metrics"]["ttfa_ms"]["n"]]
        for name, style in styles.items():
            if rows:
                xs = [r["rate"] for r in rows]
                ys = [r["metrics"]["ttfa_ms"][name] for r in rows]
                axes.plot(xs, ys, style, color=colour, marker="o", label=f"{transport} {name}")
    health = report.get("health") or {}
    values = [
        r["metrics"]["ttfa_ms"][n] for r in report["summary"] for n in styles if r["metrics"]["ttfa_ms"][n]
    ]
    if values and max(values) > 20 * min(values):
        axes.set_yscale("log")  # a loaded worker's p99 is orders of magnitude above an idle one's p50
    title = f"Audible TTFA vs load — {health.get('backend', '?')} on {health.get('device', '?')}"
    # parse_math off: a `$...$` in a server's backend name was mathtext, and one it cannot parse
    # (`$\\frac{$`) a ValueError in savefig, the run's plot lost after the run
    axes.set_title(printable_lines(title), parse_math=False)
    axes.set_xlabel("offered load (requests/s, Poisson)")
    axes.set_ylabel("audible TTFA (ms)")
    axes.grid(True, alpha=0.3)
    if values:  # a run in which no request succeeded has no lines to name
        axes.legend(fontsize=8)
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png")
    plt.close(figure)
    write_file(path, image.getvalue())


def write_report(report: dict[str, Any], prefix: Path) -> list[Path]:
    """PREFIX.json, PREFIX.md and, with matplotlib, PREFIX.png (blocking: call from a thread or outside
    the event loop). Returns the paths written."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = [Path(f"{prefix}.json"), Path(f"{prefix}.md")]  # not with_suffix: `--out run.v2` keeps its .v2
    write_file(paths[0], printable_json(report).encode("utf-8"))  # json leaves U+009B (a CSI) raw
    write_file(paths[1], markdown(report).encode("utf-8"))
    if can_plot():
        paths.append(Path(f"{prefix}.png"))
        write_plot(report, paths[2])
    return paths


def rerender(json_path: Path) -> list[Path]:
    """Rewrite the markdown and PNG of a recorded run from its JSON (after a change of layout), by
    `bench`'s own rule (`check_ours`: a folder another user owns or could re-point is refused; it was
    written in, where `bench` refuses it before its run)."""
    prefix = json_path.with_suffix("") if json_path.suffix == ".json" else json_path
    # not with_suffix: `run.v2.json`'s are run.v2.md and .png (it overwrote another run's run.md)
    paths = [Path(f"{prefix}.md"), Path(f"{prefix}.png")]
    check_ours(prefix, (".md", ".png"))
    report = json.loads(json_path.read_text(encoding="utf-8"))
    try:  # (made before any file is written: a JSON of another shape leaves the folder as it was)
        text = markdown(report)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"not a bench run's report ({type(exc).__name__}: {exc})") from None
    write_file(paths[0], text.encode("utf-8"))
    if not can_plot():
        print(PLOT_HINT)
        return paths[:1]
    write_plot(report, paths[1])
    return paths


def main(names: list[str]) -> int:
    """`python -m npu_worker.bench.report RUN.json ...`: each run rerendered; one refused (or unreadable)
    is one line on stderr and exit status 2, as `bench` says it, not a traceback."""
    status = 0
    for name in names:
        try:
            print(*rerender(Path(name)))
        except (OSError, ValueError) as exc:
            where = getattr(exc, "filename", None) or name
            print(
                printable_lines(f"cannot rerender {name}: {where}: {getattr(exc, 'strerror', None) or exc}"),
                file=sys.stderr,
            )
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
