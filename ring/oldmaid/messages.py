"""The Old Maid messages as msgspec Structs.

Requests (and the table's ``game_over`` notice) are a tagged union on
``cmd``; every reply is one ``Reply`` struct whose fields depend on the
request it answers. Decoding errors name the offending field, as msgspec
reports it (``... - at `$.nick```), so an error reply tells a student exactly
what to fix. Extra fields are ignored (docs/protocols/oldmaid.md 3).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ring.oldmaid.cards import Card, parse_card

NICK_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
Nick = Annotated[str, msgspec.Meta(pattern=NICK_PATTERN)]
Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
WireCard = tuple[str, str]
Address = tuple[str, int]
# Verified exchanges (protocol 14.6): hex strings and exchange numbers.
Hex = Annotated[str, msgspec.Meta(max_length=64, pattern=r"^[0-9a-fA-F]*$")]
Hashes = Annotated[list[Hex], msgspec.Meta(max_length=53)]
Seq = Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]


class BadMessage(ValueError):
    """A message that is not valid Old Maid; the text says what is wrong."""


class Message(msgspec.Struct, tag_field="cmd", omit_defaults=True):
    """Anything that carries ``cmd``."""


class Join(Message, tag="join"):
    nick: Nick
    port: Port | None = None
    host: str | None = None
    watch: bool = False
    # Our extra field (protocol 14.5): send me a secret and the proofs to expect.
    verify: bool = False
    # With verify (protocol 14.6): I ask the table to witness an exchange I cannot
    # finish, and make my moves of one it witnesses.
    witness: bool = False
    # Our extra field (protocol 5.1, 13.2): I read my table connection as a stream, so a
    # notice may follow a reply at once (without it, the table pauses between the two).
    stream: bool = False


class Draw(Message, tag="draw"):
    pass


class Discard(Message, tag="discard"):
    cards: list[WireCard]
    last_cards: str | bool | None = None
    last_card: str | bool | None = None

    def __post_init__(self) -> None:
        if len(self.cards) != 2:
            raise ValueError(f"`cards` must hold two cards, got {len(self.cards)} - at `$.cards`")
        self.cards = [_card_field(card, f"$.cards[{i}]") for i, card in enumerate(self.cards)]
        _flag(self.last_cards, "last_cards")
        _flag(self.last_card, "last_card")

    @property
    def declares_out(self) -> bool:
        """True when either spelling of the flag says the hand is now empty."""
        return _flag(self.last_cards, "last_cards") or _flag(self.last_card, "last_card")


class OutOfCards(Message, tag="out_of_cards"):
    pass


class Status(Message, tag="status"):
    pass


class YourTurn(Message, tag="your_turn"):
    # ``from`` is our own extra field (extra fields are allowed and ignored):
    # it names the sender for the receiver's event log. Others may omit it.
    sender: str | None = msgspec.field(default=None, name="from")
    proof: str | None = None  # who ``from`` is, proved (protocol 14.5; ring.oldmaid.proofs)
    mac: Hex | None = None  # in a verified game (protocol 14.6; ring.oldmaid.exchanges)


class Offer(Message, tag="offer"):
    num_cards: Annotated[int, msgspec.Meta(ge=0, le=53)]
    sender: str | None = msgspec.field(default=None, name="from")
    proof: str | None = None
    # Our extra field: this offerer reads a stream of messages, so the
    # picker may send ``pick`` right behind its ``ok``. Older clients read
    # one message per ``recv`` and never send it; a picker then pauses.
    stream: bool = False
    # Verified exchanges (protocol 14.6; ring.oldmaid.exchanges): the exchange's
    # number, one hash a card offered, and the offerer's HMAC of it all.
    seq: Seq | None = None
    hashes: Hashes | None = None
    mac: Hex | None = None


class Pick(Message, tag="pick"):
    card_num: int
    # A verified game's picker signs its pick (protocol 14.6): two different signed
    # picks from one offer prove a second pick.
    mac: Hex | None = None


class LeftWithTurn(Message, tag="left_with_turn"):
    """A peer's report to the table: ``nick`` took the turn, went out and left."""

    nick: Nick


class GiveUp(Message, tag="give_up"):
    """A player's last word to the table before it leaves a game it cannot go on with.

    ``nick`` is the player it blames (one that fell silent, or broke the
    protocol towards it), or None when it cannot tell who; ``reason`` says
    what went wrong, as a clause that follows the nick ("did not answer
    offer within 10 s"). The table then aborts the game naming ``nick``, not
    the player who waited for it (docs/protocols/oldmaid.md 5.7 says a player
    who is still in and leaves aborts the game; this says why).
    """

    nick: Nick | None = None
    reason: Annotated[str, msgspec.Meta(max_length=500)] = ""


