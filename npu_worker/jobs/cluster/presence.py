"""A node's presence in Redis that needs no write: a subscription it holds on a channel of its own
(`presence_channel`) for as long as its process lives, which `PUBSUB NUMSUB` (a read: a replica and a
full Redis answer it) tells the others.

While Redis refuses every write no beat is written, so the view counted every node heard before the
refusals began as alive until they ended: one that died meanwhile too (its sections waited for it), and a
node whose refusals began later than its peers' (started during them) counted them out from its own start.
A node's beat says it holds a subscription unless Redis refused it (`Refused`, the beat's `presence`):
a peer counts a node by NUMSUB only where its last beat said so, else as before (heard within 5 s of when
the refusals began). A node whose user may not SUBSCRIBE to its channel (an ACL allowing `&npu:cancel`
alone) or one of an older release (a rolling upgrade) holds none, and NUMSUB's 0 counted it out 5 s in.
Apart from the heartbeat: a loop of its own (`hold_presence`) and one read (`present`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from redis.exceptions import ResponseError

from .keys import P
from .outage import REDIS_DOWN, reraise_if_cancelling

log = logging.getLogger(__name__)
REFUSED_RETRY_SECONDS = 60.0  # a subscription Redis refused (an ACL) tried again after this long
CHECK_SECONDS = 5.0  # how often a node reads its own presence where it reads Redis (`_held_where_read`)


def presence_channel(node: str) -> str:
    return f"{P}alive:{node}"


class Refused:
    """Whether Redis refused the node's subscription at its last try (`now`): its beat then says no
    `presence`. (A lost connection is no refusal: the loop subscribes again at once.)"""

    def __init__(self) -> None:
        self.now = False


async def hold_presence(
    own_reads: Any, node: str, refused: Refused | None = None, checked_by: Any = None
) -> None:
    """The node's subscription, held for good (one of `own_reads`' connections), made again after Redis
    was away; nothing is published there: the read only notices a lost connection. A refusal (an ACL
    without SUBSCRIBE: NOPERM) is one WARNING and a try a minute, never the node's failure. Made again
    too where `checked_by` (the client its view reads with) does not see it (`_held_where_read`)."""
    said, refused = False, refused or Refused()
    while True:
        try:
            async with own_reads.pubsub() as pubsub:
                await pubsub.subscribe(presence_channel(node))
                checked = time.monotonic()
                while True:
                    reraise_if_cancelling()
                    await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    refused.now = False  # (its confirmation read, or a refusal raised)
                    if checked_by is not None and time.monotonic() - checked >= CHECK_SECONDS:
                        checked = time.monotonic()
                        if not await _held_where_read(checked_by, node):
                            break
        except REDIS_DOWN:
            reraise_if_cancelling()
            await asyncio.sleep(0.5)
        except ResponseError as exc:
            refused.now = True
            if not said:
                log.warning("node %s: Redis refused its presence (%s); peers count it by its beat", node, exc)
            said = True
            await asyncio.sleep(REFUSED_RETRY_SECONDS)


async def _held_where_read(reads: Any, node: str) -> bool:
    """The node's subscription is seen where it reads Redis (`present`; an ACL refusing PUBSUB: assumed).
    After a failover behind a DNS name its commands follow the name (`pools.py`: a connection answered
    READONLY is dropped) but the subscription, which is answered nothing, stayed on the demoted master:
    where its peers read NUMSUB it was 0, and every node counted out once that Redis refused writes."""
    if await present(reads, [node]) != set():
        return True
    log.info("node %s: its presence is not where Redis is read (a failover?); subscribing again", node)
    return False


async def present(redis: Any, nodes: Sequence[str]) -> set[str] | None:
    """Those of `nodes` whose process holds its subscription now; None where Redis answers PUBSUB with an
    error (an ACL without it): the caller counts as it did without."""
    if not nodes:
        return set()
    try:
        counts = await redis.pubsub_numsub(*(presence_channel(node) for node in nodes))
    except ResponseError:
        return None
    return {node for node, (_, count) in zip(nodes, counts, strict=True) if int(count) > 0}
