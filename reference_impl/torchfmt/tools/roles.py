"""What the named parts of a checkpoint are for, and which ``slim`` level keeps them
(spec/inspect.md#inspect-roles, spec/slim.md#slim-levels): data, one table.

:data:`ROLES` is the one table of Lua ``nn`` module fields by role (weights, inference buffers such as
``running_mean``, what resuming training needs, scratch buffers such as ``output``, ``gradInput``,
``finput``) and of the keys of ``.pt`` trainer checkpoints (``optimizer``, ``ema``, ...).  ``inspect``
attributes bytes with it, ``slim`` leaves out by it (its ``light``/``medium``/``heavy`` levels, those of
dpnn's ``nn.Serial``) and ``convert`` leaves out by it what :func:`training_buffer` names (and orders a
Lua module's state by it).  It is ordered from most to least
needed: a storage several roles view is counted for the most needed of them, since dropping the others
does not free it.

Where a role applies (:func:`module_field_role`, :func:`key_role`):

- in a ``.t7`` file, a field of an ``nn`` module (:func:`is_module`) by its name, or by its name in a
  class whose name contains a part (dpnn's per-class lists); ``slim`` empties such a field;
- in a ``.t7`` file, an entry of an ``nngraph.Node``'s ``data`` table by its name (what nngraph's
  ``gModule:clearState`` sets to nil: the inputs and gradients a node kept); ``slim`` removes it;
- in a ``.pt`` file, a dict key at any depth matching a role's ``keys`` (or an optimizer's
  ``state_dict``) gives its whole subtree that role; ``slim`` removes such a key;
- anywhere else a tensor's *field* (:func:`field_name`) names its role for the report only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..model import LuaTable, TorchObject

#: ``slim``'s levels, lightest first: a level keeps every role whose ``kept_from`` is it or lighter.
LEVELS = ("light", "medium", "heavy")
LEVEL_RANK: dict[str, int] = {lv: i for i, lv in enumerate(LEVELS)}


@dataclass(frozen=True)
class Role:
    """A role: what it holds, the lightest level keeping it, and the names that have it."""

    name: str
    doc: str
    kept_from: str  # the lightest level of LEVELS that keeps it
    fields: frozenset[str] = frozenset()  # field names (a .t7 nn module's fields; a .pt key's last component)
    class_fields: tuple[tuple[str, frozenset[str]], ...] = ()  # nn fields of this role in some classes only
    node_fields: frozenset[str] = frozenset()  # entries of an nngraph.Node's data table (removed, as nil)
    keys: re.Pattern[str] | None = None  # .pt trainer-checkpoint keys giving their subtree this role
    group: str | None = None  # the `slim --drop GROUP` name removing the keys of this role
    module_state: bool = False  # a Lua nn module's state: what `convert` keeps in a state_dict

    @property
    def rank(self) -> int:
        """The rank in :data:`LEVELS` of the lightest level keeping this role."""
        return LEVEL_RANK[self.kept_from]


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


ROLES: tuple[Role, ...] = (
    Role("weights", "weights and biases: what the model computes with", "light",
         _f("weight", "bias", "weight_orig", "in_proj_weight", "in_proj_bias"), module_state=True),
    Role("running statistics", "batch-norm running statistics: inference needs them", "light",
         _f("running_mean", "running_var", "running_std", "num_batches_tracked"), module_state=True),
    Role("other", "tensors under names with no known role", "light"),
    Role("EMA copy", "an exponential moving average of the weights (a second copy of the model): often "
         "the weights people deploy, so no level drops it, only `--drop ema`", "light",
         keys=re.compile(r"(?i)(^|[^a-z0-9])ema([^a-z0-9]|$)|^shadow$|^swa_model$|^averaged_model$"),
         group="ema"),
    Role("optimizer state", "optimizer moments and step counts: resuming training needs them", "medium",
         _f("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg", "acc_delta",
            "sum", "prev", "step_size", "mu", "eta", "ax"),
         keys=re.compile(r"(?i)optim|^opt$|^opt_state|scheduler|^(grad_)?scaler$"), group="optimizer"),
    Role("gradients", "gradients of the last backward pass (Lua gradWeight/gradBias): dpnn's nn.Serial "
         "keeps them at medium (its dpnn_gradParameters)", "medium",
         _f("gradWeight", "gradBias", "gradParameters", "gradParams", "grad_params", "gradRunningMean",
            "gradScale"),
         keys=re.compile(r"(?i)(^|[^a-z0-9])(grad|grads|gradient|gradients)$"), group="grads"),
    Role("momentum buffers", "dpnn's momentum of the last parameter updates (momGradParams), which its "
         "nn.Serial empties at medium", "heavy", _f("momGradParams")),
    Role("activations and buffers", "outputs, gradients of inputs and scratch space of the last pass: "
         "recomputed by every forward and backward (what clearState empties)", "heavy",
         _f("output", "gradInput", "dpnn_input", "finput", "fgradInput", "fgradinput", "_input", "_output",
            "_gradOutput", "_gradInput", "gradOutput", "buffer", "buffer1", "buffer2", "buffer3", "_buffer",
            "_buffer1", "_buffer2", "addBuffer", "ones", "_ones", "columns", "save_mean", "save_std",
            "centered", "normalized", "_count", "outputs", "gradInputs", "gradOutputs", "cell", "cells",
            "gradCells", "indices", "_indices", "_expand", "_repeat", "_sum", "_div", "_norm", "_column",
            "fullOutput", "_viewOutput"),
         class_fields=(("BatchNormalization", _f("std")),),
         node_fields=_f("input", "gradOutput", "gradOutputBuffer")),  # nngraph's gModule:clearState
)
BY_NAME: dict[str, Role] = {r.name: r for r in ROLES}
RANK: dict[str, int] = {r.name: i for i, r in enumerate(ROLES)}
OTHER = BY_NAME["other"]
_BY_FIELD: dict[str, Role] = {f: r for r in ROLES for f in r.fields}
#: The fields of a Lua ``nn`` module that are its state (PyTorch's parameters and buffers).
MODULE_STATE: frozenset[str] = frozenset(f for r in ROLES if r.module_state for f in r.fields)
#: ``slim --drop`` groups: the role each names.
GROUPS: dict[str, Role] = {r.group: r for r in ROLES if r.group}
#: The packages whose torch classes are ``nn`` modules.
NN_PACKAGES = ("nn", "cudnn", "cunn", "nngraph", "rnn", "dpnn")


def is_module(v: Any) -> bool:
    """An ``nn`` module: a torch object of an ``nn.``/``cudnn.``/``nngraph``/... class with fields."""
    return isinstance(v, TorchObject) and isinstance(v.value, LuaTable) and \
        v.class_name.split(".")[0] in NN_PACKAGES and v.class_name != "nngraph.Node"


def kept(role: Role, level: str) -> bool:
    """Whether ``level`` keeps ``role``."""
    return role.rank <= LEVEL_RANK[level]


def training_buffer(name: Any, class_name: str) -> Role | None:
    """The role of the field ``name`` of an ``nn`` module of ``class_name`` when it is a training buffer,
    one that ``slim --level light`` empties (gradients, momentum, activations and scratch buffers); None
    for every other field, known or not.  ``convert`` leaves out exactly these fields of a Lua module
    (spec/t7.md#t7-convert-fields): a field is dropped only by a rule of :data:`ROLES` that names it."""
    role = module_field_role(name, class_name)
    return role if role is not None and not kept(role, "light") else None


def module_field_role(name: Any, class_name: str) -> Role | None:
    """The role of the field ``name`` of an ``nn`` module of ``class_name`` (None: no known role)."""
    if not isinstance(name, str):
        return None
    for r in ROLES:
        if any(part in class_name and name in fields for part, fields in r.class_fields):
            return r
    return _BY_FIELD.get(name)


_BY_NODE_FIELD: dict[str, Role] = {f: r for r in ROLES for f in r.node_fields}


def node_data(v: Any) -> LuaTable | None:
    """The ``data`` table of an ``nngraph.Node`` (None when ``v`` is none)."""
    if isinstance(v, TorchObject) and v.class_name == "nngraph.Node" and isinstance(v.value, LuaTable):
        data = dict(v.value.items).get("data")
        return data if isinstance(data, LuaTable) else None
    return None


def node_field_role(name: Any) -> Role | None:
    """The role of the entry ``name`` of an ``nngraph.Node``'s ``data`` table (None: none)."""
    return _BY_NODE_FIELD.get(name) if isinstance(name, str) else None


def key_role(key: Any, value: Any) -> Role | None:
    """The role a ``.pt`` dict key gives its whole subtree (None: none): a trainer key whose value is not
    a plain scalar (``ema_decay: 0.999``, ``clip_grad: 1.0`` are settings), or an optimizer's
    ``state_dict`` (a dict with ``state`` and ``param_groups``) under any key."""
    if isinstance(value, dict) and "state" in value and "param_groups" in value:
        return BY_NAME["optimizer state"]
    if isinstance(value, (bool, int, float, str, bytes)) or value is None:
        return None
    return _key_pattern_role(key)


def _key_pattern_role(key: Any) -> Role | None:
    if isinstance(key, str):
        for r in ROLES:
            if r.keys is not None and r.keys.search(key):
                return r
    return None


def field_name(path: list[str]) -> str | None:
    """The field a value sits under: the last key of ``path`` that is not an index, its last
    dotted component (state_dict keys are dotted paths)."""
    for key in reversed(path):
        if key and not key.isdigit():
            return key.rsplit(".", 1)[-1]
    return None


def role_of(path: list[str]) -> Role:
    """The role of a tensor at ``path`` by names alone (keys from the file's top-level object down): a
    trainer key decides for its whole subtree, else the field's name."""
    for key in path:
        r = _key_pattern_role(key)
        if r is not None:
            return r
    name = field_name(path)
    return _BY_FIELD.get(name, OTHER) if name is not None else OTHER
