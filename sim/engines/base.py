"""What both engines share around the model: the run's arrays, the end of the run, the frames."""
from __future__ import annotations

from ..config import Config, run_window
from ..model.build import Run
from .. import records


class EngineBase:
    """One replication of one configuration. `run()` simulates; then `records_frame()`, `history_frame()`."""

    def __init__(self, cfg: Config, replication: int = 0, record_history: bool = False, *, sink=None,
                 slots: int | None = None):
        """`sink`: where finished transactions' records go (`sim.sink`; default: kept in memory); `slots`: see
        `sim.model.build.Run`."""
        self.cfg = cfg
        from ..sink import MemorySink
        from ..model.sources import expected_arrivals
        sink = MemorySink(expected_arrivals(cfg) + 1) if sink is None else sink
        self.r = Run(cfg, replication, record_history, sink, slots=slots)
        self.window = self.r.window
        self.watchdog_ms = run_window(cfg)[0] + cfg.drain_limit_ms   # the drain limit bounds the run

    @property
    def end_ms(self) -> float:
        return self.r.end_ms

    def records_frame(self):
        """One row per transaction (`sim.records.RECORD_COLUMNS`), in transaction-id order."""
        return records.records_frame(self.r)

    def history_frame(self):
        """The recorded history (docs/FORMATS.md), in processing order, or None if not recorded."""
        return records.history_frame(self.r)
