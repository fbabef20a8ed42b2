"""Loading the spec's scripts (spec/traceability.py, spec/tools/*.py), which are no package, as modules
for the spec tests (spec/README.md#conventions, spec/README.md#traceability)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(name: str, path: Path) -> ModuleType:
    """The script at ``path``, executed as the module ``name`` (and registered in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
