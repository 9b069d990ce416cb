"""How a table's game ended, and the seed of each game: what ``ring table`` prints and replays."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ring.games.record import Player
from ring.games.seeds import keyed_seed
from services.oldmaid.referee.rules import GameState, TableGame
from services.oldmaid.table.records import Transcript


def game_seed(table_seed: int, number: int, *, keyed: bool = False) -> int:
    """The seed of a table's game ``number``.

    With a published seed: the table's own for the first game, so ``ring table
    --seed S`` replays exactly as before, and derived in plain view for later
    ones. With a secret key (``keyed``): a keyed hash of the game's number, so
    no game's seed, transcript or deal tells anything of the key or of any
    other game (ring.games.seeds). Either way the transcript's seed replays its game
    as ``ring table --seed`` (the first game's seed is used as it is).
    """
    if keyed:
        return keyed_seed(table_seed, "oldmaid", number)
    if number == 1:
        return table_seed
    digest = hashlib.sha256(f"oldmaid:{table_seed}:{number}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# The end line's suffix for a game in which every player reported its exchanges.
EVERY_EXCHANGE_REPORTED = " [verified game: every exchange reported]"


@dataclass(frozen=True)
class GameOutcome:
    """How a game ended; ``state`` is ``OVER`` or ``ABORTED``."""

    number: int
    seed: int
    state: GameState
    players: tuple[str, ...]  # seat order
    loser: str | None
    out: tuple[str, ...]
    reason: str | None
    undiscarded: int = 0
    culprit: str | None = None  # the player an abort names as at fault, if any
    rule: str | None = None  # the rule an abort says was broken (protocol 14), if any
    verified: tuple[str, ...] = ()  # the seats that proved who they are (protocol 14.5)

    @property
    def line(self) -> str:
        """The line ``ring table`` prints for it."""
        if self.state is GameState.OVER:
            line = f"game over: loser {self.loser}; out: {', '.join(self.out)}"
            if self.undiscarded:
                line += f"; {pairs_text(self.undiscarded)} never discarded"
            return line + self._verified_text()
        return f"game aborted: {self.reason}" + self._verified_text()

    def _verified_text(self) -> str:
        """Which seats were verified (protocol 14.5 and 14.6), when any were."""
        if not self.verified:
            return ""
        if len(self.verified) == len(self.players):
            return EVERY_EXCHANGE_REPORTED
        return f" [verified: {', '.join(self.verified)}]"


def pairs_text(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


def record_end(transcript: Transcript, referee: TableGame) -> None:
    """Close a game's records with ``end``: its result as the referee decided it.

    Called once its players have gone (or ``linger`` passed), so that the
    game-over notices and any request after the end are among its records;
    and for every game when the table stops. A game that never started
    (the table stopped while it formed) gets its ``start`` here, naming
    whoever had joined, without seats.
    """
    if transcript.ended:
        return
    if not transcript.started:
        transcript.start(Player(nick) for nick in referee.joined)
    if referee.state is GameState.OVER and referee.loser is not None:
        undiscarded = referee.undiscarded_pairs
        reason = f"{referee.loser} was left holding the Old Maid"
        if undiscarded:
            reason += f" ({pairs_text(undiscarded)} never discarded)"
        transcript.end(
            reason,
            winners=referee.out,  # in the order they went out: the first is the winner
            losers=[referee.loser],
            details={"undiscarded": undiscarded, **_verified(referee)},
        )
    elif referee.state is GameState.ABORTED:
        details = {"rule": referee.rule} if referee.rule else {}
        details.update(_verified(referee))
        transcript.end(referee.reason or "aborted", culprit=referee.culprit, details=details)
    else:
        transcript.end("the table shut down")


def outcome_of(number: int, seed: int, referee: TableGame) -> GameOutcome:
    """How game ``number`` ended, as the referee decided it."""
    standing = referee.status()
    return GameOutcome(
        number=number,
        seed=seed,
        state=standing.state,
        players=tuple(seat.nick for seat in referee.seats),
        loser=standing.loser,
        out=standing.out,
        reason=standing.reason,
        undiscarded=standing.undiscarded,
        culprit=referee.culprit,
        rule=referee.rule,
        verified=tuple(_verified(referee).get("verified", ())),
    )


def _verified(referee: TableGame) -> dict[str, list[str]]:
    """The end's word on who proved who it is (protocol 14.5), when anyone did."""
    verified = [s.nick for s in referee.seats if s.nick in referee.verified]
    return {"verified": verified} if verified else {}
