"""One progress bar over the runs of a command's phases, on stderr: a grid sweep's runs, then the rounds of its
knee searches (`sim sweep` with `report: {knees: search}`), so the command shows one display from its first run
to its last. A phase adds the runs it is about to run (a knee search learns its next runs round by round, so the
total grows), each finished run moves the bar, and its description and postfix say which phase and how far."""
from __future__ import annotations

import sys


class RunProgress:
    """A tqdm bar of runs finished over runs known so far; `enabled` False draws nothing."""

    def __init__(self, enabled: bool, desc: str = "sweep"):
        from tqdm.auto import tqdm
        self._tqdm = tqdm
        self.bar = tqdm(total=0, unit="run", desc=desc, disable=not enabled, dynamic_ncols=True)

    def phase(self, desc: str) -> None:
        """A new phase: its name in front of the bar."""
        self.bar.set_description_str(desc, refresh=True)

    def add(self, runs: int) -> None:
        """`runs` more runs to do in this phase."""
        if runs:
            self.bar.total += runs
            self.bar.refresh()

    def done(self, **postfix) -> None:
        """One run finished; `postfix`: how far the phase is (e.g. failed=0)."""
        if postfix:
            self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)

    def status(self, text: str) -> None:
        """How far the phase is, in words (a knee search's round: searches done, runs used)."""
        self.bar.set_postfix_str(text, refresh=True)

    def write(self, line: str) -> None:
        """A line on stderr that leaves the bar whole below it."""
        self._tqdm.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> "RunProgress":
        return self

    def __exit__(self, *_) -> bool:
        self.close()
        return False
