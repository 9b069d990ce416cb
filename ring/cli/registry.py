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
import functools
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import trio

from ring.cli import console
from ring.games.record import RecordHub
from ring.wire.net import DEFAULT_MAX_CONNECTIONS, ServerError

SERVICE_GROUP = "cardring.services"
COMMAND_GROUP = "cardring.commands"


@dataclass(frozen=True)
class ServeSettings:
    """What ``ring serve`` gives each service it runs."""

    host: str
    port: int  # 0: any free port
    # The shared --seed, or without one this service's own key from the
    # server's secret (ring.games.seeds). Each service derives its games' seeds from
    # it in a namespace of its own (Old Maid "deck:<seed>", FishNet
    # "<seed>:<names>:<n>"), so services never share a random stream and one
    # --seed replays them all.
    seed: int
    transcripts: Path | None  # this service's own folder, or None for no transcripts
    advertise: bool | None  # None: advertise when reachable from the LAN
    mdns_interface: str | None
    options: argparse.Namespace  # every option of ``ring serve``, this service's own among them
    # seed is a secret key: derive each game's seed by a keyed hash of it
    # (ring.games.seeds.keyed_seed), never in plain view, and print it nowhere.
    keyed: bool = False
    say: Callable[[str], None] = console.say  # a line for the operator; stdout may go away
    # The time a player may take for one move (--move-time, else the service's
    # own default; 0: no limit), in a service that times moves; None in others.
    move_time: float | None = None
    # Every game's records go here (ring.games.record); ring serve gives all its
    # services one hub, so one subscriber (the live page) sees every game.
    # Each server subscribes its own transcript writer when ``transcripts``.
    hub: RecordHub = field(default_factory=RecordHub)

    def server_kwargs(self, mdns_name: str) -> dict[str, Any]:
        """What every server's config takes from ``ring serve``, as keyword arguments:
        where to listen, the seed, the transcripts folder, the shared timeouts and
        connection caps, and mDNS (``mdns_name``: the service's own instance name,
        unless ``--name`` gives one), and the record hub every service publishes to."""
        options = self.options
        return {
            "hub": self.hub,
            "host": self.host,
            "port": self.port,
            "seed": self.seed,
            "keyed": self.keyed,
            "transcripts": self.transcripts,
            "idle_timeout": options.idle_timeout,
            "wait_timeout": options.wait_timeout,
            "max_connections": options.max_connections or DEFAULT_MAX_CONNECTIONS,
            "max_per_address": options.max_per_address,
            "advertise": self.advertise,
            "mdns_interface": self.mdns_interface,
            "mdns_name": options.name or mdns_name,
        }

    def reporter(self, service: str) -> Callable[[Any], None]:
        """The operator's line for each game a server reports (``report.line``)."""
        return lambda report: self.say(f"{service}: {report.line}")


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
    ``ServerError`` if it cannot start. Cancelled, it tells the games under
    way where its protocol has a way, and closes its transcripts.
    """

    # The --NAME flag of ring serve, the transcripts folder, and the mDNS kind:
    # the service is advertised as "_<name>._tcp.local." (ring.mdns.dnssd).
    name: str
    default_port: int
    summary: str  # one line for --help
    serve: Callable[..., Awaitable[Any]]
    # Seconds a player has for one move by default (ring serve --move-time);
    # None: the service does not time single moves.
    move_time: float | None = None
    add_options: Callable[[argparse._ArgumentGroup], None] = field(default=lambda group: None)
    bot: ClientCommand | None = None
    play: ClientCommand | None = None
    # Serves alongside the games (the live page): runs only when named, and naming it
    # does not choose games; it has no games of its own, no transcripts, no mDNS.
    companion: bool = False


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
def as_server_error(kind: type[BaseException], prefix: str = "") -> Iterator[None]:
    """Turn a service's own "cannot run" error (even inside nursery groups) into
    ``ServerError``, for ``ring serve`` to print as one line."""
    try:
        yield
    except BaseException as exc:
        failure = found_in(exc, kind)
        if failure is None:
            raise
        raise ServerError(f"{prefix}{failure}") from None


async def start_server(
    serve: Callable[..., Awaitable[Any]],
    config: Any,
    error: type[BaseException],
    *,
    task_status: trio.TaskStatus[tuple[str, int]],
    started: Callable[[Any], object] = lambda server: None,
) -> None:
    """A service's ``serve`` once its config is built: ``serve(config)`` in a nursery
    of its own until cancelled, the server's "cannot run" ``error`` as
    ``ServerError``, and ``task_status`` told the address it listens on.
    ``started`` is given the server (with its ``address``) before that."""
    async with trio.open_nursery() as nursery:
        with as_server_error(error):
            server = await nursery.start(functools.partial(serve, config))
        started(server)
        task_status.started(server.address)
