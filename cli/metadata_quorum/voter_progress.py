"""The progress of a voter change, on stderr: a spinner on a terminal, else one line per step, begun
when it is sent and finished when it commits, ``Step 1/2: Add voter 2 (directory id <id>) ... committed
in 0.41 s``, ``Step 1/2: waiting: <reason>`` each time the reason changes, and ``Watching controller 3
for 5 s: ...`` while a removed controller is watched in case it adds itself back, and ``Unregistered
controller 3`` for each registration removed once the voters are as wanted."""

from __future__ import annotations

import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.status import Status

    from kafka_admin_kraft.voters import Progress, VoterStep


class StepReporter:
    """The progress callback: a spinner on a terminal, else a line per committed step (and per new
    reason to wait), written to ``stream``. Also records the steps committed so far."""

    def __init__(self, stream: IO[str], *, terminal: bool) -> None:
        self.stream = stream
        self.terminal = terminal
        self.committed: list[tuple[VoterStep, float]] = []
        self._status: Status | None = None
        self._started = 0.0
        self._waiting = ""
        self._open_line = False

    def __call__(self, event: Progress) -> None:
        done = len(self.committed)
        number = f"Step {done + 1}/{done + max(1, len(event.plan.steps))}"
        if event.kind == "waiting":
            if event.message != self._waiting:
                self._waiting = event.message
                self._show(f"{number}: waiting: {event.message}", line=True)
        elif event.kind == "step" and event.step is not None:
            self._waiting = ""
            self._show(f"{number}: {event.step.describe()} ...", line=False)
            self._started = time.monotonic()
        elif event.kind == "watching":
            self._show(event.message[:1].upper() + event.message[1:], line=True)
        elif event.kind == "unregistered":
            self._print(event.message[:1].upper() + event.message[1:])
        elif event.kind == "committed" and event.step is not None:
            seconds = time.monotonic() - self._started
            self.committed.append((event.step, seconds))
            text = f"committed in {seconds:.2f} s"
            if self.terminal or not self._open_line:
                self._print(f"{number}: {event.step.describe()} ... {text}")
            else:
                self.stream.write(f" {text}\n")
                self.stream.flush()
                self._open_line = False

    def _show(self, text: str, *, line: bool) -> None:
        if self.terminal:
            if self._status is None:
                from rich.console import Console

                self._status = Console(file=self.stream).status(text)
                self._status.start()
            else:
                self._status.update(text)
            return
        self.end_line()
        self.stream.write(text + ("\n" if line else ""))
        self.stream.flush()
        self._open_line = not line

    def _print(self, text: str) -> None:
        if self._status is not None:
            self._status.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            self.end_line()
            self.stream.write(text + "\n")
            self.stream.flush()

    def end_line(self) -> None:
        """Finish a step line left open by a step that did not commit."""
        if self._open_line:
            self.stream.write("\n")
            self.stream.flush()
            self._open_line = False

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        self.end_line()
