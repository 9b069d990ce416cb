"""What the Old Maid table tells its players about a game, built from the referee's word.

Pure: each function takes what the referee (``services.oldmaid.referee.rules``)
and the game (``services.oldmaid.table.game``) know and returns the message, so
the wire's shape of ``status``, of the join reply that starts a game and of the
``game_over`` notice is read and tested in one place (docs/protocols/oldmaid.md
5.1, 5.5, 5.6, 14.5).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ring.oldmaid import proofs
from ring.oldmaid.messages import GameOver, Reply, ok
from services.oldmaid.referee.rules import Address, GameState, Standing


def status_reply(standing: Standing, verified: Collection[str], *, reported: bool) -> Reply:
    """The reply to ``status`` (5.5). ``verified``: who proved who they are (14.5);
    ``reported``: every exchange of the game is, or once it starts will be, reported."""
    reply = ok(in_=list(standing.in_), out=list(standing.out), state=standing.state.value)
    if verified:
        reply.verified = sorted(verified)
    if reported:
        reply.report = True
    if standing.state is GameState.OVER:
        reply.game_over = True
        reply.loser = standing.loser
        reply.undiscarded = standing.undiscarded
    elif standing.state is GameState.ABORTED:
        reply.aborted = True
        reply.reason = standing.reason
    return reply


def join_reply(
    players: Sequence[tuple[Address, str]],
    nick: str,
    verified: Sequence[str],
    key: bytes,
    *,
    reported: bool,
    witnessed: bool,
) -> Reply:
    """The join reply that starts the game for ``nick`` (5.1): the seats in order; to a
    player that verifies, its secret and every other's proof too (14.5), and whether the
    game reports (and witnesses) its exchanges (14.6). Older clients see the plain reply."""
    reply = ok(players=list(players))
    if nick in verified:
        reply.secret = proofs.secret_for(key, nick)
        reply.proofs = proofs.expected_proofs(key, nick, list(verified))
        if reported:
            reply.report = True
            if witnessed:
                reply.witness = True
    return reply


def end_notice(standing: Standing) -> GameOver:
    """The ``game_over`` notice to a watcher (5.6): the loser and who went out, or why the
    game was aborted."""
    if standing.state is GameState.OVER:
        return GameOver(
            loser=standing.loser, out=list(standing.out), undiscarded=standing.undiscarded
        )
    return GameOver(aborted=True, reason=standing.reason)
