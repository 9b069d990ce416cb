"""``ring bot notipping`` and ``ring play notipping``: the view, the terminal, the conversation."""

from __future__ import annotations

import functools
import io
import random
from argparse import Namespace
from contextlib import AbstractAsyncContextManager

import pytest
import trio

from services.notipping import client, rules, terminal
from services.notipping.bots import make_player
from services.notipping.client import BotAgent
from services.notipping.conversation import ClientError, GameEnd, View, follow, play_one_game
from services.notipping.protocol import Round
from services.notipping.server import NoTippingConfig, NoTippingServer, serve_notipping
from services.notipping.terminal import TerminalAgent, Unreadable, describe, draw, parse_input
from tests.helpers import servers
from tests.helpers.connections import refusing_port

# -- what the server would send, from the game it referees ----------------------------


def round_for(game: rules.Game) -> Round:
    """The ROUND the server sends the player to move in ``game``."""
    player = game.to_move
    if game.phase == rules.ADD:
        mine = tuple(sorted(game.hands[player]))
        theirs = tuple(sorted(game.hands[1 - player]))
        return Round(game.round, player, rules.ADD, mine, theirs, game.weights)
    return Round(game.round, player, rules.REMOVE, None, None, game.weights)


def played(*moves: rules.Move, max_weight: int = 7) -> rules.Game:
    game = rules.Game.start(max_weight)
    for move in moves:
        assert not game.tips_after(move), move
        game = game.play(move)
    return game


# -- input ------------------------------------------------------------------------------


def test_a_move_is_typed_bare_or_with_its_verb() -> None:
    assert parse_input("3 -2", rules.ADD) == rules.Add(3, -2)
    assert parse_input("  add 3 -2 ", rules.ADD) == rules.Add(3, -2)
    assert parse_input("ADD:3:-2;", rules.ADD) == rules.Add(3, -2)
    assert parse_input("a 10, 10", rules.ADD) == rules.Add(10, 10)
    assert parse_input("-2", rules.REMOVE) == rules.Remove(-2)
    assert parse_input("remove -2", rules.REMOVE) == rules.Remove(-2)
    assert parse_input("R +4", rules.REMOVE) == rules.Remove(4)
    for word in ("h", "help", "?", "H"):
        assert parse_input(word, rules.ADD) == "help"
    for word in ("q", "quit", "Q"):
        assert parse_input(word, rules.REMOVE) == "quit"


def test_what_is_not_a_move_says_what_to_type() -> None:
    for text in ("", "   ", "x", "1 2 3", "add 3", "remove", "remove 1 2", "add"):
        assert isinstance(parse_input(text, rules.ADD), Unreadable), text
    said = {
        ("3 x", rules.ADD): "'x' is not a number",
        ("-2", rules.ADD): "a weight and a position",  # bare numbers of the other phase
        ("3 -2", rules.REMOVE): "block to remove",
    }
    for (text, phase), reason in said.items():
        unreadable = parse_input(text, phase)
        assert isinstance(unreadable, Unreadable) and reason in unreadable.reason
    # With its verb a move of the other phase is read, for the rules to name the problem.
    assert parse_input("remove -2", rules.ADD) == rules.Remove(-2)


# -- the drawing ----------------------------------------------------------------------


def test_the_start_shows_the_initial_block_the_supports_and_the_margins() -> None:
    lines = draw(rules.Game.start(7), 0).splitlines()
    assert lines[0] == " position -10 -9 -8 -7 -6 -5 -4 -3 -2 -1  0  1  2  3  4  5  6  7  8  9 10"
    assert lines[1] == "   blocks " + "  ." * 6 + " *3" + "  ." * 14
    assert lines[2] == " " * 10 + "=" * 63
    # the carets sit under the last character of -3 and of -1
    assert lines[3].index("^") == lines[0].index("-3") + 1
    assert lines[3].rindex("^") == lines[0].index(" -1 ") + 2
    assert "y5: your 5 kg block" in lines[4] and "*3: the initial block" in lines[4]
    # board 3*(0+3) + block 3*(-4+3) = 6; board 3*(0+1) + block 3*(-4+1) = -6
    assert lines[5] == "left  support (-3): sum w*(x+3) = 6, must stay >= 0: 6 to spare"
    assert lines[6] == "right support (-1): sum w*(x+1) = -6, must stay <= 0: 6 to spare"
    assert lines[7].split(":")[1].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert lines[8].startswith("your opponent's weights:")


