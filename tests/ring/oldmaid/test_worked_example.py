"""The worked example of docs/protocols/oldmaid.md 14.6, recomputed from the doc's own text.

A student tests a verifying client against that table, so every row must be
right: each is recomputed with hashlib from the row's key and text alone, and
again with the functions ``ring peer`` and the table use; the doc's JSON
examples of the offer and the reports must be what those rows say.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

import msgspec
import pytest

from ring.oldmaid import exchanges, proofs
from ring.oldmaid.cards import JOKER, Card
from ring.oldmaid.messages import Gave, Offer, Received, Request

DOC = Path(__file__).parents[3] / "docs" / "protocols" / "oldmaid.md"


def _cell(text: str) -> str:
    return text.strip().strip("`").replace("\\|", "|")


def example_rows() -> dict[str, tuple[str, str, str, str]]:
    """Row name -> (function, key, text, result), as the doc writes them."""
    doc = DOC.read_text()
    block = doc.split("<!-- worked example: begin -->")[1].split("<!-- worked example: end -->")[0]
    rows = {}
    for line in block.strip().splitlines()[2:]:
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        name, function, key, text, result = (_cell(c) for c in cells)
        rows[name] = (function, key, text, result)
    return rows


ROWS = example_rows()


def recomputed(name: str) -> str:
    """A row's result from its function, its key (another row's result) and its text."""
    function, key, text, _ = ROWS[name]
    if function == "SHA-256":
        return hashlib.sha256(text.encode()).hexdigest()
    if function == "SHA-256/32":
        return hashlib.sha256(text.encode()).hexdigest()[:32]
    assert function == "HMAC-SHA256/32", function
    source, form = re.fullmatch(r"(.+) \((its 32 bytes|ASCII)\)", key).groups()  # type: ignore[union-attr]
    written = ROWS[source][3]
    key_bytes = bytes.fromhex(written) if form == "its 32 bytes" else written.encode()
    return hmac.new(key_bytes, text.encode(), hashlib.sha256).hexdigest()[:32]


def test_the_example_has_every_value_a_verifying_client_computes() -> None:
    assert len(ROWS) == 12
    assert {"game key", "offer mac", "carol's ack", "bob's pass mac (exchange 8)"} <= set(ROWS)


@pytest.mark.parametrize("name", list(ROWS))
def test_each_row_recomputes_from_its_own_text(name: str) -> None:
    assert recomputed(name) == ROWS[name][3]


def test_the_rows_are_what_the_table_and_ring_peer_compute() -> None:
    result = {name: row[3] for name, row in ROWS.items()}
    key = proofs.game_key(7)
    bob, carol = proofs.secret_for(key, "bob"), proofs.secret_for(key, "carol")
    assert key.hex() == result["game key"]
    assert (bob, carol) == (result["bob's secret"], result["carol's secret"])
    assert proofs.proof(bob, "carol") == result["bob's proof to carol"]
    salts = ("00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100")
    cards = (Card("10", "hearts"), JOKER)
    hashes = [exchanges.card_hash(salt, card) for salt, card in zip(salts, cards, strict=True)]
    assert hashes == [result["hash 0"], result["hash 1"]]
    mac = exchanges.offer_mac(bob, seq=7, sender="bob", to="carol", num_cards=2, hashes=hashes)
    assert mac == result["offer mac"]
    assert exchanges.ack_mac(carol, mac) == result["carol's ack"]
    pick = exchanges.pick_mac(carol, picker="carol", offerer="bob", seq=7, card_num=1)
    assert pick == result["carol's pick mac"]
    passed = exchanges.offer_mac(bob, seq=8, sender="bob", to="carol", num_cards=0, hashes=[])
    assert passed == result["bob's pass mac (exchange 8)"]
    assert exchanges.turn_mac(bob, "bob", "carol") == result["bob's your_turn mac"]
    assert exchanges.out_ack(carol, "bob") == result["carol's out ack to bob"]


def json_examples() -> list[dict[str, object]]:
    """The one-line JSON messages of 14.6 that carry a seq of 7."""
    section = DOC.read_text().split("### 14.6")[1].split("### 14.7")[0]
    lines = re.findall(r"^\{.*\}$", section, flags=re.MULTILINE)
    return [m for m in map(json.loads, lines) if m.get("seq") == 7]


def test_the_json_examples_are_the_example_and_decode_as_the_table_reads_them() -> None:
    result = {name: row[3] for name, row in ROWS.items()}
    decoded = {type(m).__name__: m for m in (msgspec.convert(j, Request) for j in json_examples())}
    offer, received, gave = decoded["Offer"], decoded["Received"], decoded["Gave"]
    assert isinstance(offer, Offer) and isinstance(received, Received) and isinstance(gave, Gave)
    hashes = [result["hash 0"], result["hash 1"]]
    assert offer.hashes == hashes and received.hashes == hashes
    assert offer.mac == received.mac == gave.mac == result["offer mac"]
    assert offer.proof == result["bob's proof to carol"]
    assert gave.ack == result["carol's ack"]
    assert received.card == JOKER and received.card_num == 1
    assert gave.salts is not None and received.salt == gave.salts[1]
    assert exchanges.opens(hashes, 1, JOKER, received.salt)
    assert exchanges.opened_card(hashes[0], gave.salts[0]) == Card("10", "hearts")
