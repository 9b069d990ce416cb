"""Whether this machine can make boxes (scenarios.sandbox): root and bubblewrap."""

from __future__ import annotations

import functools
import os
import shutil


@functools.cache
def box_available() -> bool:
    return os.geteuid() == 0 and shutil.which("bwrap") is not None
