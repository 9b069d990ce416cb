"""The table's rules without sockets, whole games: simulated, and anything at all in any order.

The referee cannot see the cards players pass to each other, so the
property tests simulate the players' hands themselves (``Simulation``) and
check the referee against what really happened at the table.
"""

from __future__ import annotations

import random

from hypothesis import event, given, settings
from hypothesis import strategies as st

from ring.oldmaid.cards import JOKER, Card, full_deck, is_pair, split_pairs
from services.oldmaid.referee.rules import (
    DECK_SIZE,
    PAIRS,
    Dealt,
    Discarded,
    GameState,
    Left,
    Over,
    RefereeError,
    TableGame,
    WentOut,
)
from tests.helpers.oldmaid_referee import address, drawn_pair, nicks

# -- whole games, simulated ---------------------------------------------------------


class Simulation:
    """The players' side of a game: hands, picks and the turn.

    It plays as the peers of docs/protocols/oldmaid.md 7 do: draw in seat order,
    discard pairs as soon as they are held, hand the turn to the next player who
    is in, and say so when a hand is empty. It checks the referee after every step.
    """

    def __init__(self, game: TableGame, rng: random.Random) -> None:
        self.game = game
        self.rng = rng
        self.seats = nicks(game)
        self.hands: dict[str, list[Card]] = {nick: [] for nick in self.seats}
        self.went_out: list[str] = []
        self.steps = 0

    def check(self) -> None:
        held = [card for hand in self.hands.values() for card in hand]
        discarded = self.game.discarded
        assert len(held) + len(discarded) + self.game.undrawn == DECK_SIZE
        # No card is in two places, and every card held or discarded was dealt.
        assert {*held, *discarded} == set(self.game.drawn)
        assert list(self.game.out) == self.went_out
        self.steps += 1

    def receive(self, nick: str, card: Card) -> None:
        hand = self.hands[nick]
        hand.insert(self.rng.randint(0, len(hand)), card)

    def discard_pairs(self, nick: str, *, offer_phase: bool) -> None:
        self.hands[nick], pairs = split_pairs(self.hands[nick])
        for i, (first, second) in enumerate(pairs):
            empties = not self.hands[nick] and i == len(pairs) - 1
            # In the draw phase a random flag tests that it cannot count.
            flag = empties and (offer_phase or self.rng.random() < 0.5)
            self.game.discard(nick, first, second, declares_out=flag)
            if flag and offer_phase:
                self.went_out.append(nick)
            self.check()

    def go_out(self, nick: str) -> None:
        counted = self.game.out_of_cards(nick)
        assert counted == (nick not in self.went_out)
        if counted:
            self.went_out.append(nick)
        if self.rng.random() < 0.2:
            assert self.game.out_of_cards(nick) is False  # a repeat changes nothing
        self.check()

    def next_in(self, holder: str) -> str | None:
        start = self.seats.index(holder)
        for step in range(1, len(self.seats)):
            nick = self.seats[(start + step) % len(self.seats)]
            if not self.hands[nick]:
                self.go_out(nick)  # out_of_cards before answering "out"
                continue
            return nick
        return None

    def play(self) -> str:
        """The loser, as the players see it."""
        game = self.game
        holder = self.seats[0]
        while game.turn is not None:
            holder = game.turn
            if not self.hands[holder] and self.rng.random() < 0.3:
                assert game.out_of_cards(holder) is False  # empty mid-draw: not out
            card, last = game.draw(holder)
            self.receive(holder, card)
            self.check()
            self.discard_pairs(holder, offer_phase=last)
        while True:
            assert self.steps < 20_000, "the game does not end"
            if not self.hands[holder]:
                self.go_out(holder)
            picker = self.next_in(holder)
            if picker is None:
                return holder
            if not self.hands[holder]:
                holder = picker  # a pass: the turn moves on without a pick
                continue
            card = self.hands[holder].pop(self.rng.randrange(len(self.hands[holder])))
            self.receive(picker, card)
            self.check()
            if not self.hands[holder]:
                self.go_out(holder)
            self.discard_pairs(picker, offer_phase=True)
            holder = picker


