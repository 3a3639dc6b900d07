"""The package is typed (py.typed): mypy --strict finds nothing, so a trainer's own type checker can trust it."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def test_the_package_passes_mypy_strict() -> None:
    with tempfile.TemporaryDirectory() as cache:
        checked = subprocess.run(
            [sys.executable, "-m", "mypy", "--cache-dir", cache, "ratchet_rollouts"], cwd=PACKAGE, capture_output=True, text=True, timeout=300
        )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success" in checked.stdout
