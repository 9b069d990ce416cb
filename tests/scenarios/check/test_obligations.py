"""Every rule ``ring check`` enforces is a sentence of the protocol docs, a FAIL only for
a "must", and docs/check.md's obligations tables are the ones the cases give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scenarios.check import fishnet, notipping, obligations, oldmaid, reversi
from scenarios.check.obligations import Level
from scenarios.check.rules_table import LEFT_TO, table
from scenarios.check.verdicts import Judge

DOCS = Path(__file__).parents[3] / "docs"
CASES = {
    "fishnet": fishnet.cases(),
    "notipping": notipping.cases(),
    "oldmaid": oldmaid.cases(),
    "reversi": reversi.cases(),
}


def flat(text: str) -> str:
    """Text with its line breaks and runs of spaces as one space (the docs wrap)."""
    return re.sub(r"\s+", " ", text)


def section_of(doc: str, section: str) -> str:
    """The text of ``doc`` from the heading that names ``section`` to the next heading of
    the same or a higher level."""
    lines = (DOCS / "protocols" / doc).read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("#") and section in line]
    assert starts, f"{doc} has no heading for {section}"
    start = starts[0]
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if lines[i].startswith("#") and len(lines[i]) - len(lines[i].lstrip("#")) <= level
        ),
        len(lines),
    )
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("rule", obligations.ALL, ids=lambda rule: rule.key)
def test_each_rule_is_quoted_word_for_word_from_its_section(rule: obligations.Rule) -> None:
    assert flat(rule.text) in flat(section_of(rule.doc, rule.section))


@pytest.mark.parametrize("rule", obligations.ALL, ids=lambda rule: rule.key)
def test_a_fail_is_a_must_and_a_warn_a_should(rule: obligations.Rule) -> None:
    word = " must " if rule.level is Level.MUST else " should "
    assert word in f" {rule.text} "
    if rule.level is Level.SHOULD:
        assert " must " not in f" {rule.text} "


def test_a_should_cannot_fail_a_case() -> None:
    with pytest.raises(ValueError, match="never a FAIL"):
        Judge().fail(obligations.REVERSI_BARE, "it waits for a newline")
    assert Judge().fail(obligations.REVERSI_MOVE, "no move").rule is obligations.REVERSI_MOVE


def test_rule_keys_are_unique() -> None:
    keys = [rule.key for rule in obligations.ALL]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("game", sorted(CASES))
def test_check_md_holds_each_games_obligations_table(game: str) -> None:
    check_md = (DOCS / "check.md").read_text()
    assert "\n".join(table(game, CASES[game])) in check_md, f"ring check {game} --rules"


@pytest.mark.parametrize("game", sorted(CASES))
def test_every_rule_of_a_game_has_a_case(game: str) -> None:
    for rule in (*obligations.PROGRAM_RULES, *obligations.BY_GAME[game]):
        if rule in LEFT_TO.get(game, {}):
            assert not any(rule in case.tests for case in CASES[game])
            continue
        assert any(rule in case.tests for case in CASES[game]), rule.key
