"""The job core: jobs of sections and their event logs, admitted, run on the engine thread, journaled,
kept for a while and removed (see docs/architecture.md for the map).

Never imports aiohttp: the HTTP and WebSocket views sit on top of this package.
"""
