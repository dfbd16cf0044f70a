"""The `/ws` channel: per-section events as JSON text frames and PCM as binary frames (PROTOCOL §6)."""

from .routes import close_sockets, setup_ws

__all__ = ["close_sockets", "setup_ws"]
