"""Deadlines on an espeak child's answers: a child that does not answer in time (stopped by SIGSTOP, a
hung host) is killed, so whoever waits on its pipe gets its end (an `EngineError`), never a wait for ever.

Why a thread: the waiting side blocks in a `read` of the child's pipe (or a `write` to a full one),
which has no timeout of its own. The project's one deadline thread (`deadline_thread.Watchdog`, the sync
client's too: a heap under a lock, woken only by a deadline nearer than the one it sleeps until, a
raising action logged and the thread living on, none in a forked child) serves them, an instance of
its own; an action must not block (a kill).
"""

from __future__ import annotations

from ..deadline_thread import Watchdog

DEADLINES = Watchdog("espeak-deadlines")
