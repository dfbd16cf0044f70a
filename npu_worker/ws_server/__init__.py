"""The `/ws` channel: per-section events as JSON text frames and PCM as binary frames (PROTOCOL §6)."""

from .routes import setup_ws

__all__ = ["setup_ws"]