class Accuse(Message, tag="accuse"):
    """A player's report to the table that ``accused`` broke ``rule`` (protocol 5.9).

    Sent before the player leaves, when it saw something only a cheat or a
    bug explains. ``nick`` is the accuser's own nick (optional: the table
    knows who is speaking); ``accused`` may be None when the accuser cannot
    tell who sent what it saw; ``evidence`` says what it saw (free form; a
    ``what`` string, in words, goes into the abort reason).
    """

    rule: Annotated[str, msgspec.Meta(max_length=40)]
    nick: Nick | None = None
    accused: Nick | None = None
    evidence: dict[str, Any] = msgspec.field(default_factory=dict)


class Received(Message, tag="received"):
    """A verified picker's report (protocol 14.6): the offer it took, as it came, and
    what it picked; an offer of no cards (a pass) has no pick."""

    sender: Nick = msgspec.field(name="from")
    seq: Seq
    num_cards: Annotated[int, msgspec.Meta(ge=0, le=53)]
    hashes: Hashes
    mac: Hex
    card_num: Annotated[int, msgspec.Meta(ge=0, le=53)] | None = None
    # A card is [value, suit] (protocol 4); a report also may write it as an object, as
    # an earlier example of 14.6 did: the table reads both (liberal in what it accepts).
    card: WireCard | dict[str, str] | None = None
    salt: Hex | None = None

    def __post_init__(self) -> None:
        if isinstance(self.card, dict):
            self.card = _card_object(self.card, "$.card")
        elif self.card is not None:
            self.card = _card_field(self.card, "$.card")


class Gave(Message, tag="gave"):
    """A verified offerer's report (protocol 14.6): it handed exchange ``seq`` to ``to``,
    whose ``ok`` carried ``ack`` and which picked ``pick``; ``salts`` open every position
    of its commitment, so the table checks the offer was its whole hand, each card once."""

    to: Nick
    seq: Seq
    mac: Hex
    ack: Hex | None = None
    salts: Hashes | None = None
    # The receiver's signed pick: proof it took the exchange when its ack is not its own.
    pick: PickSeen | None = None


class GameOver(Message, tag="game_over"):
    """The table's notice to watching connections; it gets no reply."""

    loser: str | None = None
    out: list[str] | None = None
    aborted: bool = False
    reason: str | None = None
    undiscarded: int = 0  # pairs never discarded (a player went out holding them)


class OfferSeen(msgspec.Struct, omit_defaults=True):
    """An offer of a verified game as it was sent or came (protocol 14.6), inside the
    table's witness messages: its words, without the link's own fields."""

    sender: Nick = msgspec.field(name="from")
    seq: Seq
    num_cards: Annotated[int, msgspec.Meta(ge=0, le=53)]
    hashes: Hashes
    mac: Hex


class PickSeen(msgspec.Struct, omit_defaults=True):
    """A verified pick (its position and the picker's mac), inside a witness message."""

    card_num: Annotated[int, msgspec.Meta(ge=0, le=53)]
    mac: Hex


class Answer(msgspec.Struct, omit_defaults=True):
    """A receiver's answer to an offer, inside a witness message: ``ok`` or ``out``,
    with its ack (protocol 14.6)."""

    result: Literal["ok", "out"]
    ack: Hex


class Witness(Message, tag="witness"):
    """A verified player's request (protocol 14.6, the table as witness): finish this
    exchange with ``to`` through the table. ``ack``: the offerer has the receiver's
    ``ok``; ``pick``: the receiver picked and waits for the card."""

    to: Nick
    offer: OfferSeen
    ack: Hex | None = None
    pick: PickSeen | None = None
    answer: Answer | None = None  # an out the table does not count, as it came


class CheckOffer(Message, tag="check_offer"):
    """A receiver's request in a witnessed game (protocol 14.6, "Checking an offer"):
    does this offer, as it came, carry its offerer's mac? Sent before answering it ``ok``;
    an ``error`` reply means the offer is not taken directly."""

    offer: OfferSeen


class Move(Message, tag="move"):
    """The move a player owes in an exchange the table witnesses (protocol 14.6): the
    offerer's ``offer`` (after its receiver's check found its mac bad), the receiver's
    ``answer`` or ``pick``, or the offerer's ``card`` and ``salt``."""

    seq: Seq
    offer: OfferSeen | None = None
    answer: Answer | None = None
    pick: PickSeen | None = None
    card: WireCard | None = None
    salt: Hex | None = None

    def __post_init__(self) -> None:
        if self.card is not None:
            self.card = _card_field(self.card, "$.card")


class Witnessed(Message, tag="witnessed"):
    """The table's notice of a witnessed exchange as it stands (protocol 14.6): sent to
    both its players at every step; no reply. ``owes`` the player whose ``move`` it is
    (None, ``move`` "done": complete)."""

    seq: int
    step: int
    offerer: str
    receiver: str
    offer: OfferSeen
    owes: str | None
    move: str
    answer: str | None = None
    ack: str | None = None
    pick: PickSeen | None = None
    card: WireCard | None = None
    salt: str | None = None


