"""The writers of the committed cases (conformance/README.md#where-cases-come-from): real torch's and Lua
Torch's files, the rejects derived from them, the adversarial families (``.adversarial``), and the
helpers the readers' sandboxes also see (``torch_describe``, harness/sandbox.py ``VISIBLE``).
"""
