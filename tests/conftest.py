"""Test-session settings.

Hypothesis explores new random examples on every local run; under CI (``CI`` set, as ``.ci/run``
runs) it is derandomized, so a CI verdict is reproducible from the commit alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))  # `import fixtures` from any working directory

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
