"""The SimPy engine: one SimPy process per transaction, stepping through the model's handlers.

A transaction's process calls `sim.model.step.step` at each of its catalog effect points and sleeps
(`env.timeout`) for the delay the handler returns; the arrivals process does the same with
`sim.model.arrivals`. The engine holds no protocol logic: read the handlers against docs/MODEL.md, and use this
engine to step through them (`--engine simpy`). It gives the same results as the fast engine, bit for bit.

Interpreted, the handlers run on a view of the run's `Model` made of Python numbers: its one-dimensional arrays
are lists, and the per-transaction columns numpy arrays of dtype object. Python ints and floats compute exactly
what numpy's scalars do (IEEE doubles, 64-bit ints that never overflow here), at a fraction of the cost: a
numpy scalar costs 2-3x a Python number per operation, and an int64 scalar plus a float about 5 us. The history
buffers stay the run's own arrays. What the handlers write is copied back into the run's arrays before a
refill and at the end, the only times anything outside the model reads them (a refill also hands out finished
transactions' records and frees their slots, so the view is rebuilt after it). This halved the engine's time
on the benchmark configuration (s3, 1 table, 90/10, 200 ms).
"""
from __future__ import annotations

import simpy

from ..model import arrivals
from ..model.step import step
from ..model.draws import events_before_refill, needs
from ..model.layout import PC_DONE, ST_STOP, TI_PC, Model
from .base import EngineBase

_OBJECTS = ("tx_i", "tx_f")         # per transaction: numpy arrays of Python numbers (dtype object)
_LISTS = tuple(f for f in Model._fields if f not in _OBJECTS + ("H_i", "H_f"))
_STATE = ("st", "cur", "versions", "sf", "bk_tokens", "bk_last", "bk_head", "bk_prev", "free")   # handlers write


class SimPyEngine(EngineBase):

    def run(self) -> "SimPyEngine":
        env = self.env = simpy.Environment()
        self._safe = 0
        self._view()
        self.stop = env.event()
        env.process(self._arrivals())
        watchdog = env.timeout(self.watchdog_ms)
        watchdog.callbacks.append(self._stop)
        env.run(until=self.stop)
        self._write_back()
        self.r.finish(env.now)
        return self

    def _view(self, before: dict | None = None) -> None:
        """Build the view of the run's arrays (`before`: the arrays of the view being refreshed after a refill;
        lists of arrays not replaced since are kept, the state is taken from the arrays it was copied to)."""
        m = self.r.m
        view = {f: getattr(self.m, f) if before is not None and before[f] is getattr(m, f) and f not in _STATE
                else getattr(m, f).tolist() for f in _LISTS}
        view.update({f: getattr(m, f).astype(object) for f in _OBJECTS})
        self.m = m._replace(**view)

    def _write_back(self) -> None:
        """Copy what the handlers wrote into the run's arrays (a refill hands out finished records, frees slots)."""
        for f in _STATE + _OBJECTS:
            getattr(self.r.m, f)[:] = getattr(self.m, f)

    def _stop(self, _event=None):
        if not self.stop.triggered:
            self.stop.succeed()

    def _model(self):
        """The model's view, refilled first if the next event could run short of draws."""
        if self._safe > 0:
            self._safe -= 1
            return self.m
        need = needs(self.m)
        if need:
            r = self.r
            self._write_back()
            before = {f: getattr(r.m, f) for f in _LISTS}
            r.refill(need)
            self._view(before)
        self._safe = events_before_refill(self.m)
        return self.m

    def _arrivals(self):
        env = self.env
        while True:
            yield env.timeout(arrivals.next_arrival(self.m, env.now))
            j = arrivals.on_arrival(self._model(), env.now)
            if j < 0:
                break
            env.process(self._txn(j))
        if self.m.st[ST_STOP]:
            self._stop()

    def _txn(self, j: int):
        env = self.env
        while True:
            m = self._model()
            delay = step(m, j, env.now)
            if m.tx_i[j, TI_PC] == PC_DONE:
                if m.st[ST_STOP]:
                    self._stop()
                return
            yield env.timeout(delay)
