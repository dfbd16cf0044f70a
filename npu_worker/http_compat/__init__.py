"""The v1 HTTP/NDJSON endpoints of PROTOCOL §2–5: thin views over the job core."""

from .routes import setup_http

__all__ = ["setup_http"]
