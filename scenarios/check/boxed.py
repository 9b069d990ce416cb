"""``ring check --sandbox``: the student's program in the box a tournament runs it in.

The box (``scenarios.sandbox``) shows the program the folder ``ring check``
runs from, read-only, as its working folder (a student's project, an
autograder's submission), and a private ``/tmp``; it runs under a uid of
its own, chosen at random far above any login's. Each case gives it a
network namespace of its own holding only the case's listener; Old Maid's
cases, whose peers dial the program's own listener, leave it the machine's
network (docs/check.md "--sandbox").
"""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from scenarios.programs import Limits, Program, ProgramError
from scenarios.sandbox import Box, BoxNetwork, Quota, SandboxError

# A uid far above any login's, and not a tournament's (those start at 200,000,000).
UID_FLOOR = 1_500_000_000
UID_SPAN = 100_000_000
# The tournament's defaults (scenarios/tournament/jobs.py, command.py).
LIMITS = Limits(memory_bytes=2048 * 1024 * 1024, file_bytes=64 * 1024 * 1024, processes=256)


def boxed(program: Program, keep: Path | None) -> tuple[Program, str]:
    """``program`` in a box, and the probe's one line; ``ProgramError`` if no box can be
    made here (its reason)."""
    from scenarios.sandbox.probe import probe

    uid = UID_FLOOR + secrets.randbelow(UID_SPAN)
    try:
        line = probe(uid)
    except SandboxError as exc:
        raise ProgramError(f"cannot box the program: {exc}") from None
    here = Path.cwd().resolve()
    box = Box(
        uid=uid,
        folders=(here,),
        workdir=here,
        hidden=() if keep is None else (keep.resolve(),),
        quota=Quota(cores=1.0, memory_bytes=LIMITS.memory_bytes, processes=LIMITS.processes),
    )
    return dataclasses.replace(program, cwd=here, limits=LIMITS, box=box), line


async def boxed_for(program: Program, machine_network: bool) -> tuple[Program, BoxNetwork | None]:
    """The program for one case: in a network of the case's own, or the machine's."""
    assert program.box is not None
    if machine_network:
        return dataclasses.replace(
            program, box=dataclasses.replace(program.box, machine_network=True)
        ), None
    network = await BoxNetwork.open()
    box = dataclasses.replace(program.box, netns=network.path)
    return dataclasses.replace(program, box=box), network
