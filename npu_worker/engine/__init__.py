"""Text → audio chunks. Knows nothing of HTTP or jobs."""