def test_each_block_is_marked_as_seen_by_the_player_looking() -> None:
    game = played(
        rules.Add(5, -3), rules.Add(2, -2), rules.Add(1, -5), rules.Add(10, 0), max_weight=10
    )
    mine = draw(game, 0).splitlines()[1].split()
    theirs = draw(game, 1).splitlines()[1].split()
    assert [c for c in mine if c != "."] == ["blocks", "y1", "*3", "y5", "o2", "o10"]
    assert [c for c in theirs if c != "."] == ["blocks", "o1", "*3", "o5", "y2", "y10"]
    assert "your weights:            2 3 4 6 7 8 9 10" in draw(game, 0)
    assert "your opponent's weights: 1 3 4 5 6 7 8 9" in draw(game, 0)


def test_the_remove_phase_and_a_tipped_board_are_said() -> None:
    game = played(rules.Add(1, -2), rules.Add(1, -1), max_weight=1)
    assert game.phase == rules.REMOVE
    text = draw(game, 0)
    assert "every weight is placed" in text and "your weights" not in text
    tipped = game.play(rules.Remove(-4))  # the initial block held the board on the left
    assert tipped.loser == 0
    assert "must stay <= 0: TIPPED" in draw(tipped, 0)


# -- following the board from the ROUND messages ------------------------------------------


def test_owners_are_followed_by_the_difference_between_rounds() -> None:
    # We are player 1: the first ROUND shows player 0's block, then ours stays ours.
    start = rules.Game.start(7)
    after_theirs = played(rules.Add(4, -3))
    game, theirs = follow(start, None, round_for(after_theirs), 1)
    assert theirs == rules.Add(4, -3)
    assert game.owner_at(-3) == 0 and game.owner_at(-4) == rules.TABLE
    assert game.to_move == 1 and game.moves_made == 1 and game == after_theirs

    ours = rules.Add(7, -2)
    reference = played(rules.Add(4, -3), ours, rules.Add(1, 2))
    game, theirs = follow(game, ours, round_for(reference), 1)
    assert theirs == rules.Add(1, 2)
    assert game.owner_at(-2) == 1 and game.owner_at(2) == 0 and game.owner_at(-3) == 0
    assert game == reference  # hands, torques, moves made too


def test_a_removal_is_seen_as_a_block_gone_whoever_owned_it() -> None:
    before = played(rules.Add(1, -2), rules.Add(1, -1), max_weight=1)
    ours = rules.Remove(-2)  # player 0 removes its own block
    reference = before.play(ours).play(rules.Remove(-1))  # the opponent removes its own
    game, theirs = follow(before, ours, round_for(reference), 0)
    assert theirs == rules.Remove(-1)
    assert game.occupied() == [-4] and game.owner_at(-4) == rules.TABLE
    assert game.phase == rules.REMOVE and game.moves_made == 4 and game.round == 3


@pytest.mark.parametrize("seed", range(40))
def test_the_followed_game_is_the_game_the_server_referees(seed: int) -> None:
    """Random whole games: at each of our turns the rebuilt game equals the server's."""
    chooser = random.Random(seed)
    player = seed % 2
    reference = rules.Game.start(chooser.choice([1, 3, 7, 10]))
    known, our_move = reference, None
    while not reference.over:
        if reference.to_move == player:
            known, _ = follow(known, our_move, round_for(reference), player)
            assert known == reference
        moves = reference.legal_moves()
        safe = [m for m in moves if not reference.tips_after(m)]
        move = chooser.choice(safe or moves)
        if reference.to_move == player:
            our_move = move
        reference = reference.play(move)


