"""The Old Maid connection state machine, sans-IO.

Bytes go in with ``receive_data``; events come out of ``next_event``.
Messages go in with ``send``; bytes come out, to be written in one write.
No sockets, no clock: the Trio layer (``ring.wire.transport``) drives it, and the
tests drive two of them against each other.

Every connection is a strict request/reply exchange (docs/protocols/oldmaid.md
3): a side never sends a second request before the reply to its first, with
one exception:
the reports of a verified game (``received``, ``gave``: protocol 14.6) go to
the table without waiting, and any request may follow them; the table
answers in the order they came. Which requests a side
may receive depends on its role:

- ``TABLE_SERVER`` receives join, draw, discard, out_of_cards, status,
  left_with_turn, give_up and accuse;
- ``TABLE_CLIENT`` receives replies and the table's ``game_over`` notice;
- ``OFFERER`` (the side that dialled its left neighbour) sends your_turn and
  offer, and answers the pick that follows an accepted offer;
- ``PICKER`` (the side that accepted) answers your_turn and offer, and after
  answering ``ok`` to an offer of n > 0 cards sends pick.

A request that is malformed or makes no sense here comes out as ``Invalid``
and must be answered (``error``); the connection stays usable. A reply that
makes no sense, or a message over the size limit, raises
``RemoteProtocolError``: the connection cannot be trusted any more.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass

from ring.oldmaid.messages import (
    Accuse,
    BadMessage,
    CheckOffer,
    Discard,
    Draw,
    DrawTurn,
    GameOver,
    Gave,
    GiveUp,
    Join,
    LeftWithTurn,
    Message,
    Move,
    Offer,
    OutOfCards,
    Pick,
    Received,
    Reply,
    Request,
    Status,
    Witness,
    Witnessed,
    YourTurn,
    decode,
    encode,
)
from ring.wire.framing import DEFAULT_MAX_MESSAGE, Garbage, JsonObjectSplitter, MessageTooLarge
from ring.wire.sansio import NEED_DATA, Closed, Invalid, NeedData

# Every protocol's one pair of errors (ring.wire.sansio), named here too for this game's users.
from ring.wire.sansio import LocalProtocolError as LocalProtocolError
from ring.wire.sansio import ProtocolError as ProtocolError
from ring.wire.sansio import RemoteProtocolError as RemoteProtocolError


class Role(enum.Enum):
    TABLE_CLIENT = "table client"
    TABLE_SERVER = "table"
    OFFERER = "offerer"
    PICKER = "picker"


@dataclass(frozen=True, slots=True)
class Answered:
    """The other side's reply to our request."""

    request: Request
    reply: Reply


