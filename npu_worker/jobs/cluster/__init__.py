"""Several workers sharing jobs through Redis Streams (`--queue redis://HOST:PORT/DB`)."""