# -- the terminal agent ---------------------------------------------------------------------


def scripted(*lines: str):  # type: ignore[no-untyped-def]
    typed = iter(lines)

    async def read_line() -> str | None:
        return next(typed, None)

    return read_line


async def test_the_terminal_checks_a_move_before_sending_and_warns_of_a_tip() -> None:
    game = played(rules.Add(2, -2))  # player 1 to move
    view = View(game, 1, 3, 1, rules.Add(2, -2))
    out = io.StringIO()
    agent = TerminalAgent(scripted("zz", "h", "-2", "2 -2", "9 0", "7 10", "n", "7 10", "y"), out)
    await agent.begin(3, 7, 1)
    assert await agent.move(view) == rules.Add(7, 10)
    said = out.getvalue()
    assert "game 3 begins: you are player 1 (your opponent moves first)" in said
    assert "opponent added 2 kg at -2" in said
    assert "'zz' is not a number" in said
    assert "sum of w*(x+3)" in said  # the help
    assert "weights are still being placed" in said  # "-2" in the add phase
    assert "position -2 is taken: not sent, try again" in said
    assert "there is no weight 9 (1..7): not sent" in said
    assert said.count("that move tips the board: you lose. Play it anyway? [y/N]") == 2
    assert "not played: your move" in said
    assert "you added 7 kg at 10; waiting for your opponent" in said


async def test_the_terminal_says_what_the_opponent_removed_and_its_weight() -> None:
    placed = played(rules.Add(1, -9), rules.Add(1, -3), rules.Add(2, -2), rules.Add(2, -1),
                    max_weight=2)  # fmt: skip
    out = io.StringIO()
    agent = TerminalAgent(scripted("-9", "-2", "y"), out)  # -2 then tips: confirmed
    assert await agent.move(View(placed, 0, 1, 3, rules.Add(2, -1))) == rules.Remove(-9)
    theirs = placed.play(rules.Remove(-9)).play(rules.Remove(-4))  # the initial 3 kg
    assert await agent.move(View(theirs, 0, 1, 4, rules.Remove(-4))) == rules.Remove(-2)
    said = out.getvalue().splitlines()
    assert "opponent added 2 kg at -1" in said
    assert "you removed 1 kg from -9; waiting for your opponent ..." in said
    assert "opponent removed 3 kg from -4" in said
    assert said.index("opponent removed 3 kg from -4") > said.index("opponent added 2 kg at -1")


async def test_quitting_or_the_end_of_input_leaves_the_game() -> None:
    view = View(rules.Game.start(7), 0, 1, 1)
    for lines in (("q",), ()):
        agent = TerminalAgent(scripted(*lines), io.StringIO())
        with pytest.raises(ClientError, match="you left the game"):
            await agent.move(view)


def test_the_end_is_told_with_the_tipping_move_drawn() -> None:
    game = played(rules.Add(1, -2), rules.Add(1, -1), max_weight=1)
    view = View(game, 0, 5, 3)
    tipped = GameEnd("lost", False, view, 2, 0, 5, rules.Remove(-4))
    text = describe(tipped)
    assert "you lost: your move (removed 3 kg from -4) tipped the board" in text
    assert "TIPPED" in text
    assert "you won" in describe(GameEnd("won", False, view, 2, 0, 5, rules.Remove(-2)))
    assert "answered INVALID" in describe(GameEnd("lost", True, view, 2, 0, 5, None))
    assert "without a tipping move" in describe(
        GameEnd("lost", False, view, 2, 0, 5, rules.Remove(-2))
    )


# -- against the real server, over TCP ------------------------------------------------------

WAIT = 10.0


def running(**settings: object) -> AbstractAsyncContextManager[NoTippingServer]:
    config = NoTippingConfig(**{"port": 0, **settings})  # type: ignore[arg-type]
    return servers.running(serve_notipping, config)


class Careful:
    """A test agent: the first move that does not tip, else the first move."""

    async def begin(self, game_number: int, max_weight: int, player: int) -> None:
        return None

    async def move(self, view: View) -> rules.Move:
        moves = view.game.legal_moves()
        return next((m for m in moves if not view.game.tips_after(m)), moves[0])


