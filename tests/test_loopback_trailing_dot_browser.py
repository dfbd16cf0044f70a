"""A page opened at `http://localhost.:PORT` in a real browser (headless Chromium answers `localhost.`
with the loopback itself, as `localhost`): its reads of the worker, same-origin (`Host: localhost.:PORT`,
no `Origin`) and from another loopback port's page (`Origin: http://localhost.:PORT`), are answered.
The worker refused both (403) as it refuses a rebound name (tests/test_dns_rebinding.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from npu_worker.config import Settings
from tests.browser_support import chromium, require_chromium, serve_worker
from tests.test_dns_rebinding import READ, until_loaded
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.browser


def test_a_page_at_localhost_with_its_trailing_dot_reads_the_worker(settings: Settings) -> None:
    require_chromium()
    with serve_worker(settings, ToneEngine()) as worker, chromium() as browser:
        until_loaded(worker)
        port = urlsplit(worker.url).port
        page = browser.new_page()
        page.goto(f"http://localhost.:{port}/health")  # /health answers every name
        answers = page.evaluate(READ, ["/jobs", f"http://127.0.0.1:{port}/jobs"])
        assert [answer["status"] for answer in answers] == [200, 200], answers
