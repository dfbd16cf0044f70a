"""The OpenAI-compatible speech API (and vLLM-Omni's extensions): one more thin view over the job core."""

from .routes import setup_openai

__all__ = ["setup_openai"]
