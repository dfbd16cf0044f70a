"""What a load run had measured when it was stopped (Ctrl-C, SIGTERM, SIGHUP): a run of minutes lost
every figure, the requests already answered with the rest, and ended with no report at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from npu_worker.bench.measure import RequestRecord
from npu_worker.held_signals import how_stopped


@dataclass
class RunSoFar:
    """Filled by `load.run_load` as it goes: `/health` before the run (None: the run had not begun), each
    request as it ends, how many were sent, and which transport and rate was being loaded."""

    health: dict[str, Any] | None = None
    ended: list[tuple[int, RequestRecord]] = field(default_factory=list)  # (its run's number, record)
    sent: int = 0
    runs: int = 0  # runs begun, one per transport and rate
    loading: str = ""

    def begin(self, transport: str, rate: float) -> None:
        self.runs += 1
        self.loading = f"{transport} at {rate:g}/s"

    def result(self) -> dict[str, Any]:
        """`run_load`'s result of the requests that had ended; `/health` after the run is not asked."""
        ordered = sorted(self.ended, key=lambda ended: (ended[0], ended[1].index))  # as a whole run's
        return {"health": self.health, "health_after": None, "records": [r.to_dict() for _, r in ordered]}

    def why_partial(self, stopped: KeyboardInterrupt) -> str:
        """The report's `interrupted` line: what stopped it, where, and what its figures leave out."""
        cut = self.sent - len(self.ended)
        return (
            f"{how_stopped(stopped)[0].capitalize()} while loading {self.loading}: the figures are of the {len(self.ended)} requests that had"
            f" ended; {cut} in flight were cut and are not counted, and what was still to load was not run"
        )
