"""DNS rebinding, in a real browser: a page whose name resolves to the loopback worker is the worker's own
origin to the browser, and a same-origin GET carries no `Origin`; the worker refuses it by its `Host`."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import pytest

from npu_worker.config import Settings
from tests.browser_support import chromium, require_chromium, serve_worker
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.browser

REBOUND = "rebound.example"  # what an attacker's DNS answers with 127.0.0.1 after the page has loaded
READ = """async (paths) => {
    const answers = [];
    for (const path of paths) {
        const response = await fetch(path);
        answers.push({status: response.status, body: await response.text()});
    }
    return answers;
}"""


def until_loaded(worker: Any) -> None:
    """/health 200: the engine loaded and the kept jobs read (before, a submission is a 503 Loading,
    as a busy CI worker met it)."""
    deadline = time.monotonic() + seconds(30)
    while worker.health()[0] != 200:
        assert time.monotonic() < deadline, worker.health()
        time.sleep(0.05)


def submit_private_lecture(base: str) -> str:
    body = json.dumps({"sections": [{"idx": 0, "text": "비공개 강의 원고입니다."}], "stream": False}).encode()
    request = urllib.request.Request(
        f"{base}synth_batch", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=seconds(30)) as response:
        return str(json.loads(response.read())["job_id"])


@pytest.fixture(scope="module")
def rebinding_browser() -> Any:
    """Headless Chromium whose resolver answers REBOUND with the loopback, as the attacker's DNS does
    once the page has loaded; one for the module (each test opens its own page)."""
    require_chromium()
    with chromium([f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"]) as browser:
        yield browser


def read_from(page: Any, origin: str, paths: list[str]) -> list[dict[str, Any]]:
    page.goto(f"{origin}/health")  # any page of that origin; /health answers every name
    return list(page.evaluate(READ, paths))


def test_a_page_reached_through_a_rebound_name_cannot_read_jobs_or_audio(
    settings: Settings, rebinding_browser: Any
) -> None:
    with serve_worker(settings, ToneEngine()) as worker:
        until_loaded(worker)
        job_id = submit_private_lecture(worker.url)
        paths = ["/jobs", f"/jobs/{job_id}/result", f"/jobs/{job_id}/sections/0/audio"]
        page = rebinding_browser.new_page()
        port = urlsplit(worker.url).port

        rebound = read_from(page, f"http://{REBOUND}:{port}", paths)
        assert [answer["status"] for answer in rebound] == [403, 403, 403]
        for answer in rebound:
            assert "강의" not in answer["body"] and job_id not in answer["body"]
            assert json.loads(answer["body"])["error"].startswith("OriginNotAllowed: host ")

        loopback = read_from(page, f"http://127.0.0.1:{port}", paths)  # the worker's own names still work
        assert [answer["status"] for answer in loopback] == [200, 200, 200]
        assert job_id in loopback[0]["body"]


def test_with_a_token_the_host_is_not_checked_the_token_is(
    settings: Settings, rebinding_browser: Any
) -> None:
    with serve_worker(settings.replace(token="s3cret"), ToneEngine()) as worker:
        until_loaded(worker)
        page = rebinding_browser.new_page()
        port = urlsplit(worker.url).port
        answers = read_from(page, f"http://{REBOUND}:{port}", ["/jobs", "/jobs?token=s3cret"])
        assert [answer["status"] for answer in answers] == [401, 200]
