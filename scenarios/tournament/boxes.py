"""Each program of a game as the tournament runs it: its command, folder, limits and box.

With ``Settings.box`` (the default; docs/tournament.md "The box"), every
program, a built-in player too, runs in a box of ``scenarios.sandbox``: the
entrant's own uid, its folder read-only, its game's network namespace. A
two-player game gives each seat a namespace of its own (the seat's listener
is the only thing in it); an Old Maid ring shares one among its peers, which
must dial each other, and the table admits each nick only from its
entrant's uid (``admit``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import msgspec
import trio

from scenarios.programs import Program
from scenarios.sandbox import Box, BoxNetwork, Quota
from scenarios.tournament.jobs import BoxSettings, Entrant, GameJob, Settings

MIB = 1024 * 1024


def program(
    job: GameJob, seat: int, argv: Sequence[str], network: BoxNetwork | None
) -> Program:
    """The program of ``seat``, boxed when the tournament boxes (then in ``network``)."""
    entrant = job.entrants[seat]
    settings = job.settings
    cwd = Path(entrant.cwd) if entrant.cwd else None
    box = None
    if settings.box is not None:
        own = (Path(entrant.folder),) if entrant.folder else ()
        box = Box(
            uid=settings.box.uid(entrant.name),
            folders=own,
            workdir=cwd,
            hidden=tuple(Path(p) for p in settings.box.hidden if Path(p) not in own),
            scratch_bytes=settings.box.scratch_mb * MIB,
            netns=None if network is None else network.path,
            quota=Quota(
                cores=settings.box.cores,
                memory_bytes=None if settings.memory_mb is None else settings.memory_mb * MIB,
                processes=settings.box.processes,
            ),
        )
    return Program(
        tuple(argv), cwd=cwd, limits=settings.limits(), tag_prefix=job.tag_prefix, box=box
    )


def described(job: GameJob, programs: Sequence[Program | None]) -> dict[str, object]:
    """Each program's box and limits, by entrant, for the game's evidence."""
    limits = job.settings.limits()
    shown: dict[str, object] = {}
    for seat, entrant in enumerate(job.entrants):
        run = programs[seat] if seat < len(programs) else None
        box = None if run is None or run.box is None else run.box.shown()
        shown[entrant.name] = {
            "box": box if box is not None else "none: it ran as the runner (--no-sandbox)",
            "limits": {
                "memory_mb": None if limits.memory_bytes is None else limits.memory_bytes // MIB,
                "cpu_seconds": limits.cpu_seconds,
                "open_files": limits.open_files,
                "file_mb": None if limits.file_bytes is None else limits.file_bytes // MIB,
                "processes": limits.processes,
            },
        }
    return shown


def admitting(job: GameJob, network: BoxNetwork):  # type: ignore[no-untyped-def]
    """The table's ``admit`` for a boxed ring: a nick joins only from its entrant's uid."""
    box = job.settings.box
    assert box is not None
    nicks = {uid: name for name, uid in box.uids}

    def admit(stream: trio.SocketStream, nick: str) -> str | None:
        owner = network.owner(stream.socket.getpeername()[1])
        dialled = nicks.get(owner) if owner is not None else None
        if dialled == nick:
            return None
        if dialled is None:
            return f"this connection is no entrant's program: it cannot join as {nick}"
        return f"this connection is {dialled}'s program, not {nick}'s: join as {dialled}"

    return admit


# Each tournament's uids: UID_FLOOR + a slot of its own (from its results folder, so a
# resume has the same) + the entrant's number. Far above any login's uid.
UID_FLOOR = 200_000_000
UID_SLOTS = 1_000_000
MOST_ENTRANTS = 1000


def box_settings(
    settings: Settings,
    entrants: Sequence[Entrant],
    out: Path,
    scratch_mb: int,
    processes: int,
    cores: float,
) -> Settings:
    """``settings`` with every entrant boxed: a uid each, the results and every entrant's
    folder hidden from all the others."""
    if len(entrants) > MOST_ENTRANTS:
        raise ValueError(f"at most {MOST_ENTRANTS} entrants can be boxed")
    slot = int(hashlib.sha256(str(out.resolve()).encode()).hexdigest(), 16) % UID_SLOTS
    base = UID_FLOOR + slot * MOST_ENTRANTS
    hidden = {str(out.resolve())} | {e.folder for e in entrants if e.folder}
    box = BoxSettings(
        uids=tuple((entrant.name, base + number) for number, entrant in enumerate(entrants)),
        hidden=tuple(sorted(hidden)),
        scratch_mb=scratch_mb,
        processes=processes,
        cores=cores,
    )
    return msgspec.structs.replace(settings, box=box)
