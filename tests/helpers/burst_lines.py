"""What a server wrote to stderr about a crowd of one kind (``ring.wire.burst_log``)."""

from __future__ import annotations

import re


def crowd_lines(
    err: str, service: str, words: str, address: str = "127.0.0.1"
) -> tuple[int, list[int]]:
    """The lines of ``words`` from ``address``, and the counts said for the rest."""
    lines = err.splitlines()
    addressed = [
        line
        for line in lines
        if re.fullmatch(rf"{service}: {re.escape(address)}:\d+: {re.escape(words)}", line)
    ]
    count = rf"{service}: and (\d+) more within 1 s: {re.escape(words)}"
    counted = [int(match[1]) for line in lines if (match := re.fullmatch(count, line))]
    return len(addressed), counted
