"""What a stalled game's abort says: who the table last saw hold the turn.

A game that stops moving for the turn timeout is aborted; in a game of older
clients the turn passes from peer to peer unseen, so the words say what the
table last saw and blame no one (protocol 14.1). A verified game's ledger
says more (``services.oldmaid.verified.play``).
"""

from __future__ import annotations

from services.oldmaid.referee.rules import TableGame


def stuck_reason(referee: TableGame, waited: str) -> str:
    """The abort's words for a game in which nothing moved for ``waited``."""
    drawer = referee.turn
    if drawer is None:
        still_in = ", ".join(referee.status().in_)
        return (
            f"nothing moved for {waited} in the offer phase (no discard, no player out); "
            f"the last the table saw: {referee.last_move}; the turn passes from peer to "
            f"peer there, unseen by the table, so it cannot tell who holds it now (still "
            f"in: {still_in})"
        )
    dealt = len(referee.drawn)
    if dealt == 0:
        return (
            f"{drawer} did not draw for {waited} while it was its turn to draw "
            "(player1 draws first, as soon as its join reply comes)"
        )
    seats = referee.seats
    before = seats[(dealt - 1) % len(seats)].nick
    return (
        f"no draw for {waited}: it was {drawer}'s turn to draw, so either {before} never "
        f"passed it the turn (your_turn) or {drawer} never drew; the table cannot tell "
        "which, since your_turn goes from peer to peer"
    )