@settings(max_examples=200, deadline=None)
@given(players=st.integers(2, 8), seed=st.integers(0, 2**32), pick_seed=st.integers(0, 2**32))
def test_whole_games_end_with_one_loser_who_holds_the_old_maid(
    players: int, seed: int, pick_seed: int
) -> None:
    picks = random.Random(pick_seed)  # join order, card placement, picks, flags
    game = TableGame(players, seed)
    for i in picks.sample(range(players), players):
        game.join(f"player{i}", address(i))
    game.start()
    simulation = Simulation(game, picks)
    loser = simulation.play()

    assert game.state is GameState.OVER
    assert game.loser == loser
    assert simulation.hands[loser] == [JOKER]
    assert all(not hand for nick, hand in simulation.hands.items() if nick != loser)
    assert len(game.discarded) == 2 * PAIRS
    assert JOKER not in game.discarded
    assert list(game.out) == simulation.went_out
    assert sorted([*game.out, loser]) == sorted(simulation.seats)
    standing = game.status()
    assert (standing.loser, standing.in_, standing.out) == (loser, (loser,), game.out)
    events = game.take_events()
    assert sum(isinstance(e, Dealt) for e in events) == DECK_SIZE
    assert sum(isinstance(e, Discarded) for e in events) == PAIRS
    assert [e.nick for e in events if isinstance(e, WentOut)] == list(game.out)
    assert [e.place for e in events if isinstance(e, WentOut)] == list(range(1, players))
    assert events[-1] == Over(loser, list(game.out), 0)


# -- anything at all, in any order ---------------------------------------------------

NICKS = ["ann", "bob", "cy", "dee"]
CARDS = [*full_deck(), Card("1", "spades"), Card("3", "stars")]

actions = st.one_of(
    st.tuples(st.just("join"), st.sampled_from([*NICKS, "bad nick"]), st.integers(0, 4)),
    # Leaving aborts a game under way (unless the player is out); rare, so
    # that games get somewhere.
    st.tuples(st.just("leave"), st.sampled_from(NICKS), st.integers(0, 9)),
    st.tuples(st.just("start")),
    st.tuples(st.just("draw"), st.sampled_from(NICKS)),
    st.tuples(st.just("draw_in_turn")),
    st.tuples(st.just("deal_the_rest")),
    st.tuples(
        st.just("discard"),
        st.sampled_from(NICKS),
        st.sampled_from(CARDS),
        st.sampled_from(CARDS),
        st.booleans(),
    ),
    st.tuples(st.just("discard_drawn_pair"), st.sampled_from(NICKS), st.booleans()),
    st.tuples(st.just("discard_every_pair"), st.sampled_from(NICKS)),
    st.tuples(st.just("out_of_cards"), st.sampled_from(NICKS)),
    st.tuples(st.just("all_out_but"), st.integers(0, 3)),
    st.tuples(st.just("status")),
    st.tuples(st.just("abort"), st.integers(0, 9)),
    st.tuples(st.just("end_without_pairs")),
    st.tuples(st.just("left_with_turn"), st.sampled_from(NICKS), st.sampled_from(NICKS)),
)


def apply(game: TableGame, action: tuple) -> None:
    kind, *args = action
    if kind == "join":
        nick, port = args
        game.join(nick, ("10.0.0.9", 40000 + port))
    elif kind == "leave":
        if args[1] == 0 or game.state is GameState.WAITING:
            game.leave(args[0])
    elif kind == "start":
        game.start()
    elif kind == "draw":
        game.draw(args[0])
    elif kind == "draw_in_turn":
        if game.turn is not None:
            game.draw(game.turn)
    elif kind == "deal_the_rest":
        while game.turn is not None:
            game.draw(game.turn)
    elif kind == "discard":
        nick, first, second, flag = args
        game.discard(nick, first, second, declares_out=flag)
    elif kind == "discard_drawn_pair":
        nick, flag = args
        _, pairs = split_pairs(c for c in game.drawn if c not in game.discarded)
        if pairs:
            game.discard(nick, *pairs[0], declares_out=flag)
    elif kind == "discard_every_pair":
        _, pairs = split_pairs(c for c in game.drawn if c not in game.discarded)
        for pair in pairs:
            game.discard(args[0], *pair)
    elif kind == "out_of_cards":
        game.out_of_cards(args[0])
    elif kind == "all_out_but":
        # As a game would go: the others empty their hands, the loser discards all
        # but one pair for each of them (each may keep its last), and they go out.
        others = [
            s.nick for i, s in enumerate(game.seats) if i != args[0] and s.nick not in game.out
        ]
        if game.state is GameState.PLAYING and game.undrawn == 0 and len(game.seats) > args[0]:
            for nick in others:
                while game.least_held(nick)[0] > 0 and _some_pair(game):
                    game.discard(nick, *drawn_pair(game))
            while game.undiscarded_pairs > len(others) and _some_pair(game):
                game.discard(game.seats[args[0]].nick, *drawn_pair(game))
        for nick in others:
            if len(game.out) < len(game.seats) - 1:
                game.out_of_cards(nick)
    elif kind == "status":
        game.status()
    elif kind == "abort" and args[0] == 0:
        game.abort("testing")
    elif kind == "end_without_pairs":
        game.end_without_pairs()
    elif kind == "left_with_turn":
        game.left_with_turn(*args)


