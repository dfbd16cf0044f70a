"""The job core: jobs of sections, their persisted event logs, and the scheduler that runs the engine.

Never imports aiohttp: the HTTP and WebSocket views sit on top of this package.
"""
