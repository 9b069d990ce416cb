"""What the table makes of an ``accuse`` request (protocol 5.9 and 14).

A peer that sees something only a cheat or a bug explains tells the table,
naming the player and the rule, before it leaves. The table cannot see what
passes between peers, so it weighs each accusation by what it can know:

- **Evidence from a connection the accuser dialled** (``second_pick``,
  ``bad_picks``, ``false_out``): the accuser reached that seat's own
  listener, so it knows who answered. The table checks what it can (the
  accused sits where such an exchange happens; ``false_out``: the table
  still counts it in) and names the accused, with the rule. Refused when
  the check fails; the game then goes on.
- **Evidence about a card or a turn that reached the accuser** (a duplicate
  card, a second Old Maid, a turn or a pass from a player who cannot hold
  the turn): anyone can dial a peer and speak as another player, and a
  forged card passes from hand to hand before anyone holds its twin, so the
  accuser cannot know who sent it or who forged it. The table ends the game
  saying what was seen, and names no one (verified games can).

The accuser is never named for accusing. Two players accusing each other
within ``window`` of each other cancel out: the table cannot tell which one
lies, so it ends the game naming neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Evidence from a connection the accuser dialled: the accused is named.
NAMED = {
    # rule: (what the accused did, as words after its nick; where it sits from the accuser)
    "second_pick": (
        "picked twice from one offer of {accuser}'s (one pick per accepted offer, protocol 6.3)",
        "left",
    ),
    "bad_picks": (
        "kept picking card numbers outside {accuser}'s offer (0 <= card_num < num_cards, 6.3)",
        "left",
    ),
    "false_out": (
        "answered out to {accuser} while the table still counts it in (a player is out only "
        "once the table has acknowledged it, 7.8)",
        None,
    ),
    # Protocol 14.5: a turn that claims a player it is not from. The accused
    # proved who it is on that connection, or is the only player of the game
    # that sends no proofs; without either, the table names no one.
    "impersonation": (
        "sent {accuser} a turn as another player (the connection proved otherwise, or sent no "
        "proof where every other player proves itself: protocol 14.5)",
        None,
    ),
}
# An accusation of these may leave the accused out: the table then names no one.
MAY_NAME = frozenset({"impersonation"})
# A turn no player could send, from a sender known by its proof (evidence
# ``proved``, protocol 14.5): named as impersonation is; else no one.
PROVABLE = {
    "not_neighbour": "handed {accuser} a turn it cannot hold (its proof says who sent it)",
    "pass_while_in": "passed {accuser} the turn (num_cards 0) while it cannot pass (its proof "
    "says who sent it)",
}
# Evidence about what reached the accuser: the table names no one.
UNNAMED = {
    "duplicate_card": "a card that exists twice",
    "second_joker": "a second Old Maid",
    "not_neighbour": "a turn from a player who cannot hold the turn",
    "pass_while_in": "a pass (num_cards 0) from a player who cannot pass",
    "wrong_card": "a card that is not the one the offer committed to (protocol 14.6)",
}
RULES = frozenset(NAMED) | frozenset(UNNAMED)


@dataclass(frozen=True)
class Accusation:
    accuser: str
    accused: str | None
    rule: str
    evidence: dict[str, Any]

    @property
    def proved(self) -> bool:
        """A turn whose sender its proof makes certain (protocol 14.5)."""
        return self.rule in PROVABLE and self.evidence.get("proved") is True

    @property
    def names(self) -> bool:
        """Whether the table names the accused (evidence from a dialled connection,
        or a proved sender)."""
        return (self.rule in NAMED or self.proved) and self.accused is not None

    @property
    def side(self) -> str | None:
        return NAMED[self.rule][1] if self.rule in NAMED else None

    def verdict(self) -> str:
        """The abort reason when the table takes this accusation as it stands."""
        if self.names:
            template = PROVABLE[self.rule] if self.proved else NAMED[self.rule][0]
            clause = template.format(accuser=self.accuser)
            return f"{self.accused} {clause}; reported by {self.accuser}{self.said()}"
        if self.rule == "impersonation":
            return (
                f"a turn sent to {self.accuser} as another player: reported by {self.accuser}"
                f"{self.said()}; the sender proved no identity and more than one player sends "
                "no proofs, so the table names no one"
            )
        title = UNNAMED.get(self.rule) or self.rule.replace("_", " ")
        sender = f" (from {self.accused}, as {self.accuser} was told)" if self.accused else ""
        return (
            f"{title}{sender}: reported by {self.accuser}{self.said()}; the table cannot see "
            "who sent it or where the card came from (any player can dial a peer, and a forged "
            "card passes between hands before its twin turns up), so it names no one"
        )

    def said(self) -> str:
        what = self.evidence.get("what")
        return f" ({' '.join(what.split())[:300]})" if isinstance(what, str) and what else ""


def mutual(first: Accusation, second: Accusation) -> str:
    """The abort reason when two players accuse each other: the table cannot tell."""
    return (
        f"{first.accuser} and {second.accuser} accuse each other ({first.rule}, {second.rule}); "
        "the table cannot see the messages between them, so it cannot tell which one lies and "
        "names neither"
    )
