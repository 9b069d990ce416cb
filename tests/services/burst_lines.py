"""What a server wrote to stderr about a crowd of one kind (``ring.burst_log``)."""

from __future__ import annotations

import re


def crowd_lines(err: str, service: str, words: str) -> tuple[int, list[int]]:
    """The lines of ``words`` with a loopback address, and the counts said for the rest."""
    lines = err.splitlines()
    addressed = [
        line for line in lines if re.fullmatch(rf"{service}: 127\.0\.0\.1:\d+: {words}", line)
    ]
    counted = [
        int(match[1])
        for line in lines
        if (match := re.fullmatch(rf"{service}: and (\d+) more within 1 s: {words}", line))
    ]
    return len(addressed), counted
