"""What the named fields of a checkpoint are for (spec/inspect.md#inspect-roles): data, one table.

A tensor's *field* is the last name on its path (``modules.2.gradWeight`` -> ``gradWeight``,
``layer1.0.bn1.running_mean`` -> ``running_mean``); a trainer checkpoint's top-level key may give the
whole subtree a role (``optimizer``, ``ema``).  The roles follow the three kinds of ``nn`` fields of
dpnn's ``nn.Serial`` (light keeps weights and biases, medium adds what resuming training needs, heavy
keeps everything), with the trainer keys of ``.pt`` checkpoints beside them.  :data:`ROLES` is ordered
from most to least needed: a storage several roles view is counted for the most needed of them, since
dropping the others does not free it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """A role: its name, what it holds, and the fields (or top-level key patterns) that have it."""

    name: str
    doc: str
    fields: frozenset[str] = frozenset()
    top_keys: re.Pattern[str] | None = None
    inference: bool = False  # kept by a light save: needed to run the model
    training: bool = False  # kept by a medium save: needed to resume training


ROLES: tuple[Role, ...] = (
    Role("weights", "weights and biases: what the model computes with",
         frozenset({"weight", "bias", "weight_orig", "in_proj_weight", "in_proj_bias"}), inference=True),
    Role("running statistics", "batch-norm running statistics: inference needs them",
         frozenset({"running_mean", "running_var", "running_std", "num_batches_tracked"}), inference=True),
    Role("other", "tensors under names with no known role", inference=True),
    Role("EMA copy", "an exponential moving average of the weights (a second copy of the model)",
         top_keys=re.compile(r"(?i)^(model_)?ema(_.*)?$|^.*_ema$|^shadow$|^swa_model$|^averaged_model$"),
         training=True),
    Role("optimizer state", "optimizer moments and step counts: resuming training needs them",
         frozenset({"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg",
                    "acc_delta", "sum", "prev", "step_size", "mu", "eta", "ax"}),
         top_keys=re.compile(r"(?i)optim|^opt$|^opt_state|scheduler|^scaler$|^grad_scaler$"),
         training=True),
    Role("gradients", "gradients of the last backward pass (Lua gradWeight/gradBias)",
         frozenset({"gradWeight", "gradBias", "grad", "gradParameters", "gradParams", "grad_params",
                    "gradRunningMean", "gradScale"}), training=True),
    Role("activations and buffers", "outputs, gradients of inputs and scratch space of the last pass: "
         "recomputed by every forward and backward",
         frozenset({"output", "gradInput", "finput", "fgradInput", "_gradOutput", "_input", "_output",
                    "gradOutput", "_gradInput", "buffer", "buffer1", "buffer2", "buffer3", "_buffer",
                    "ones", "addBuffer", "save_mean", "save_std", "centered", "normalized", "std",
                    "outputs", "gradInputs", "cell", "cells", "gradCells", "_indices", "indices",
                    "columns", "_gradWeight", "_gradBias", "_expand", "_repeat", "_sum", "_div",
                    "_norm", "_ones", "_buffer1", "_buffer2", "_weight", "_column", "gradOutputs",
                    "sizes", "fullOutput", "_viewOutput"})),
)
BY_NAME: dict[str, Role] = {r.name: r for r in ROLES}
RANK: dict[str, int] = {r.name: i for i, r in enumerate(ROLES)}
_BY_FIELD: dict[str, Role] = {f: r for r in ROLES for f in r.fields}
OTHER = BY_NAME["other"]


def field_name(path: list[str]) -> str | None:
    """The field a value sits under: the last key of ``path`` that is not an index, its last
    dotted component (state_dict keys are dotted paths)."""
    for key in reversed(path):
        if key and not key.isdigit():
            return key.rsplit(".", 1)[-1]
    return None


def role_of(path: list[str]) -> Role:
    """The role of a tensor at ``path`` (its keys from the file's top-level object down): a trainer
    top-level key decides for its whole subtree, else the field's name."""
    if path:
        for r in ROLES:
            if r.top_keys is not None and r.top_keys.search(path[0]):
                return r
    name = field_name(path)
    return _BY_FIELD.get(name, OTHER) if name is not None else OTHER