@dataclass(frozen=True, slots=True)
class Farewell:
    """An error written just before closing a connection that broke the framing.

    It answers no request (none could be framed), so it bypasses the
    bookkeeping; nothing may be sent after it.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class ExtraPick:
    """A second pick on a link whose accepted offer has had its card: only a cheat or a
    bug sends it. It is owed an ``error`` reply, like an invalid request."""

    pick: Pick


Event = Request | Answered | ExtraPick | Invalid | Closed | NeedData

TABLE_REQUESTS: tuple[type[Message], ...] = (
    Join,
    Draw,
    Discard,
    OutOfCards,
    Status,
    LeftWithTurn,
    GiveUp,
    Accuse,
    Received,
    Gave,
    Witness,
    CheckOffer,
    Move,
)
# Sent without waiting for their replies (14.6): the reports, and the moves of an exchange
# the table witnesses, which must keep their place among the reports.
_REPORTS = (Received, Gave, Move)
# What the table sends unasked, answered by no one: the end, and a witnessed exchange.
_NOTICES = (GameOver, Witnessed, DrawTurn)
_ACCEPTS: dict[Role, tuple[type[Message], ...]] = {
    Role.TABLE_SERVER: TABLE_REQUESTS,
    Role.TABLE_CLIENT: _NOTICES,
    Role.OFFERER: (Pick,),
    Role.PICKER: (YourTurn, Offer),
}
_SENDS: dict[Role, tuple[type[Message], ...]] = {
    Role.TABLE_SERVER: _NOTICES,
    Role.TABLE_CLIENT: TABLE_REQUESTS,
    Role.OFFERER: (YourTurn, Offer),
    Role.PICKER: (Pick,),
}
# Which results a reply to each request may carry, and what an ``ok`` needs.
_RESULTS: dict[type[Message], frozenset[str]] = {
    Join: frozenset({"ok", "error"}),
    Draw: frozenset({"ok", "last_card", "error"}),
    Discard: frozenset({"ok", "error"}),
    OutOfCards: frozenset({"ok", "error"}),
    Status: frozenset({"ok", "error"}),
    LeftWithTurn: frozenset({"ok", "error"}),
    GiveUp: frozenset({"ok", "error"}),
    Accuse: frozenset({"ok", "error"}),
    Received: frozenset({"ok", "error"}),
    Gave: frozenset({"ok", "error"}),
    Witness: frozenset({"ok", "error"}),
    CheckOffer: frozenset({"ok", "error"}),
    Move: frozenset({"ok", "error"}),
    YourTurn: frozenset({"ok", "out", "error"}),
    Offer: frozenset({"ok", "out", "error"}),
    Pick: frozenset({"ok", "error"}),
}


def _reply_problem(request: Request, reply: Reply) -> str | None:
    if reply.result not in _RESULTS[type(request)]:
        return f"{reply.result!r} is not an answer to {request_name(request)}"
    if reply.result == "error":
        return None
    if isinstance(request, (Draw, Pick)) and reply.card is None:
        return f"the reply to {request_name(request)} carries no card"
    if isinstance(request, Join) and not reply.players:
        return "the reply to join carries no players"
    if isinstance(request, Status) and (reply.in_ is None or reply.out is None):
        return "the reply to status lacks in or out"
    return None


def request_name(request: Message) -> str:
    return type(request).__struct_config__.tag  # type: ignore[return-value]


class Link:
    """One end of one Old Maid connection."""

    def __init__(self, role: Role, max_message: int = DEFAULT_MAX_MESSAGE) -> None:
        self.role = role
        self._splitter = JsonObjectSplitter(max_message)
        self._eof = False
        # Our requests awaiting their replies, oldest first: one, or reports before one.
        self._ours: deque[Request] = deque()
        # Their requests we still have to answer, oldest first; None for an
        # invalid one.
        self._owed: deque[Request | None] = deque()
        self._picking = False  # an accepted offer awaits its pick
        self._served = False  # the last accepted offer's pick has had its card

    @property
    def awaiting_reply(self) -> Request | None:
        return self._ours[0] if self._ours else None

    @property
    def owes_reply(self) -> bool:
        return bool(self._owed)

    # -- sending -----------------------------------------------------------

    def send(self, message: Message | Reply | Farewell) -> bytes:
        if isinstance(message, Farewell):
            return encode(Reply(result="error", message=message.reason))
        if isinstance(message, Reply):
            self._sent_reply(message)
        else:
            self._sent_request(message)
        return encode(message)

    def _sent_request(self, request: Message) -> None:
        if not isinstance(request, _SENDS[self.role]):
            raise LocalProtocolError(f"a {self.role.value} does not send {request_name(request)}")
        if isinstance(request, _NOTICES):
            return  # a notice, never answered
        # Reports ride off the critical path (14.6): one may follow any request, and any
        # request may follow reports; the table answers them all in order.
        after_reports = all(isinstance(r, _REPORTS) for r in self._ours)
        pipelined = isinstance(request, _REPORTS) or after_reports
        if self._ours and not pipelined:
            raise LocalProtocolError(
                f"{request_name(request)} sent before the reply to {request_name(self._ours[0])}"
            )
        if isinstance(request, Pick) and not self._picking:
            raise LocalProtocolError("pick sent without an accepted offer")
        self._ours.append(request)  # type: ignore[arg-type]

    def _sent_reply(self, reply: Reply) -> None:
        if not self._owed:
            raise LocalProtocolError("reply sent with no request to answer")
        answered = self._owed.popleft()
        if isinstance(answered, Offer):
            self._picking = reply.ok and answered.num_cards > 0
        elif isinstance(answered, Pick):
            self._picking = not reply.ok
            self._served = reply.ok

    # -- receiving ---------------------------------------------------------

    @property
    def pending(self) -> bool:
        """Whether the next event may come without a read: bytes are buffered, or the
        other side has closed (``ring.wire.transport.Connection`` yields before such an event)."""
        return self._eof or self._splitter.buffered > 0

    def receive_data(self, data: bytes) -> None:
        """Bytes from the other side; ``b""`` means it closed its end."""
        if data:
            self._splitter.feed(data)
        else:
            self._eof = True

    def next_event(self) -> Event:
        try:
            frame = self._splitter.next_frame()
        except MessageTooLarge as exc:
            raise RemoteProtocolError(str(exc)) from None
        if frame is None:
            return Closed() if self._eof else NEED_DATA
        if isinstance(frame, Garbage):
            return self._bad(frame.reason)
        try:
            message = decode(frame)
        except BadMessage as exc:
            return self._bad(str(exc))
        if isinstance(message, Reply):
            return self._received_reply(message)
        return self._received_request(message)

    def _bad(self, reason: str) -> Invalid:
        if self._ours:
            raise RemoteProtocolError(f"malformed reply to {request_name(self._ours[0])}: {reason}")
        self._owed.append(None)
        return Invalid(reason)

    def _received_reply(self, reply: Reply) -> Answered:
        request = self._ours[0] if self._ours else None
        if request is None:
            raise RemoteProtocolError(f"a reply ({reply.result!r}) that answers no request")
        problem = _reply_problem(request, reply)
        if problem is not None:
            raise RemoteProtocolError(problem)
        self._ours.popleft()
        if isinstance(request, Offer):
            self._picking = reply.ok and request.num_cards > 0
            self._served = self._served and not self._picking
        elif isinstance(request, Pick):
            self._picking = not reply.ok
        return Answered(request, reply)

    def _received_request(self, request: Request) -> Request | Invalid:
        if isinstance(request, _NOTICES) and self.role is Role.TABLE_CLIENT:
            return request
        if not isinstance(request, _ACCEPTS[self.role]):
            return self._bad(f"{request_name(request)} is not a request a {self.role.value} takes")
        if isinstance(request, Pick) and self._served and not self._picking:
            self._owed.append(None)  # answered with an error, as an invalid request
            return ExtraPick(request)
        if self._ours:
            return self._bad(
                f"{request_name(request)} arrived while {request_name(self._ours[0])} awaits its "
                "reply"
            )
        if isinstance(request, Pick):
            if not self._picking:
                return self._bad("pick without an accepted offer")
            self._picking = False
        self._owed.append(request)
        return request
