"""``ring serve``: any set of declared services in one process, one Trio nursery.

Each service is a ``ring.cli.registry.Service``; this module knows none of them
by name. ``--NAME [PORT]`` chooses a service (its default port, or PORT);
with none chosen, every declared game service runs on its default port
(a companion, the live page's ``--web``, runs only when named, beside the
games). Shared
options (address, seed, transcripts, mDNS) go to every service; each
service adds its own in a group of its own. Ctrl-C and SIGTERM stop every
service the same way (each tells its games under way, where its protocol can,
and closes its transcripts); the exit status is then 130 or 143.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path

import trio

from ring.cli import cliargs
from ring.cli.console import say
from ring.cli.registry import ServerError, ServeSettings, Service, as_server_error, found_in
from ring.cli.shutdown import raise_on_stop_signals, stop_code
from ring.games.record import RecordHub
from ring.games.seeds import keyed_seed, new_secret
from ring.version import VERSION
from ring.wire.net import (
    DEFAULT_MAX_CONNECTIONS,
    IPV4_LOOPBACK,
    IPV6_LOOPBACK,
    MAX_REFUSING,
    has_ipv6_loopback,
)


def add_parser(commands: argparse._SubParsersAction, services: Sequence[Service]) -> None:
    serve = commands.add_parser(
        "serve",
        help="run game servers, all in one process: "
        + ", ".join(service.name for service in services),
        description="Run the chosen services (none chosen: all of them, on their default ports).",
    )
    chosen = serve.add_argument_group("services")
    for service in services:
        chosen.add_argument(
            f"--{service.name}",
            nargs="?",
            const=service.default_port,
            type=cliargs.port,
            metavar="PORT",
            help=f"serve {service.summary} on PORT "
            f"(default {service.default_port}; 0: any free port)",
        )
    shared = serve.add_argument_group("shared options")
    cliargs.add_listener_options(shared, each=", per service")
    shared.add_argument(
        "--seed",
        type=int,
        help="replays every game of every service; whoever knows it can predict every deal "
        "(default: a secret, printed nowhere; each game's transcript holds its own seed)",
    )
    shared.add_argument(
        "--transcripts", metavar="DIR", help="one JSON-lines file per game, in DIR/<service>/"
    )
    # The FishNet server's old name for it, so that existing command lines work.
    shared.add_argument("--transcript", dest="transcripts", help=argparse.SUPPRESS)
    shared.add_argument(
        "--idle-timeout",
        type=cliargs.seconds,
        default=120.0,
        metavar="SECONDS",
        help="close a connection that has not started playing after this long (default 120)",
    )
    shared.add_argument(
        "--wait-timeout",
        type=cliargs.seconds,
        default=600.0,
        metavar="SECONDS",
        help="longest wait of a player for an opponent or a full game (default 600)",
    )
    timed = [f"{s.name} {s.move_time:g}" for s in services if s.move_time is not None]
    if timed:
        cliargs.add_renamed(
            shared,
            "--move-time",
            "--move-timeout",  # FishNet's old name for it
            type=cliargs.seconds,
            metavar="SECONDS",
            help="a player who has not moved this long after its turn came loses "
            f"(default: {', '.join(timed)}; 0: no limit)",
        )
    for service in services:
        service.add_options(serve.add_argument_group(f"{service.name} options"))


def chosen_services(args: argparse.Namespace, services: Sequence[Service]) -> list[Service]:
    """The game services named on the command line, or every one of them when none is;
    then the companions named (the live page), which never count as choosing games."""
    named = [service for service in services if getattr(args, service.name) is not None]
    games = [service for service in named if not service.companion]
    games = games or [service for service in services if not service.companion]
    return games + [service for service in named if service.companion]


def settings_for(
    args: argparse.Namespace,
    service: Service,
    seed: int,
    *,
    keyed: bool = False,
    hub: RecordHub | None = None,
) -> ServeSettings:
    port = getattr(args, service.name)
    folder = None if args.transcripts is None else Path(args.transcripts) / service.name
    move_time = getattr(args, "move_time", None)
    if move_time is None or service.move_time is None:
        move_time = service.move_time
    return ServeSettings(
        host=args.host,
        port=service.default_port if port is None else port,
        seed=seed,
        keyed=keyed,
        transcripts=folder,
        advertise=args.advertise,
        mdns_interface=args.mdns_interface,
        options=args,
        hub=hub or RecordHub(),
        move_time=move_time,
    )


def seeded_settings(
    args: argparse.Namespace, chosen: Sequence[Service], hub: RecordHub | None = None
) -> list[ServeSettings]:
    """Each service's settings: the published ``--seed`` for all, or without one a key
    of its own from a fresh secret (``ring.games.seeds``), which goes nowhere else. All
    share one record hub (``hub``, or a new one)."""
    hub = hub or RecordHub()
    if args.seed is not None:
        return [settings_for(args, service, args.seed, hub=hub) for service in chosen]
    secret = new_secret()
    return [
        settings_for(args, service, keyed_seed(secret, service.name), keyed=True, hub=hub)
        for service in chosen
    ]


def seed_line(args: argparse.Namespace) -> str:
    """What ``ring serve`` says of its seed on stderr (never the secret)."""
    if args.seed is not None:
        return (
            f"ring serve seed {args.seed} (replay with --seed {args.seed}; whoever knows "
            "this seed can predict every deal)"
        )
    return (
        "ring serve: deals come from a secret that is printed nowhere; "
        "each game's transcript (--transcripts) holds the seed that replays it"
    )


async def serve_all(
    chosen: Sequence[tuple[Service, ServeSettings]],
    *,
    task_status: trio.TaskStatus[dict[str, tuple[str, int]]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run every service until cancelled; ``started`` gives each one's bound address by name.

    ``ServerError`` from any service (which then could not start) names it.
    """
    addresses: dict[str, tuple[str, int]] = {}
    async with trio.open_nursery() as nursery:
        for service, settings in chosen:
            with as_server_error(ServerError, prefix=f"{service.name}: "):
                addresses[service.name] = await nursery.start(service.serve, settings)
        task_status.started(addresses)


