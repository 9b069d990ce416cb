"""FishNet's computer players: legal decisions, no hidden information, whole games, a ladder."""

from __future__ import annotations

import random

import pytest

from services.fishnet.players import (
    COMPUTER_PLAYERS,
    Alice,
    Player,
    Smarx,
    _action_values,
    _solve,
    make_player,
    play_game,
)
from services.fishnet.rules import RANKS, FishNetGame, Result, full_deck

NAMES = tuple(COMPUTER_PLAYERS)  # weakest first
PROTOCOL_OPS = {"fish", "oppgives", "oppmakes", "request", "pass", "yourturn"}
ENDINGS = {"youwin", "youlose", "tiegame"}


def pairings(games: int) -> list[tuple[str, str, int]]:
    return [(NAMES[i % 4], NAMES[(i // 4) % 4], i) for i in range(games)]


@pytest.mark.parametrize(("first", "second", "seed"), pairings(48))
def test_decisions_legal_and_knowledge_matches_the_game(first: str, second: str, seed: int) -> None:
    game = FishNetGame(f"legal:{seed}")
    players = [make_player(first, seed), make_player(second, seed + 1)]

    def check(player: int, line: str) -> None:
        assert line.split()[0] in PROTOCOL_OPS | ENDINGS
        if line != "yourturn":
            return
        # Each player's own counts, inferred from its messages, are the referee's.
        for seat in (0, 1):
            view, me = game.view(seat), players[seat]
            assert tuple(me.hand) == view.hand
            assert tuple(me.books) == view.books
            assert tuple(me.opponent_books) == view.opponent_books
            assert me.deck_size == view.deck_size
            assert me.opponent_hand_size == view.opponent_hand_size
            assert me.passed_last == view.passed_last
            if isinstance(me, Smarx):  # what it deduces is true
                hidden = game.hand(1 - seat)
                assert all(me.known[r] <= hidden[r] for r in RANKS)
                assert all(hidden[r] == 0 for r in me.lacks)
            if isinstance(me, Alice):
                assert all(game.hand(1 - seat)[r] for r in me.memory)

    # play_game raises RuleError on any illegal request.
    outcome = play_game(players, game, listener=check)
    assert game.over
    assert outcome.books == (len(game.books(0)), len(game.books(1)))
    assert outcome.result(0) == game.result(0)


def test_players_hear_only_protocol_lines() -> None:
    heard: list[tuple[int, str]] = []
    play_game(
        [make_player("smarx", 1), make_player("alice", 2)],
        "lines",
        youmake=True,
        listener=lambda p, line: heard.append((p, line)),
    )
    for _, line in heard:
        op, *args = line.split()
        assert op in PROTOCOL_OPS | ENDINGS | {"youmake"}
        assert all(arg.isdigit() for arg in args)


class Recorder(Player):
    """Wraps a player: logs every line it hears and every reply it gives."""

    def __init__(self, inner: Player) -> None:
        super().__init__(0)
        self.inner = inner
        self.log: list[tuple[str, str | None]] = []

    def hear(self, line: str) -> str | None:
        reply = self.inner.hear(line)
        self.log.append((line, reply))
        return reply


@pytest.mark.parametrize("name", NAMES)
def test_decisions_depend_only_on_messages_and_seed(name: str) -> None:
    # Two different games (different hidden cards); replaying only the lines
    # one player heard into a fresh player with its seed gives the same replies.
    for seed in range(6):
        recorder = Recorder(make_player(name, seed))
        play_game([recorder, make_player("spot", seed)], f"replay:{seed}")
        fresh = make_player(name, seed)
        assert [fresh.hear(line) for line, _ in recorder.log] == [r for _, r in recorder.log]


@pytest.mark.parametrize("name", NAMES)
def test_hidden_cards_do_not_matter(name: str) -> None:
    # Same deal to seat 0, different opponent hands and stock: while what seat 0
    # heard is the same, so is every decision it makes.
    deck = full_deck()
    random.Random(5).shuffle(deck)
    mine, hidden = deck[0:14:2], [c for i, c in enumerate(deck) if i >= 14 or i % 2]
    for shuffle_seed in range(8):
        random.Random(shuffle_seed).shuffle(hidden)
        other = [c for pair in zip(mine, hidden[:7], strict=True) for c in pair] + hidden[7:]
        logs = []
        for cards in (deck, other):
            recorder = Recorder(make_player(name, 11))
            play_game([recorder, make_player("spot", 1)], FishNetGame.from_deck(cards, 0))
            logs.append(recorder.log)
        same = 0
        while same < min(map(len, logs)) and logs[0][same][0] == logs[1][same][0]:
            assert logs[0][same][1] == logs[1][same][1]
            same += 1
        assert logs[0][0][0] == "fish " + str(mine[0])


def test_builtin_players_open_with_a_request_for_a_held_rank() -> None:
    for name in NAMES:
        player = make_player(name, 0)
        for rank in (3, 3, 5, 9, 9, 9, 12):
            player.fished(rank)
        for _ in range(20):
            decision = player.choose()
            assert decision.rank is not None and player.hand[decision.rank] > 0


def test_smarx_endgame_search() -> None:
    # With the deck empty every rank left is split between the hands: the mover takes them all.
    assert _solve((1, 2) + (0,) * 11, (3, 2) + (0,) * 11, (0,) * 13, -1, False, False) == 1.0
    # One card left (a 0). The mover holds three 0s and a 1, the other three 1s.
    # Asking for 1s books them and empties the other's hand: a win. Asking for 0s
    # misses, fishes the last 0 (another turn) and then takes the 1s: a win too.
    # Passing lets the other take the 1 and go out a book ahead: a loss.
    mover = (3, 1) + (0,) * 11
    other = (0, 3) + (0,) * 11
    deck = (1,) + (0,) * 12
    assert _action_values(mover, other, deck, 0, False, False) == {0: 1.0, 1: 1.0, None: 0.0}


def test_bob_skips_the_rank_it_just_missed() -> None:
    bob = make_player("bob", 0)
    for rank in (3, 3, 3, 5, 9, 11, 12):
        bob.fished(rank)
    assert bob.choose().rank == 3
    bob.fished(7)  # no 3s: bob fishes
    bob.opponent_asked(12)  # took bob's 12, no fish
    assert bob.choose().rank != 3
    bob.fished(8)
    bob.opponent_asked(4)  # bob has no 4: the opponent fished, so it may hold a 3 now
    assert bob.choose().rank == 3


def ladder(strong: str, weak: str, games: int) -> tuple[int, int, int]:
    wins = ties = losses = 0
    for i in range(games):
        seat = i % 2  # first seat alternates; the deal picks who moves first
        mine, theirs = make_player(strong, f"s{i}"), make_player(weak, f"w{i}")
        players = [mine, theirs] if seat == 0 else [theirs, mine]
        result = play_game(players, f"ladder:{i}").result(seat)
        wins += result is Result.WIN
        ties += result is Result.TIE
        losses += result is Result.LOSE
    return wins, ties, losses


LADDER_GAMES = 300


@pytest.mark.parametrize(
    ("strong", "weak"),
    [
        pytest.param(
            "bob",
            "spot",
            marks=pytest.mark.xfail(
                strict=True,
                reason="issue 4 wants bob above spot, but bob as it defines him (the rank he "
                "holds most of) wins 24% and loses 67% of 2,000 games against spot; only with "
                "alice's memory of what the opponent lacks does he pass spot, and then alice "
                "no longer beats him (measured: make fishnet-study)",
            ),
        ),
        ("alice", "spot"),
        ("alice", "bob"),
        ("smarx", "spot"),
        ("smarx", "bob"),
        ("smarx", "alice"),
    ],
)
def test_ladder(strong: str, weak: str) -> None:
    # Seeded and deterministic; the margins at this size are several standard errors.
    wins, ties, losses = ladder(strong, weak, LADDER_GAMES)
    assert wins > losses
    assert wins + ties / 2 > 0.54 * LADDER_GAMES
