"""deploy/npu-worker.service passes `systemd-analyze verify` (no errors, no warnings).

The unit's ExecStart names the install path of docs/deploy.md (/opt/npu-worker/venv); verify insists the
binary exists, so the check runs on a copy whose ExecStart is this interpreter running the same command.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking
REPO = Path(__file__).resolve().parents[1]
UNIT = REPO / "deploy" / "npu-worker.service"
EXEC_START = "ExecStart=/opt/npu-worker/venv/bin/npu-worker serve"


def verify(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian package `systemd`, installed by .ci/run)")
    unit = tmp_path / "npu-worker.service"
    unit.write_text(text.replace(EXEC_START, f"ExecStart={sys.executable} -m npu_worker.cli serve"))
    return subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=seconds(60))


def test_the_unit_verifies_cleanly(tmp_path):
    text = UNIT.read_text()
    assert EXEC_START in text.splitlines()
    done = verify(text, tmp_path)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr


def test_verify_does_catch_a_broken_unit(tmp_path):
    """The check above can fail: a misspelt key is reported."""
    done = verify(UNIT.read_text().replace("TimeoutStopSec=", "TimeoutStopSecs="), tmp_path)
    assert "TimeoutStopSecs" in done.stderr


def test_the_stop_timeout_outlasts_the_shutdown_grace():
    """systemd must not SIGKILL a worker that is still letting its running section finish."""
    from npu_worker.config import Settings

    stop = int(re.search(r"^TimeoutStopSec=(\d+)$", UNIT.read_text(), re.M).group(1))
    assert stop > Settings().shutdown_grace + 5


def exposure(text: str, tmp_path: Path) -> float:
    """`systemd-analyze security`'s overall exposure of the unit (0 = locked down, 10 = none at all)."""
    verify(text, tmp_path)  # skips where systemd-analyze is missing; writes the runnable copy
    done = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(tmp_path / "npu-worker.service")],
        capture_output=True,
        text=True,
        timeout=seconds(60),
    )
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d)", done.stdout)
    assert found, done.stdout + done.stderr
    return float(found.group(1))


def test_the_unit_is_hardened(tmp_path):
    """No capabilities, namespaces, kernel modules or logs, exotic sockets or privileged system calls: the
    unit had only NoNewPrivileges and a read-only /usr and /etc (exposure 8.3, "EXPOSED")."""
    assert exposure(UNIT.read_text(), tmp_path) <= 3.0


def test_the_unit_keeps_the_npu_reachable():
    """Settings that would hide the NPU's device nodes stay out: PrivateDevices, and ProtectClock, which
    systemd before 253 turns into a device allow-list of the RTC alone (systemd issue 18142)."""
    keys = {line.split("=", 1)[0] for line in UNIT.read_text().splitlines() if "=" in line and line[0] != "#"}
    assert not keys & {"PrivateDevices", "ProtectClock", "DeviceAllow", "DevicePolicy", "PrivateUsers"}