class Recorded(BotAgent):
    """A built-in player that keeps what it was shown and told."""

    def __init__(self, level: str, seed: str) -> None:
        super().__init__(make_player(level, seed))
        self.views: list[View] = []
        self.ends: list[GameEnd] = []

    async def move(self, view: View) -> rules.Move:
        self.views.append(view)
        return await super().move(view)

    async def ended(self, end: GameEnd) -> None:
        self.ends.append(end)


@pytest.mark.parametrize(("first", "second"), [("solver", "greedy"), ("random", "solver")])
async def test_two_bots_play_a_whole_game_and_agree_on_the_result(first: str, second: str) -> None:
    agents = [Recorded(first, f"{first}:0"), Recorded(second, f"{second}:1")]
    ends: dict[int, GameEnd] = {}
    async with running(max_weight=3) as server:

        async def play(player: int) -> None:
            agent, handle = agents[player], f"{agents[player].player.name}{player}"
            ends[player] = await play_one_game(server.address, handle, player, agent, timeout=WAIT)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, 0)
            nursery.start_soon(play, 1)
    assert sorted(end.result for end in ends.values()) == ["lost", "won"]
    [report] = server.reports
    assert report.handles == (f"{first}0", f"{second}1")
    assert ends[report.winner].won and not ends[report.loser].won
    assert report.reason == "tipped the board"
    assert not any(end.invalid for end in ends.values())
    assert ends[0].game_number == ends[1].game_number == report.number
    for player, agent in enumerate(agents):
        assert agent.ends == [ends[player]]  # ended() is told
        assert ends[player].rounds == len(agent.views)
        # Rebuilt with the right owners: a player's own blocks are the weights it placed.
        for view in agent.views:
            game = view.game
            assert game.to_move == player and game.max_weight == 3
            if game.phase == rules.ADD:
                own = [game.weight_at(p) for p in game.occupied() if game.owner_at(p) == player]
                assert sorted(own) == sorted({1, 2, 3} - game.hands[player])


async def test_a_taken_seat_is_one_clear_error() -> None:
    async with running() as server:
        holder = await trio.open_tcp_stream(*server.address)
        async with holder:
            await holder.send_all(b"JOINREQUEST:ann:0;\n")
            assert await holder.receive_some(100) == b"GRANTED;\n"
            with pytest.raises(
                ClientError, match=r"^seat 0 is taken \(or the request was refused\)$"
            ):
                await play_one_game(server.address, "bob", 0, Careful(), timeout=WAIT)


async def test_the_servers_verdict_reaches_a_player_still_thinking() -> None:
    class Thinking(Careful):
        async def move(self, view: View) -> rules.Move:
            await trio.sleep_forever()
            raise AssertionError

    ends: dict[int, GameEnd] = {}
    async with running(time_budget=0.2) as server:

        async def play(player: int, agent: Careful) -> None:
            ends[player] = await play_one_game(server.address, "ann", player, agent, timeout=WAIT)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, 0, Thinking())
            nursery.start_soon(play, 1, Careful())
    assert ends[0].result == "lost" and ends[0].invalid and ends[0].rounds == 0
    assert ends[1].won and ends[1].last_view is None


