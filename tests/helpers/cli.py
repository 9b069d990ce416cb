"""The command line's parsers, looked into by the tests of ``ring``'s commands."""

from __future__ import annotations

import argparse


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of ``name``, one of ``parser``'s commands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise AssertionError(f"no command {name}")
