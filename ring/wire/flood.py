"""The flood rule (docs/protocols/oldmaid.md 3, fishnet.md "Errors"), for every service's
server: after 100 bad messages in a row on one connection (the number Reversi uses for
bad moves), the last one is answered, in the protocol's own error form, and that
connection is closed.

A message is bad when the server answers it with its protocol's error (garbage, an
unknown command, a missing field, a request that makes no sense now); anything the
server takes starts the count again. An honest client never comes near it: a client
that has made one mistake gets it explained, and goes on.
"""

from __future__ import annotations

BAD_IN_A_ROW = 100


class BadRun:
    """One connection's bad messages in a row."""

    def __init__(self, limit: int = BAD_IN_A_ROW) -> None:
        self.limit = limit
        self.count = 0

    def bad(self) -> bool:
        """One more bad message; True when it is the limit's: answer it, then close."""
        self.count += 1
        return self.count >= self.limit

    def good(self) -> None:
        self.count = 0

    @property
    def reached(self) -> bool:
        return self.count >= self.limit
