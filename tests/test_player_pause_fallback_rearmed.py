"""A Pause, a Resume within its fade, and a later Pause, in real headless Chromium against a real worker
with the tone engine: the Resume calls off the first fade's `paused-quiet`, so the first Pause's wait
ends only at its 250 ms fallback, and a later Pause shared that wait. Its fallback, counted from the
first Pause, could fire just after the later one: the context was suspended before the later fade had
played (a click). Each Pause now counts the fallback from itself.

The page's 250 ms timers are held in a table here, not armed: the test fires the ones armed before
the later Pause at once (the first Pause's fallback running out just then), without the clock."""

from __future__ import annotations

from typing import Any

from tests.player_support import wait_for
from tests.tone_engine import ToneEngine

HELD_FALLBACKS = """
window.heldFallbacks = new Map();
let heldIds = 0;
const setTimeoutBefore = window.setTimeout;
const clearTimeoutBefore = window.clearTimeout;
window.setTimeout = (callback, delay, ...rest) => {
  if (delay !== 250) return setTimeoutBefore(callback, delay, ...rest);
  window.heldFallbacks.set(`held-${++heldIds}`, () => callback(...rest));
  return `held-${heldIds}`;
};
window.clearTimeout = (id) => (window.heldFallbacks.delete(id) ? undefined : clearTimeoutBefore(id));
"""
PLAYER = (
    "(await import(new URL('./state.js', document.querySelector('script[type=module]').src))).state.player"
)


def test_a_later_pause_waits_for_its_own_fade_not_the_first_pauses_fallback(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine(), open_page=False)
    page.add_init_script(HELD_FALLBACKS)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "가나다라 " * 25)
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 7200")  # 0.3 s sounded
    order = page.evaluate(
        f"""async () => {{
          const player = {PLAYER};
          const order = [];
          const onReport = player.onReport.bind(player);
          player.onReport = (report) => {{
            if (report.type === "paused-quiet") order.push("quiet");
            onReport(report);
          }};
          const suspend = player.context.suspend.bind(player.context);
          player.context.suspend = () => {{ order.push("suspend"); return suspend(); }};
          player.pause();
          await player.resume();
          const armedBefore = [...window.heldFallbacks.keys()];
          const later = player.pause();
          for (const id of armedBefore) {{
            const fire = window.heldFallbacks.get(id);  // (still armed: the first Pause's, running out now)
            window.heldFallbacks.delete(id);
            fire?.();
          }}
          const ended = later.then(() => "ended");
          await Promise.race([ended, new Promise((r) => setTimeout(r, 10000, "not ended"))]);
          return order;
        }}"""
    )
    # Suspended (by both Pauses, which share the wait) once the later Pause's fade has played.
    assert order[:1] == ["quiet"] and set(order[1:]) == {"suspend"}, order
    wait_for(page, "s.paused === true")
    assert console.errors == []
