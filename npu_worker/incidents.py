"""An unexpected exception (a bug of ours) as a caller is told of it, on every surface alike.

The caller gets `InternalError` with an incident id, never the exception's class, message or frames
(they named the code's internals: `KeyError: 'voice'`, a file path); the worker's log holds the
traceback under the same id, so a caller's report finds it."""

from __future__ import annotations

import logging
import secrets

from .errors import InternalError, WorkerError


def internal_error(logger: logging.Logger, exc: BaseException, where: str, *args: object) -> WorkerError:
    """Log `exc` with its traceback under a new incident id (`where`: %-format of what failed) and
    return what the caller is told."""
    incident = secrets.token_hex(6)
    logger.error("internal error " + where + " (incident %s)", *args, incident, exc_info=exc)
    return InternalError(f"the worker failed unexpectedly (incident {incident}); its log holds the details")
