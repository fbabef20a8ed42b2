"""Adversarial case generators (issue 5): one module per family.

- :mod:`.pickle_gadgets`: globals that would run code (every opcode that can call one);
- :mod:`.pickle_machine`: stack, MARK, memo, persistent-id and type-confusion attacks, bombs, depth;
- :mod:`.containers`: zip and legacy container attacks, TorchScript as a checkpoint, polyglots;
- :mod:`.tensors`: views outside storages, bad sizes and strides, storage records that disagree;
- :mod:`.t7`: Lua Torch ``.t7`` attacks, and the structural truncation points used at test time;
- :mod:`.tar`: torch 0.1's tar checkpoints (:mod:`.tar_writer` lays them out from torch objects), judged
  by torch's tar loader (``weights_only=False``, sandboxed);
- :mod:`.pickle_protocols`: opcodes above their pickle's declared protocol;
- :mod:`.argument_checks`: allowlisted calls with one argument list changed (arity, qparams, v3 bytes);
- :mod:`.tensor_runs`: state dicts whose run of like entries breaks on a later entry.

``python -m conformance.generators.adversarial`` (from the repository root) rewrites every
``cases/*/adv-*`` folder; ``--check`` only builds the cases and reports.  Real torch is asked about each
``.pt`` case in a sandboxed subprocess (:mod:`.torchcheck`); nothing from a case is ever loaded in the
generator's process.
"""
