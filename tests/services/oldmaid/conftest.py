"""Fixtures of the Old Maid table's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def no_internal_errors(capfd: pytest.CaptureFixture[str]) -> Iterator[None]:
    """The table prints a traceback, and carries on, when it has a bug: fail on it.

    The table's tests over sockets and on the mock clock use it for all their tests
    (``pytestmark = pytest.mark.usefixtures("no_internal_errors")``): test_table_requests,
    _joins, _play, _games, _command and _timers."""
    yield
    assert "internal error" not in capfd.readouterr().err