def files_needed(args: argparse.Namespace, services: int) -> int:
    """Descriptors the connection caps may hold at once: per connection a socket and,
    at worst, a game's transcript; refusals under way; listeners and mDNS; the process's own."""
    connections = args.max_connections or DEFAULT_MAX_CONNECTIONS
    return services * (2 * connections + MAX_REFUSING + 8) + 64


def raise_file_limit(need: int) -> str | None:
    """Raise the soft open-file limit to ``need`` if the hard limit allows; else the line to say.

    Past the limit, accept fails with EMFILE: newcomers wait unanswered and the
    server logs a retry every 0.1 s, which looks like a hang to the class.
    """
    try:
        import resource
    except ImportError:  # no such limit outside Unix
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return None
    target = need if hard == resource.RLIM_INFINITY else min(need, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        target = soft
    if target >= need:
        return None
    return (
        f"ring serve: the open-file limit is {target} (hard limit {hard}), but the "
        f"connection caps may need {need}: raise it (ulimit -n) or lower --max-connections"
    )


# Allocations between young collections (CPython's default is 700). A server
# with a class connected holds a few hundred thousand objects, and each full
# collection walks them all, stopping every game at once: the capacity bench
# measured such pauses as the largest part of its p99 (docs/services.md).
GC_YOUNG_THRESHOLD = 50_000
# Young collections between middle ones (CPython's default is 10). A middle collection
# walks every object that outlived a young one, the live state of every game and
# connection (about 130 ms on the capacity bench), to find the cycles among them; the
# server makes none (tests/ring/cli/test_serve_garbage.py), so it comes ten times rarer.
GC_MIDDLE_THRESHOLD = 100


def calm_garbage_collector() -> None:
    """Fewer, cheaper collections: startup's objects frozen out of them, young and middle
    ones rarer."""
    gc.freeze()
    _, _, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, GC_MIDDLE_THRESHOLD, old)


def _loopbacks(host: str) -> str:
    """What ``localhost`` reaches, when the services listen there (ring.wire.net)."""
    if host != IPV4_LOOPBACK:
        return ""
    if not has_ipv6_loopback():
        return f" (on {IPV4_LOOPBACK} only: this machine has no IPv6 loopback)"
    return f" (on {IPV4_LOOPBACK} and {IPV6_LOOPBACK}: localhost either way)"


def run(args: argparse.Namespace, services: Sequence[Service]) -> int:
    """``ring serve``: runs until Ctrl-C (130) or SIGTERM (143); 2 if a service cannot start."""
    services = chosen_services(args, services)
    chosen = list(zip(services, seeded_settings(args, services), strict=True))
    short = raise_file_limit(files_needed(args, len(chosen)))
    if short is not None:
        print(short, file=sys.stderr)

    calm_garbage_collector()
    # Its first line names the version (a class's report says what it ran); on stderr, as
    # the seed line, so that scripts reading the ports from stdout's first lines are served.
    print(f"ring serve: cardring {VERSION}{_loopbacks(args.host)}", file=sys.stderr, flush=True)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raise_on_stop_signals)
            addresses = await nursery.start(serve_all, chosen)
            for name, (host, port) in addresses.items():
                # Scripts read these first lines to learn the ports.
                say(f"{name} listening on {host}:{port}")
            print(seed_line(args), file=sys.stderr)

    try:
        trio.run(main)
    except BaseException as exc:
        code = stop_code(exc)
        if code is not None:
            say("ring serve stopped")
            return code
        failure = found_in(exc, ServerError)
        if failure is not None:
            print(f"ring serve: {failure}", file=sys.stderr)
            return 2
        raise
    return 0
