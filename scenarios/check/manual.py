"""``ring check --manual``: a program the student starts by hand, when each case says so.

For a program that cannot take its address or name as arguments (a fixed
host and port in its source, an IDE's run button): the checker listens on one
fixed port, case after case, and before each case says "start your program
now". It cannot see that program's process, so the case checks everything on
the wire (the close included) but not the exit, and it cannot stop what it
did not start: the student does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ManualRun:
    """A run the checker did not start: no process to watch, wait for or stop."""

    process: None = None
    killed: bool = False
    exited: bool = False

    async def wait(self, timeout: float) -> bool:
        return True  # the exit cannot be seen: its connection's close stands for it

    async def stop(self, grace: float = 0.0) -> None:
        return None

    def output(self) -> tuple[list[str], list[str]]:
        return [], []

    def describe_exit(self) -> str:
        return "was started by hand (its exit is not checked)"


@dataclass(frozen=True)
class ManualProgram:
    """The student's program, started by hand for each case on ``port``."""

    port: int
    announce: Callable[[str], None] = print
    shown: str = "a program started by hand"

    async def start(self, values: Mapping[str, str], logs: Path, label: str) -> ManualRun:
        told = f"name {values['name']}"
        if "seat" in values:
            told += f", seat {values['seat']}"
        self.announce(
            f"{label}: start your program now: it connects to {values['address']} ({told})"
        )
        return ManualRun()
