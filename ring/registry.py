"""What the packages above ``ring`` declare: services for ``ring serve``, and commands.

``ring`` is the bottom layer: it never imports ``services`` or ``scenarios``.
Each service and each extra command declares itself once, in its own
package, and names the declaration in ``pyproject.toml`` as an entry point:

    [project.entry-points."cardring.services"]
    oldmaid = "services.oldmaid.service:SERVICE"

    [project.entry-points."cardring.commands"]
    scenario = "scenarios.command:COMMAND"

The ``ring`` command loads what is declared there, so a new game server is
one new declaration and one line in ``pyproject.toml``, not edits to the
command line. A declaration module should import little at the top: the
command line loads every declaration to build its help.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ring import console
from ring.record import RecordHub

SERVICE_GROUP = "cardring.services"
COMMAND_GROUP = "cardring.commands"


class ServiceError(Exception):
    """A service cannot run at all (port in use, transcripts not writable): one line."""


@dataclass(frozen=True)
class ServeSettings:
    """What ``ring serve`` gives each service it runs."""

    host: str
    port: int  # 0: any free port
    # The shared --seed, or without one this service's own key from the
    # server's secret (ring.seeds). Each service derives its games' seeds from
    # it in a namespace of its own (Old Maid "deck:<seed>", FishNet
    # "<seed>:<names>:<n>"), so services never share a random stream and one
    # --seed replays them all.
    seed: int
    transcripts: Path | None  # this service's own folder, or None for no transcripts
    advertise: bool | None  # None: advertise when reachable from the LAN
    mdns_interface: str | None
    options: argparse.Namespace  # every option of ``ring serve``, this service's own among them
    # seed is a secret key: derive each game's seed by a keyed hash of it
    # (ring.seeds.keyed_seed), never in plain view, and print it nowhere.
    keyed: bool = False
    say: Callable[[str], None] = console.say  # a line for the operator; stdout may go away
    # Every game's records go here (ring.record); ring serve gives all its
    # services one hub, so one subscriber (the live page) sees every game.
    # Each server subscribes its own transcript writer when ``transcripts``.
    hub: RecordHub = field(default_factory=RecordHub)


@dataclass(frozen=True)
class ClientCommand:
    """A client of a service: ``ring bot NAME`` or ``ring play NAME``."""

    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Service:
    """One game server, as ``ring serve``, ``ring discover``, ``ring bot`` and ``ring play`` see it.

    ``serve(settings, task_status=...)`` serves until cancelled; it calls
    ``task_status.started((host, port))`` once it listens, so callers can
    ``await nursery.start(service.serve, settings)``, and raises
    ``ServiceError`` if it cannot start. Cancelled, it tells the games under
    way where its protocol has a way, and closes its transcripts.
    """

    name: str  # the --NAME flag of ring serve, the mDNS kind and the transcripts folder
    default_port: int
    mdns_type: str  # e.g. "_oldmaid._tcp.local."
    summary: str  # one line for --help
    serve: Callable[..., Awaitable[Any]]
    add_options: Callable[[argparse._ArgumentGroup], None] = field(default=lambda group: None)
    bot: ClientCommand | None = None
    play: ClientCommand | None = None


@dataclass(frozen=True)
class Command:
    """A ``ring`` subcommand declared by a package above ``ring`` (``ring table``, ...)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def declared_services() -> list[Service]:
    """Every service declared in the installed entry points, by name."""
    return sorted(_load(SERVICE_GROUP, Service), key=lambda service: service.name)


def declared_commands() -> list[Command]:
    """Every extra command declared in the installed entry points, by name."""
    return sorted(_load(COMMAND_GROUP, Command), key=lambda command: command.name)


def _load(group: str, kind: type) -> Iterable[Any]:
    for point in entry_points(group=group):
        declared = point.load()
        if not isinstance(declared, kind):
            raise TypeError(f"entry point {point.value} in {group} is not a {kind.__name__}")
        yield declared


def found_in(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` in ``exc``, looking inside the exception groups nurseries make."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = found_in(inner, kind)
            if found is not None:
                return found
    return None


@contextmanager
def as_service_error(kind: type[BaseException], prefix: str = "") -> Iterator[None]:
    """Turn a service's own "cannot run" error (even inside nursery groups) into
    ``ServiceError``, for ``ring serve`` to print as one line."""
    try:
        yield
    except BaseException as exc:
        failure = found_in(exc, kind)
        if failure is None:
            raise
        raise ServiceError(f"{prefix}{failure}") from None
