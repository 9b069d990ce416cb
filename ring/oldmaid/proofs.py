"""Who is on the other end (protocol 5.1, 6 and 14.5): a player's proof of who it is.

A client that joins with ``"verify": true`` gets, in its join reply, a
``secret`` of its own for this game and the ``proofs`` it should expect:
for each other player that also asked, the proof that player sends it. A
proof is ``HMAC-SHA256(secret of the sender, nick of the receiver)`` (hex,
the first 32 digits), so the sender computes it from its own secret and the
table, which made every secret, tells each receiver what to expect; no
player learns another's secret, and a proof sent to one player is no use
with another. A verified sender puts ``proof`` beside ``from`` on every
``your_turn`` and ``offer`` it sends.

``Identity`` is the peer's side: the proof to send to a seat, and the check
of a turn that reaches it (``check``): a turn on a connection that proved
one player and claims another, a wrong proof, or no proof where every
player who could have sent it proves itself, is ``impersonation``. Older
clients, which neither prove nor expect proofs, are taken as before.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

PROOF_DIGITS = 32


def game_key(seed: int) -> bytes:
    """A table's key for one game, from the game's seed: every secret of the game is
    derived from it. From the seed, not fresh randomness, so a game replays whole
    from its seed (the fuzzing rounds compare transcripts byte for byte); it is as
    secret as the seed, which by default is a keyed hash of a secret printed
    nowhere, and never sent to a player. With a published ``--seed`` the
    secrets are as predictable as the deal already is."""
    return hashlib.sha256(f"oldmaid-proofs:{seed}".encode()).digest()


def secret_for(key: bytes, nick: str) -> str:
    """The game secret the table gives ``nick`` (hex)."""
    return hmac.new(key, b"secret:" + nick.encode(), hashlib.sha256).hexdigest()[:PROOF_DIGITS]


def proof(secret: str, to: str) -> str:
    """What the holder of ``secret`` sends ``to`` to say who it is."""
    return hmac.new(secret.encode(), to.encode(), hashlib.sha256).hexdigest()[:PROOF_DIGITS]


def expected_proofs(key: bytes, receiver: str, verified: Iterable[str]) -> dict[str, str]:
    """The proofs ``receiver`` should expect, by sender: one for each other verified player."""
    return {nick: proof(secret_for(key, nick), receiver) for nick in verified if nick != receiver}


class Forged(Exception):
    """A turn that says it is from someone it cannot be from.

    ``culprit``: the player that sent it, where the connection proved who it
    is (or the only player that sends no proofs); ``what``: words."""

    def __init__(self, culprit: str | None, what: str) -> None:
        super().__init__(what)
        self.culprit = culprit
        self.what = what


class Identity:
    """One peer's proofs: its own secret, and what it expects from the others.

    Without a secret (an older table, or no ``verify``) nothing is sent or checked.
    """

    def __init__(self) -> None:
        self.nick = ""
        self.secret: str | None = None
        self.expected: dict[str, str] = {}  # sender -> the proof it sends us
        self.others: list[str] = []  # every other player of the game
        self._sent: dict[str, str] = {}  # the proof we send each player

    def take(
        self, nick: str, others: list[str], secret: str | None, expected: dict[str, str] | None
    ) -> None:
        self.nick, self.others = nick, [n for n in others if n != nick]
        self.secret = secret
        self.expected = dict(expected or {}) if secret is not None else {}

    def proof_to(self, nick: str) -> str | None:
        if self.secret is None:
            return None
        if nick not in self._sent:  # one HMAC a receiver, not one a turn
            self._sent[nick] = proof(self.secret, nick)
        return self._sent[nick]

    def known(self, sender: str | None, proved: str | None) -> str | None:
        """Who sent a turn that passed ``check``, where that is certain: the player the
        connection proved, or else the one player of the game that sends no proofs
        (every other one proves itself on every turn). None when it cannot be told."""
        if proved is not None or not self.expected:
            return proved
        unproved = [n for n in self.others if n not in self.expected]
        if len(unproved) == 1 and sender in (None, unproved[0]):
            return unproved[0]
        return None

    def check(self, sender: str | None, given: str | None, proved: str | None) -> str | None:
        """Who a turn comes from, proved (or None); raises ``Forged`` if it cannot be.

        ``sender`` is its ``from``, ``given`` its ``proof``, ``proved`` whom the
        connection it came on has proved so far.
        """
        if not self.expected:
            return proved  # no one proves to us: taken as before
        claimed = sender if sender in self.expected or sender in self.others else None
        if given is not None:
            if claimed is None or not hmac.compare_digest(self.expected.get(claimed, ""), given):
                raise Forged(proved, f"sent a turn as {sender} with a proof that is not {sender}'s")
            if proved is not None and proved != claimed:
                raise Forged(proved, f"proved it is {proved}, then sent a turn as {claimed}")
            return claimed
        if proved is not None:
            if claimed is not None and claimed != proved:
                raise Forged(proved, f"proved it is {proved}, then sent a turn as {claimed}")
            return proved
        unproved = [n for n in self.others if n not in self.expected]
        if claimed in self.expected or (claimed is None and not unproved):
            who = "as " + claimed if claimed else "with no from"
            culprit = unproved[0] if len(unproved) == 1 else None
            raise Forged(
                culprit,
                f"sent a turn {who} without a proof, and "
                + (f"{claimed} proves itself" if claimed else "every player proves itself"),
            )
        return None
