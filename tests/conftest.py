"""Session-wide test setup."""

from __future__ import annotations

import signal

from hypothesis import HealthCheck, settings

# A shell without job control starts background commands with SIGINT ignored,
# and children inherit an ignored signal across exec. The tests that press
# Ctrl-C on a child (exit 130) would then see it ignored. A handled signal is
# reset to the default in an exec'd child, so handling it here gives every
# child the normal Ctrl-C whatever way the test run was started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# make test runs the suite on every core (pytest-xdist), beside the real
# processes and sockets many tests start, so a test may wait seconds for a CPU.
# Hypothesis would then call its input generation "too slow" and a quick
# example "over its deadline": neither says anything about the code under
# test. Correctness checks, examples and seeds are unchanged.
settings.register_profile("cardring", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cardring")
