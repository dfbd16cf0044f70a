"""A node's stable name in the cluster: kept in its state dir, so a restart re-joins as the same
consumer (its pending work, its `ready` stream and the jobs it accepted are still its own).

Apart from the scheduler because it is the one thing a node keeps on its disk about the cluster.
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path


def stable_node_name(state_dir: Path) -> str:
    """The name in `<state_dir>/node-id`, made (host name and a random suffix) and kept when absent.
    Blocking: off the loop."""
    path = state_dir / "node-id"
    node = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    if not node:  # absent, or empty (a crash while it was written): two such nodes were one consumer
        node = f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        temp = path.with_name("node-id.tmp")
        temp.write_text(node + "\n", encoding="utf-8")
        os.replace(temp, path)  # whole or not there
    return node
