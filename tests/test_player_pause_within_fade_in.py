"""A Pause while the sound still fades back in after a Resume, in real headless Chromium against a real
worker with the tone engine: the pause's fade-out began at full gain where the fade-in had reached a
part of it, a step up (a click). A Resume within a pause's fade lets that fade end first, so the
fade-in then starts inside a render quantum and runs into the next, where a Pause can meet it.

The worklet's 5 ms fades are stretched to 0.6 s here (its source rewritten as the page adds it, the
page's security policy left off so that it takes the copy), and Pause and Resume are told to the
worklet itself (the page's Pause would suspend the context on its 250 ms fallback, mid-fade), so a
Pause lands inside a fade-in by the frames played, not by the clock."""

from __future__ import annotations

from typing import Any

from tests.player_support import wait_for
from tests.test_player_played_pcm import TAP
from tests.test_player_rebuffer_fades import TEXT, assert_no_click, recorded
from tests.tone_engine import ToneEngine

FADE_FRAMES = 14_400  # 0.6 s at the tone engine's 24 kHz
PLAYED = "window.npuPlayer.snapshot().figures.playedFrames"
TELL = """async (paused) => {
  const modules = await import(new URL('./state.js', document.querySelector('script[type=module]').src));
  for (const value of paused) modules.state.player.node.port.postMessage({ type: "paused", paused: value });
}"""
STRETCH_FADES = """
const addModuleBefore = AudioWorklet.prototype.addModule;
AudioWorklet.prototype.addModule = async function (url, options) {
  const source = await (await fetch(url)).text();
  if (!source.includes("const FADE_SECONDS = 0.005;")) throw new Error("the worklet's fade moved");
  const stretched = source.replace("const FADE_SECONDS = 0.005;", "const FADE_SECONDS = 0.6;");
  const blob = new Blob([stretched], { type: "text/javascript" });
  return addModuleBefore.call(this, URL.createObjectURL(blob), options);
};
"""


def without_csp(route: Any) -> None:
    response = route.fetch()
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-security-policy"}
    route.fulfill(response=response, headers=headers)


def test_a_pause_within_the_fade_in_fades_out_from_where_it_was(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine(), open_page=False)
    page.route(worker.url, without_csp)  # (the page alone: its policy takes no blob: worklet)
    page.add_init_script(STRETCH_FADES)
    page.add_init_script(TAP)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", TEXT * 4)
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 24000")  # 1 s sounded: more than a fade is queued
    rounds_began = len(recorded(page))  # (a fade stretched past what is queued at the start is no concern)
    for _ in range(3):  # three rounds: each meets the tone at its own phase
        before = page.evaluate(f"() => {PLAYED}")
        page.evaluate(TELL, [True, False])  # the pause's fade plays on, then the sound fades back in
        # Past the pause's fade (its frames taken at once) and a third into the fade-in: a Pause there.
        wait_for(page, f"s.figures.playedFrames > {before + FADE_FRAMES + FADE_FRAMES // 3}")
        page.evaluate(TELL, [True, False])
    wait_for(page, "s.run.running === false && s.run.audioDrained === true", timeout=60)
    assert_no_click(recorded(page)[rounds_began:])
    assert console.errors == []
