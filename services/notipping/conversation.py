"""One No Tipping game as a client, for any agent: ``play_one_game``.

The server's ROUND carries the 21 weights on the board and both hands, not
who placed each block. The client keeps track of that itself (``follow``):
blocks it placed are its own, the block at -4 from the start is the table's,
and a block that appears without our placing it is the opponent's. From that
it rebuilds a ``rules.Game`` with our move to make, so a built-in player
(``services.notipping.client``) or a person at the terminal
(``services.notipping.terminal``) chooses on the same game the server plays.

While the agent thinks, the server is still read, so its verdict (the time
budget spent, the opponent gone) reaches a person who is still typing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Protocol

import trio

from ring.wire.client import ClientError, Conversation
from ring.wire.net import dial
from services.notipping import rules
from services.notipping.protocol import (
    Begin,
    ClientConnection,
    Closed,
    Denied,
    Granted,
    Invalid,
    LocalProtocolError,
    Lose,
    RemoteProtocolError,
    Round,
    Win,
)


@dataclass(frozen=True)
class View:
    """What the client knows when its move is asked for.

    ``game`` has ``to_move == player``; its owners come from ``follow``.
    ``their_move`` is the opponent's move since our last one, as the
    difference between the two states shows it (None before any).
    """

    game: rules.Game
    player: int
    game_number: int
    round: int
    their_move: rules.Move | None = None


class Agent(Protocol):
    async def begin(self, game_number: int, max_weight: int, player: int) -> None: ...

    async def move(self, view: View) -> rules.Move: ...

    # Optional: ``async def ended(self, end: GameEnd) -> None``, told how the game ended.


@dataclass(frozen=True)
class GameEnd:
    result: str  # "won" or "lost"
    invalid: bool  # the server answered one of our moves with INVALID
    last_view: View | None  # the last position we were asked to move in
    rounds: int  # the ROUND messages we answered: our moves
    player: int
    game_number: int
    last_move: rules.Move | None = None  # ours, sent after last_view

    @property
    def won(self) -> bool:
        return self.result == "won"

    def last_board(self) -> rules.Game | None:
        """The board after our last move: the server never sends the final one."""
        if self.last_view is None:
            return None
        if self.last_move is None:
            return self.last_view.game
        try:
            return self.last_view.game.play(self.last_move)
        except rules.InvalidMove:
            return self.last_view.game


def follow(
    before: rules.Game, our_move: rules.Move | None, message: Round, player: int
) -> tuple[rules.Game, rules.Move | None]:
    """The game the ROUND ``message`` describes, with owners carried over from ``before``.

    ``before`` is the game we last knew (``Game.start`` before the first ROUND)
    and ``our_move`` what we played in it. A block still where we knew it, with
    the same weight, keeps its owner; any other block is the opponent's, as only
    the opponent moved since. Also returns the opponent's move as the diff shows it.
    """
    known = {p: (before.weight_at(p), before.owner_at(p)) for p in before.occupied()}
    if isinstance(our_move, rules.Add):
        known[our_move.position] = (our_move.weight, player)
    elif isinstance(our_move, rules.Remove):
        known.pop(our_move.position, None)
    opponent = 1 - player
    owners: list[int | None] = []
    appeared: list[rules.Move] = []
    for position, weight in zip(rules.POSITIONS, message.weights, strict=True):
        if not weight:
            owners.append(None)
            continue
        seen = known.get(position)
        if seen is not None and seen[0] == weight:
            owners.append(seen[1])
        else:
            owners.append(opponent)
            appeared.append(rules.Add(weight, position))
    vanished: list[rules.Move] = [
        rules.Remove(p) for p in known if not message.weights[rules.index(p)]
    ]
    changes = appeared + vanished
    their_move = changes[0] if len(changes) == 1 else None
    if message.phase == rules.ADD:
        mine = frozenset(message.mine or ())
        theirs = frozenset(message.theirs or ())
    else:
        mine = theirs = frozenset()
    hands = (mine, theirs) if player == 0 else (theirs, mine)
    left, right = rules.torques(message.weights)
    game = rules.Game(
        before.max_weight,
        tuple(message.weights),
        tuple(owners),
        hands,
        to_move=player,
        # Our seat rather than the ROUND's own digit: the handout's example
        # disagrees with itself on it, and to_move must match moves_made's parity.
        moves_made=2 * (message.round - 1) + player,
        left=left,
        right=right,
    )
    return game, their_move


async def play_one_game(
    server: tuple[str, int], handle: str, player: int, agent: Agent, *, timeout: float
) -> GameEnd:
    """Ask for seat ``player``, play every ROUND the server sends us, return how it ended.

    ``timeout`` bounds every wait for the server (the opponent may be a person).
    """
    try:
        protocol = ClientConnection(handle, player)
    except ValueError as exc:
        raise ClientError(str(exc)) from None
    host, port = server
    try:
        stream = await dial(host, port, timeout=timeout)
    except (OSError, trio.TooSlowError) as exc:
        raise ClientError(f"cannot reach the server at {host}:{port}: {exc}") from None
    conversation = Conversation(stream, protocol, timeout, RemoteProtocolError)
    async with stream:
        await conversation.send(protocol.start())
        event = await conversation.next_event()
        if isinstance(event, Denied):
            raise ClientError(f"seat {player} is taken (or the request was refused)")
        if isinstance(event, Closed):
            raise ClientError("the server closed the connection instead of granting a seat")
        if not isinstance(event, Granted):
            raise ClientError(f"the server answered the join request with {event}")
        return await _play(conversation, agent, player)


async def _play(conversation: Conversation[rules.Move], agent: Agent, player: int) -> GameEnd:
    protocol = conversation.protocol
    game: rules.Game | None = None
    game_number = 0
    view: View | None = None
    our_move: rules.Move | None = None
    rounds = 0
    invalid = False
    while True:
        event = await conversation.next_event()
        if isinstance(event, Begin):
            game_number = event.game
            try:
                game = rules.Game.start(event.max_weight)
            except ValueError as exc:
                raise ClientError(f"the server began a game we cannot play: {exc}") from None
            await agent.begin(event.game, event.max_weight, player)
            continue
        if isinstance(event, Round):
            if game is None:
                raise ClientError("the server sent a ROUND before BEGIN")
            game, their_move = follow(game, our_move, event, player)
            view = View(game, player, game_number, event.round, their_move)
            thinking = functools.partial(agent.move, view)
            verdict, choice = await conversation.while_thinking(thinking)
            if verdict is None:
                assert choice is not None
                await conversation.send(_encode(protocol, choice))
                our_move = choice
                rounds += 1
                continue
            event = verdict  # the server spoke first: a verdict, or the close
        if isinstance(event, Invalid):
            invalid = True
        elif isinstance(event, Win | Lose):
            result = "won" if isinstance(event, Win) else "lost"
            end = GameEnd(result, invalid, view, rounds, player, game_number, our_move)
            ended = getattr(agent, "ended", None)
            if ended is not None:
                await ended(end)
            return end
        elif isinstance(event, Closed):
            raise ClientError("the server closed the connection before the game ended")
        else:
            raise ClientError(f"the server sent {event} in the middle of a game")


def _encode(protocol: ClientConnection, move: rules.Move) -> bytes:
    try:
        if isinstance(move, rules.Add):
            return protocol.add(move.weight, move.position)
        if isinstance(move, rules.Remove):
            return protocol.remove(move.position)
    except LocalProtocolError as exc:
        raise ClientError(f"our player chose {move} out of turn: {exc}") from None
    raise ClientError(f"our player chose {move!r}, which is not a move")
