"""Ending a process that has used Temporal without the interpreter's finalization.

The temporalio SDK runs its core (Rust, tokio) on threads of its own that live as long as the process. When the
interpreter finalizes at exit, one of them may still call back into Python (acquiring the GIL to drop an object or to
complete a future), and CPython aborts: `Fatal Python error: PyGILState_Release: thread state ... must be current when
releasing` / `Python runtime state: finalizing` (exit status 134, SIGABRT) or a segmentation fault (139). This is
temporalio/sdk-python#300 (open); shutting the worker down before exit, as `serve` does, does not prevent it, since
the threads belong to the SDK's runtime, not to the worker. Seen here in about 1 of 10 stops of `ratchet-env serve`
after it had served steps and 3 of 10 exits of a plain SDK client-and-worker script (temporalio 1.35.0, CPython 3.11).

The workaround upstream suggests, and the one used here: once everything is shut down, flush what is buffered and
leave with `os._exit`, so finalization never runs.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn


def exit_process(status: int = 0) -> NoReturn:
    """Ends the process with `status` at once, after flushing logging, stdout and stderr; interpreter finalization
    (atexit handlers included) is skipped. Call it last, from the main thread, once clients and workers are shut down:
    a trainer script using `RolloutClient` ends with `exit_process(main())` instead of `sys.exit(main())`."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a reader that went away
            pass
    os._exit(status)
