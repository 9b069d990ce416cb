"""FishNet at saturation: a real ring serve, real connections playing spot, the echo beside."""

from __future__ import annotations

import re

import pytest

from scenarios.bench import fishnet_saturation

pytestmark = pytest.mark.scenario


def test_every_game_ends_with_a_result_and_the_figures_compare(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert fishnet_saturation.main(["--games", "6"]) == 0
    out = capsys.readouterr().out
    assert "; 0 unfinished;" in out
    rate = re.search(r"games a second +(\d+\.\d) games/s", out)
    ratio = re.search(r"game lines / echo lines +(\d\.\d+)x", out)
    assert rate is not None and float(rate.group(1)) > 0, out
    assert ratio is not None and float(ratio.group(1)) > 0, out


def test_a_server_that_never_says_where_it_listens_is_given_up() -> None:
    with pytest.raises(SystemExit, match="no 'fishnet listening on ' line"):
        fishnet_saturation.start(["true"], "fishnet listening on ")
