"""The one rule for a token that holds its header's scheme: pure, no imports, so the client (which talks
to the worker over the wire only and imports none of its modules' weight) and the worker's settings share it."""


def holds_bearer_scheme(token: str) -> bool:
    """`Bearer X` (an `Authorization` header's value pasted where the token alone belongs, any white space
    after `Bearer`): sent, it goes out as `Bearer Bearer X`, a 401 for every request. Refused alike by
    `serve`'s setting, --token-file, the client commands and the Python client."""
    scheme, *rest = token.split(None, 1)
    return scheme.lower() == "bearer" and bool(rest)
