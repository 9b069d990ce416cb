"""Session-wide test setup."""

from __future__ import annotations

import signal

# A shell without job control starts background commands with SIGINT ignored,
# and children inherit an ignored signal across exec. The tests that press
# Ctrl-C on a child (exit 130) would then see it ignored. A handled signal is
# reset to the default in an exec'd child, so handling it here gives every
# child the normal Ctrl-C whatever way the test run was started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
