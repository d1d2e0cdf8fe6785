"""The SimPy engine: one SimPy process per transaction, stepping through the model's handlers.

A transaction's process calls `sim.model.step.step` at each of its catalog effect points and sleeps
(`env.timeout`) for the delay the handler returns; the arrivals process does the same with
`sim.model.arrivals`. The engine holds no protocol logic: read the handlers against docs/MODEL.md, and use this
engine to step through them (`--engine simpy`). It gives the same results as the fast engine, bit for bit.
"""
from __future__ import annotations

import simpy

from ..model import arrivals
from ..model.step import step
from ..model.draws import events_before_refill, max_gets_per_event, needs
from ..model.layout import PC_DONE, ST_STOP, TI_PC
from .base import EngineBase


class SimPyEngine(EngineBase):

    def run(self) -> "SimPyEngine":
        env = self.env = simpy.Environment()
        self._safe = 0
        self.stop = env.event()
        env.process(self._arrivals())
        watchdog = env.timeout(self.watchdog_ms)
        watchdog.callbacks.append(self._stop)
        env.run(until=self.stop)
        self.r.finish(env.now)
        return self

    def _stop(self, _event=None):
        if not self.stop.triggered:
            self.stop.succeed()

    def _model(self):
        """The model's arrays, refilled first if the next event could run short of draws."""
        if self._safe > 0:
            self._safe -= 1
            return self.r.m
        r = self.r
        need = needs(r.m)
        if need:
            r.refill(need, int(max_gets_per_event(r.m)))
        self._safe = events_before_refill(r.m)
        return r.m

    def _arrivals(self):
        env = self.env
        while True:
            yield env.timeout(arrivals.next_arrival(self.r.m, env.now))
            j = arrivals.on_arrival(self._model(), env.now)
            if j < 0:
                break
            env.process(self._txn(j))
        if self.r.m.st[ST_STOP]:
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
