"""The families of adversarial cases, by name (one generator module each)."""

from __future__ import annotations

from collections.abc import Callable

from . import (
    argument_checks,
    containers,
    fast_paths,
    legacy_ids,
    limit_edges,
    not_checkpoints,
    pickle_bounds,
    pickle_gadgets,
    pickle_hardening,
    pickle_machine,
    pickle_protocols,
    rebuild_checks,
    rebuild_semantics,
    spec_answers,
    stricter_rules,
    t7,
    tar,
    tensor_runs,
    tensors,
    zip_lookup,
)
from .record import AdvCase

FAMILIES: dict[str, Callable[[], list[AdvCase]]] = {
    "pickle-gadgets": pickle_gadgets.gadgets,
    "pickle-machine": pickle_machine.machine_cases,
    "pickle-hardening": pickle_hardening.hardening_cases,
    "pickle-protocols": pickle_protocols.protocol_cases,
    "pickle-bounds": pickle_bounds.bounds_cases,
    "argument-checks": argument_checks.argument_cases,
    "tensor-runs": tensor_runs.run_cases,
    "fast-paths": fast_paths.fast_cases,
    "tensors": tensors.tensor_cases,
    "containers": containers.container_cases,
    "legacy-ids": legacy_ids.legacy_id_cases,
    "t7": t7.t7_cases,
    "tar": tar.tar_cases,
    "rebuild-semantics": rebuild_semantics.rebuild_cases,
    "rebuild-checks": rebuild_checks.rebuild_check_cases,
    "zip-lookup": zip_lookup.zip_lookup_cases,
    "not-checkpoints": not_checkpoints.not_checkpoint_cases,
    "stricter-rules": stricter_rules.stricter_cases,
    "limit-edges": limit_edges.limit_edge_cases,
    "spec-answers": spec_answers.answer_cases,
}
#: Family name by module file name (as case provenance names it).
MODULES: dict[str, str] = {
    "pickle_gadgets.py": "pickle-gadgets",
    "pickle_machine.py": "pickle-machine",
    "pickle_hardening.py": "pickle-hardening",
    "pickle_protocols.py": "pickle-protocols",
    "pickle_bounds.py": "pickle-bounds",
    "argument_checks.py": "argument-checks",
    "tensor_runs.py": "tensor-runs",
    "fast_paths.py": "fast-paths",
    "tensors.py": "tensors",
    "containers.py": "containers",
    "legacy_ids.py": "legacy-ids",
    "t7.py": "t7",
    "tar.py": "tar",
    "rebuild_semantics.py": "rebuild-semantics",
    "rebuild_checks.py": "rebuild-checks",
    "zip_lookup.py": "zip-lookup",
    "not_checkpoints.py": "not-checkpoints",
    "stricter_rules.py": "stricter-rules",
    "limit_edges.py": "limit-edges",
    "spec_answers.py": "spec-answers",
}
