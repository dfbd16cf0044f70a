"""Time-to-first-audio and load benchmark: open-loop Poisson arrivals over /ws and HTTP /synth.

Measures what a listener hears: the audible onset (bench.onset) placed on a simulated playback
timeline of the chunks as they arrived. Talks to a worker over the wire only (loopback targets), so
it depends on nothing but `protocol`, `audio` and aiohttp. Entry: `npu-worker bench` (bench.cli).
"""

COMMAND_HELP = "open-loop TTFA/load benchmark against a running worker on this machine"
"""`npu-worker bench`'s line in `npu-worker -h`, here where the command line lists it without loading
the benchmark's modules (aiohttp, numpy), which every other command imported before."""