def _some_pair(game: TableGame) -> bool:
    return bool(split_pairs(c for c in game.drawn if c not in game.discarded)[1])


def check_consistent(game: TableGame, events: list) -> None:
    seated = nicks(game)
    assert len(set(game.joined)) == len(game.joined) <= game.players_needed
    assert len(game.drawn) + game.undrawn == (DECK_SIZE if seated else 0)
    assert len(set(game.drawn)) == len(game.drawn)
    discarded = game.discarded
    assert set(discarded) <= set(game.drawn)
    assert JOKER not in discarded
    for card in discarded:
        assert any(is_pair(card, other) for other in discarded)
    assert len(set(game.out)) == len(game.out)
    assert set(game.out) <= set(seated)
    if game.out:
        assert game.undrawn == 0
    standing = game.status()
    assert standing.state is game.state
    if seated:
        assert sorted([*standing.in_, *standing.out]) == sorted(seated)
    overs = [e for e in events if isinstance(e, Over)]
    if game.state is GameState.OVER:
        assert game.undrawn == 0
        assert len(game.out) == len(seated) - 1
        assert game.loser is not None and game.loser not in game.out
        # Over is recorded once, with the pairs that were never discarded.
        assert [(e.loser, e.undiscarded) for e in overs] == [
            (game.loser, PAIRS - len(discarded) // 2)
        ]
        assert standing.undiscarded == PAIRS - len(discarded) // 2
    else:
        assert game.loser is None
        assert overs == []
    # Decided: one player left in with the deck dealt, and pairs still missing.
    assert game.decided == (
        game.state is GameState.PLAYING
        and game.undrawn == 0
        and len(game.out) == len(seated) - 1
        and len(discarded) < 2 * PAIRS
    )
    left = {e.nick for e in events if isinstance(e, Left)}
    assert left <= set(game.out)  # only players who are out leave without an abort
    assert sum(isinstance(e, Dealt) for e in events) == len(game.drawn)
    assert sum(isinstance(e, Discarded) for e in events) * 2 == len(discarded)
    assert [e.nick for e in events if isinstance(e, WentOut)] == list(game.out)


@settings(max_examples=300, deadline=None)
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 2**32),
    head_start=st.integers(0, 4),
    script=st.lists(actions, max_size=120),
)
def test_any_sequence_of_requests_is_accepted_or_refused_cleanly(
    players: int, seed: int, head_start: int, script: list[tuple]
) -> None:
    game = TableGame(players, seed)
    # Random scripts seldom get far on their own, so some start with a game
    # seated, dealt, with every pair discarded, or decided.
    if head_start >= 1:
        for i in range(players):
            game.join(NICKS[i], ("10.0.0.9", 40000 + i))
        game.start()
    if head_start >= 2:
        apply(game, ("deal_the_rest",))
    if head_start == 3:
        apply(game, ("discard_every_pair", NICKS[0]))
    if head_start == 4:  # decided: one player left in, no pair discarded
        apply(game, ("all_out_but", 0))
    events: list = game.take_events()
    for action in script:
        before = (game.state, game.drawn, game.discarded, game.out, game.joined)
        try:
            apply(game, action)
        except RefereeError as exc:
            assert exc.message  # every refusal says why
            # A refusal changes nothing, but for a claim the table knows is false: that
            # ends the game (and a script's first steps may have gone through).
            if game.state is GameState.ABORTED and before[0] is GameState.PLAYING:
                assert game.rule is not None and exc.message == game.reason
            elif action[0] != "all_out_but":
                assert (game.state, game.drawn, game.discarded, game.out, game.joined) == before
        events.extend(game.take_events())
        check_consistent(game, events)
    event(f"ended {game.state.value}")
    if game.state is GameState.OVER:
        event("over, pairs undiscarded" if game.status().undiscarded else "over, all pairs")
