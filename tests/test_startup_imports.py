"""What a start-up spares (issue 18: ``make api`` within 5 s).

Importing the app and building its agent must not pay for work the first request may never need:
matplotlib and networkx (the network figures, ~0.6 s of CPU) load with the first figure, pint and
its unit registry (~0.5 s) with the first unit conversion, SciPy's sparse package (~0.3 s) with
the first network solve, and the argon2 hash that equalises unknown-account logins (~0.2 s) is made at the first such login.
"""

from __future__ import annotations

import json
import subprocess
import sys

from ventapp.config import PROJECT_ROOT

PROBE = """
import json, sys, tempfile
import ventapp.ventapp
from ventapp.agent.agent_set import AgentSet
from ventapp.auth import passwords
from ventapp.config import load_settings

settings = load_settings({"DATA_DIR": tempfile.mkdtemp(), "DEEP_AGENT_ENV_PRIORITY": "none"})
AgentSet(settings, None).get()
print(json.dumps({
    "matplotlib": "matplotlib" in sys.modules,
    "networkx": "networkx" in sys.modules,
    "dummy_hashes": passwords._dummy_hash.cache_info().currsize,
    "pint": "pint" in sys.modules,
    "scipy": "scipy" in sys.modules,
}))
"""


def test_the_app_and_its_agent_start_without_matplotlib_networkx_pint_scipy_or_an_argon2_hash() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {
        "matplotlib": False,
        "networkx": False,
        "dummy_hashes": 0,
        "pint": False,
        "scipy": False,
    }