async def test_a_server_that_closes_mid_game_is_one_clear_error() -> None:
    async def grant_then_close(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.receive_some(100)
            await stream.send_all(b"GRANTED;\nBEGIN:1:7;\n")

    async with trio.open_nursery() as nursery:
        [listener] = await nursery.start(
            functools.partial(trio.serve_tcp, grant_then_close, 0, host="127.0.0.1")
        )
        address = listener.socket.getsockname()[:2]
        with pytest.raises(ClientError, match="closed the connection before the game ended"):
            await play_one_game(address, "ann", 0, Careful(), timeout=WAIT)
        nursery.cancel_scope.cancel()


# -- the commands: ring bot notipping, ring play notipping ----------------------------------


def client_args(address: tuple[str, int], name: str, seat: int, **more: object) -> Namespace:
    return Namespace(server=address, name=name, seat=seat, timeout=WAIT, **more)


def typed(move: rules.Move) -> str:
    if isinstance(move, rules.Add):
        return f"{move.weight} {move.position}"
    return f"remove {move.position}"


class Typist:
    """Types at the terminal like a careful person: a slip and the help first; a tipping
    move declined while a safe one is left, then the safe one; a tip confirmed when none is."""

    def __init__(self) -> None:
        self.agent: TerminalAgent | None = None
        self.planned: list[str] = ["zz", "h"]

    async def __call__(self) -> str | None:
        if not self.planned:
            assert self.agent is not None and self.agent.view is not None
            game = self.agent.view.game
            moves = game.legal_moves()
            safe = [m for m in moves if not game.tips_after(m)]
            tipping = [m for m in moves if game.tips_after(m)]
            if safe and tipping:
                self.planned = [typed(tipping[0]), "n", typed(safe[0])]
            elif safe:
                self.planned = [typed(safe[0])]
            else:
                self.planned = [typed(tipping[0]), "y"]
        return self.planned.pop(0)


async def test_a_person_at_the_terminal_plays_a_whole_game_against_a_bot() -> None:
    typist = Typist()
    out = io.StringIO()
    typist.agent = TerminalAgent(typist, out)
    async with running(max_weight=3) as server:
        ends: list[GameEnd] = []

        async def bot() -> None:
            agent = BotAgent.of_level("greedy", "bot:1")
            ends.append(await play_one_game(server.address, "bot", 1, agent, timeout=WAIT))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot)
            args = client_args(server.address, "me", 0)
            code = await terminal.run_terminal(args, typist.agent)
    assert code == 0
    said = out.getvalue()
    assert said.startswith(f"asking 127.0.0.1:{server.address[1]} for seat 0")
    assert "game 1 begins: you are player 0 (you move first)" in said
    assert " position -10 -9" in said and "   blocks " in said
    assert "'zz' is not a number" in said and "sum of w*(x+3)" in said
    assert "that move tips the board: you lose. Play it anyway? [y/N]" in said
    assert "\nopponent added " in said
    [bot_end] = ends
    [report] = server.reports
    mine = "you won" if report.winner == 0 else "you lost"
    assert said.rstrip().splitlines()[-1].startswith(f"game over: {mine}")
    assert bot_end.won == (report.winner == 1)


async def test_ring_bot_notipping_prints_a_line_a_game_and_the_tally(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with running(max_weight=5) as server:
        args = client_args(
            server.address, "ann", 0, command="bot", level="greedy", seed=7, games=2, depth=None
        )
        theirs: list[GameEnd] = []
        codes: list[int] = []

        async def ring_bot() -> None:
            # client.run starts its own Trio loop: in a thread, beside the server's.
            codes.append(await trio.to_thread.run_sync(client.run, args))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ring_bot)
            for _ in range(2):
                end = await play_one_game(server.address, "bob", 1, Careful(), timeout=WAIT)
                theirs.append(end)
    assert codes == [0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3, lines
    for line, their_end in zip(lines, theirs, strict=False):
        result = "lost" if their_end.won else "won"
        assert line == f"ann (greedy, player 0) {result} game {their_end.game_number}"
    won = sum(not end.won for end in theirs)
    assert lines[2] == f"ann: {won} won, {2 - won} lost"


def test_ring_bot_notipping_without_a_server_exits_1_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with refusing_port() as port:
        address = ("127.0.0.1", port)
        args = client_args(
            address, "ann", 1, command="bot", level="random", seed=None, games=3, depth=None
        )
        assert client.run(args) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"ann: cannot reach the server at 127.0.0.1:{address[1]}")


def test_an_interrupt_exits_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def interrupted(args: Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(terminal, "run_terminal", interrupted)
    args = client_args(("127.0.0.1", 1), "ann", 0, command="play")
    assert client.run(args) == 130
    assert capsys.readouterr().err == "interrupted\n"
