"""What a server on the bench's port says (its backend's name, its errors) reaches the operator's
terminal and the markdown report escaped: a control sequence in it runs nothing."""

from __future__ import annotations

import asyncio
import json

import pytest

from npu_worker.bench.cli import main as bench_main
from tests.test_bench_rogue_worker import HEALTH, rogue_worker

# a window title, a cleared screen, and the one-byte CSI (U+009B) that some terminals take as ESC [
EVIL = "x\x1b]0;PWNED\x07\x1b[2J\u009b31m"
CONTROLS = ("\x1b", "\x07", "\u009b")


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_servers_control_sequences_reach_no_terminal_and_no_report(tmp_path, capfd, mode: str):
    """The backend's name, the device and every error went out as sent: `\\x1b]0;` retitled the
    operator's terminal, `\\x1b[2J` cleared it, on stdout, stderr and in PREFIX.md."""
    if mode == "load":
        frame = {"event": "error", "idx": None, "error": f"Boom: {EVIL}"}
    else:
        frame = {"type": "error", "message": EVIL, "code": EVIL}
    health = {**HEALTH, "backend": EVIL, "device": EVIL}
    failed = {"status": "fail", "error": f"Bad: {EVIL}"}
    async for base in rogue_worker(health=health, ws_frame=json.dumps(frame), synth=failed):
        argv = ["bench", "--base", base, "--mode", mode, "--requests", "1", "--rps", "20"]
        argv += ["--duration", "0.2", "--timeout", "2", "--out", str(tmp_path / "r")]
        await asyncio.to_thread(bench_main, argv)
    out, err = capfd.readouterr()
    report = (tmp_path / "r.md").read_text(encoding="utf-8")
    recorded = (tmp_path / "r.json").read_text(encoding="utf-8")  # json escaped ESC, not U+009B
    assert json.loads(recorded)["health"]["backend"] == EVIL  # kept as sent, for whoever reads it
    for text in (out, err, report, recorded):
        assert not any(control in text for control in CONTROLS), repr(text)
    assert "x\\x1b]0;PWNED\\x07" in out and "\\x1b[2J" in report  # said, as escapes
    assert "x\\x1b]0;PWNED" in err  # the error words too


async def test_a_dollar_sign_in_the_backend_name_is_no_math_that_loses_the_plot(tmp_path, capfd):
    """matplotlib read `$...$` in the plot's title as mathtext: `$\\frac{$` (a name it cannot parse) was a
    ValueError out of the bench once the run had ended, a traceback and no PNG."""
    pytest.importorskip("matplotlib")
    health = {**HEALTH, "backend": "$\\frac{$", "device": "$x$"}
    failed = {"status": "fail", "error": "Bad: no"}
    async for base in rogue_worker(health=health, synth=failed):
        argv = ["bench", "--base", base, "--requests", "1", "--rps", "20", "--duration", "0.2"]
        argv += ["--timeout", "2", "--out", str(tmp_path / "r")]
        code = await asyncio.to_thread(bench_main, argv)
    assert code == 1  # no request succeeded: said, not raised
    assert (tmp_path / "r.png").stat().st_size > 0
    assert "backend `$" in (tmp_path / "r.md").read_text(encoding="utf-8")  # (its backslash escaped)


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_servers_line_breaks_add_no_lines_to_the_markdown(tmp_path, mode: str):
    """`printable_lines` kept a server's line breaks: a backend named `x\\n## Fake` (or an error's words)
    put a heading and table rows of the server's own into the report."""
    forged = "x\n## Forged\n| 1 | 2 |\r\n## Also"
    health = {**HEALTH, "backend": forged, "device": forged}
    frame = {"type": "error", "message": forged, "code": "Bad"}
    async for base in rogue_worker(
        health=health, ws_frame=json.dumps(frame), synth={"status": "fail", "error": forged}
    ):
        argv = ["bench", "--base", base, "--mode", mode, "--requests", "1", "--rps", "20"]
        argv += ["--duration", "0.2", "--timeout", "2", "--out", str(tmp_path / "r")]
        await asyncio.to_thread(bench_main, argv)
    report = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert not any(line.startswith(("## Forged", "| 1 |", "## Also")) for line in report.splitlines()), report
    assert "x\u2424## Forged\u2424| 1 | 2 |\u2424## Also" in report
