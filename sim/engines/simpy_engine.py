"""The SimPy engine: one SimPy process per transaction, stepping through the model's handlers.

A transaction's process calls its design's `step` (`sim.model.designs`) at each of its catalog effect points and
sleeps (`env.timeout`) for the delay the handler returns; the arrivals process does the same with
`sim.model.arrivals` (or each writer's next start, a timeout, with `sim.model.writers`). A transaction's first step
runs in the event that starts it (after the next arrival is scheduled), its process then waiting for what that
step returned: the fast engine's order of events, which gives it no event of its own. The engine holds no
protocol logic: read the handlers against docs/MODEL.md, and use this engine to step through them (`--engine simpy`). It gives the same results as the fast engine, bit for bit.
Interpreted, the handlers run on a view of the run's `Model` made of Python numbers (`sim.engines.view`); a
refill also hands out finished transactions' records and frees their slots, so the view is rebuilt after it.
"""
from __future__ import annotations

import simpy

from ..model import arrivals, writers
from ..model.designs import DESIGNS
from ..model.transaction import PARKED
from ..model.draws import events_before_refill, needs
from ..model.build import VALIDATION_FIELDS
from ..model.state import PC, Need
from .base import EngineBase
from .view import view, write_back


class SimPyEngine(EngineBase):

    def run(self) -> "SimPyEngine":
        env = self.env = simpy.Environment()
        self._safe = 0
        self.m = view(self.r.m)
        self.stop = env.event()
        self._parked = {}   # slot -> the event a parked waiter waits for (`sim.model.lock`, `sim.model.capacity`)
        if self.m.p.writers == 0:
            env.process(self._arrivals())
        for w in range(self.m.p.starters):
            self._writer_at(w, writers.first_due(self.m, w))
        watchdog = env.timeout(self.watchdog_ms)
        watchdog.callbacks.append(self._stop)
        env.run(until=self.stop)
        write_back(self.m, self.r.m)
        self.r.finish(env.now)
        return self

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
            # a refill that makes no room for arrivals reads a few fields of the slots and leaves them be
            keep = not need & (1 << Need.TXN)
            write_back(self.m, r.m, VALIDATION_FIELDS if keep else None)
            before = r.m
            r.refill(need, self.env.now)
            self.m = view(r.m, before, self.m, keep_slots=keep)
        self._safe = events_before_refill(self.m)
        return self.m

    def _arrivals(self):
        env = self.env
        arrival = env.timeout(arrivals.next_arrival(self.m, env.now))
        while True:
            yield arrival
            j = arrivals.on_arrival(self._model(), env.now)
            if j < 0:
                break
            arrival = env.timeout(arrivals.next_arrival(self.m, env.now))   # before the new one's first step
            self._start(j)
        if self.m.run[0].stop:
            self._stop()

    def _start(self, j: int) -> None:
        """Transaction j's first step, in the event that starts it (an arrival, a writer's tick), as the fast
        engine takes it; then its process waits for what that step returned."""
        event = self._step(j, self.m)
        if event is not None:
            self.env.process(self._txn(j, event))

    def _writer_at(self, w: int, delay: float) -> None:
        """Writer w's next start, `delay` from now (a timeout, not a process: the same event keys as the fast
        engine's)."""
        self.env.timeout(delay).callbacks.append(lambda _event: self._writer_due(w))

    def _writer_due(self, w: int) -> None:
        j = writers.on_due(self._model(), w, self.env.now)
        again = self.m.wr[w].again_ms
        if again >= 0.0:   # (a compaction's next batch)
            self._writer_at(w, again)
        if j >= 0:
            self._start(j)
        elif self.m.run[0].stop:
            self._stop()

    def _lock_asks(self, m) -> None:
        """What the last handler asked besides its own next event: run a parked waiter now (a FIFO-notify grant; a
        connection or row lock handed on), then set a parked waiter's timer."""
        r = m.run[0]
        w = r.wake
        while w >= 0:              # (several: in the order woken, `sim.model.fifo.wake`)
            self._parked.pop(w).succeed()
            nxt = m.tx[w].wake_next
            m.tx[w].wake_next = -1
            w = nxt
        r.wake = -1
        if r.timer >= 0:
            j = r.timer
            self.env.timeout(r.timer_ms).callbacks.append(lambda _event: self._timer(j))
            r.timer = -1

    def _timer(self, j: int) -> None:
        """Slot j's lock timer: if its waiter gives its wait up now, it runs now (a stale timer does nothing)."""
        if DESIGNS[self.r.design].timer(self._model(), j, self.env.now):
            self._parked.pop(j).succeed()

    def _txn(self, j: int, event):
        """Transaction j after its first step: each event it waits for, then its next step."""
        while event is not None:
            yield event
            event = self._step(j, self._model())

    def _step(self, j: int, m):
        """Transaction j's step now: the event it waits for next (a timeout, or a parked waiter's wake-up), or None
        once it ended."""
        env = self.env
        delay = DESIGNS[self.r.design].step(m, j, env.now)
        if m.p.parks:
            self._lock_asks(m)
        if delay == PARKED and m.tx[j].pc != PC.DONE:
            event = self._parked[j] = env.event()
            return event
        if m.tx[j].pc == PC.DONE:
            w = writers.starter(m, j)
            if w >= 0:
                after = writers.on_end(m, j, env.now)
                if after >= 0.0:
                    self._writer_at(w, after)
            if m.run[0].stop:
                self._stop()
            return None
        event = env.timeout(delay)
        if m.run[0].stop:   # it ended, but its lock's release is still to take effect (`sim.model.lock`)
            self._stop()
        return event
