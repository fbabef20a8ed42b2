"""Adversarial case generators (issue 5): one module per family.

- :mod:`.pickle_gadgets`: globals that would run code (every opcode that can call one);
- :mod:`.pickle_machine`: stack, MARK, memo, persistent-id and type-confusion attacks, bombs, depth;
- :mod:`.containers`: zip and legacy container attacks, TorchScript as a checkpoint, polyglots;
- :mod:`.tensors`: views outside storages, bad sizes and strides, storage records that disagree;
- :mod:`.t7`: Lua Torch ``.t7`` attacks, and the structural truncation points used at test time.

``python -m generators.adversarial`` (from ``conformance/``) rewrites every ``cases/*/adv-*`` folder;
``--check`` only builds the cases and reports.  Real torch is asked about each ``.pt`` case in a sandboxed
subprocess (:mod:`.torchcheck`); nothing from a case is ever loaded in the generator's process.
"""