class DrawTurn(Message, tag="draw_turn"):
    """The table hands the draw turn on in a witnessed game (protocol 14.6, "The draw
    turn"): draw ``draw`` (the card's number, 1 to 53) is ``to``'s, as ``sender`` (the
    player that drew before, None before the first draw) was to hand it on. Sent to both;
    no reply. ``to`` draws within 2 s or the table names it."""

    to: str
    draw: Annotated[int, msgspec.Meta(ge=1, le=53)]
    sender: str | None = msgspec.field(default=None, name="from")


Request = (
    Join
    | Draw
    | Discard
    | OutOfCards
    | Status
    | LeftWithTurn
    | GiveUp
    | Accuse
    | Received
    | Gave
    | YourTurn
    | Offer
    | Pick
    | Witness
    | CheckOffer
    | Move
    | GameOver
    | Witnessed
    | DrawTurn
)

Result = Literal["ok", "error", "out", "last_card"]


class Reply(msgspec.Struct, omit_defaults=True):
    result: Result
    message: str | None = None
    card: WireCard | None = None
    players: list[tuple[Address, str]] | None = None
    in_: list[str] | None = msgspec.field(default=None, name="in")
    out: list[str] | None = None
    state: str | None = None
    game_over: bool | None = None
    loser: str | None = None
    aborted: bool | None = None
    reason: str | None = None
    undiscarded: int | None = None
    # A verified join's reply (protocol 14.5): this player's secret, and the
    # proof each other verified player sends it; ``verified`` in status.
    secret: str | None = None
    proofs: dict[str, str] | None = None
    verified: list[str] | None = None
    # Verified exchanges (protocol 14.6): the join reply's "report every exchange",
    # the receiver's ack in its ok (or out) to an offer, the picked card's salt.
    report: bool | None = None
    witness: bool | None = None  # the join reply of a witnessed game (the table as witness)
    ack: str | None = None
    salt: str | None = None

    def __post_init__(self) -> None:
        if self.card is not None:
            self.card = _card_field(self.card, "$.card")

    @property
    def ok(self) -> bool:
        return self.result == "ok"


def ok(**fields: Any) -> Reply:
    return Reply(result="ok", **fields)


def error(message: str) -> Reply:
    return Reply(result="error", message=message)


def _card_field(card: WireCard, where: str) -> Card:
    try:
        return parse_card(*card)
    except ValueError as exc:
        raise ValueError(f"{exc} - at `{where}`") from None


def _card_object(card: dict[str, str], where: str) -> Card:
    if set(card) != {"value", "suit"}:
        raise ValueError(f"a card is [value, suit] or {{value, suit}} - at `{where}`")
    return _card_field((card["value"], card["suit"]), where)


def _flag(value: str | bool | None, name: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ValueError(f"`{name}` must be true or false, got {value!r} - at `$.{name}`")


_encoder = msgspec.json.Encoder()


def encode(message: Message | Reply) -> bytes:
    """One message as the bytes of one write: compact JSON and a newline."""
    return _encoder.encode(message) + b"\n"


# Typed decoders read a well-formed message straight from its bytes, ten times
# faster than a dict converted afterwards (a handoff decodes half a dozen).
_request_decoder = msgspec.json.Decoder(Request)
_reply_decoder = msgspec.json.Decoder(Reply)


def decode(frame: bytes) -> Request | Reply:
    """A request (it has ``cmd``) or a reply (it has ``result``), or ``BadMessage``."""
    # The fast path takes only what the full one below would decode the same way; any
    # doubt (no such key, a bad field, a frame with both) goes the full way, which
    # also says what is wrong the way it always has.
    has_cmd, has_result = b'"cmd"' in frame, b'"result"' in frame
    if has_cmd != has_result:
        try:
            return (_request_decoder if has_cmd else _reply_decoder).decode(frame)
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
    return decode_thoroughly(frame)


def decode_thoroughly(frame: bytes) -> Request | Reply:
    """``decode`` without its fast path: every frame as a dict first, then converted."""
    try:
        raw = msgspec.json.decode(frame)
    except msgspec.DecodeError as exc:
        raise BadMessage(f"invalid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise BadMessage("expected a JSON object")
    try:
        if "cmd" in raw:
            return msgspec.convert(raw, Request)
        if "result" in raw:
            return msgspec.convert(raw, Reply)
    except msgspec.ValidationError as exc:
        raise BadMessage(_describe(exc, raw)) from None
    raise BadMessage('a message needs "cmd" (a request) or "result" (a reply)')


def _describe(exc: msgspec.ValidationError, raw: dict[str, Any]) -> str:
    text = str(exc)
    if text.startswith("Invalid value") and text.endswith("at `$.cmd`"):
        return f"unknown cmd {raw.get('cmd')!r}"
    return text
