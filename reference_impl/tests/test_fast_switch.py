"""The reader's one fast-path switch (torchfmt/fast/__init__.py): ``TORCHFMT_FAST`` read at import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = "import torchfmt.fast as f; print(f.ENABLED)"


def _run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCHFMT_FAST"}
    if value is not None:
        env["TORCHFMT_FAST"] = value
    return subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, check=False)


@pytest.mark.parametrize(("value", "enabled"), [(None, "True"), ("1", "True"), ("0", "False")])
def test_the_environment_sets_the_switch(value: str | None, enabled: str) -> None:
    done = _run(value)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == enabled


@pytest.mark.parametrize("value", ["", "off", "false", "2"])
def test_any_other_value_is_refused_by_name(value: str) -> None:
    """A misspelt value is an error, not a silent ``on``."""
    done = _run(value)
    assert done.returncode != 0
    assert f"TORCHFMT_FAST={value!r}" in done.stderr
