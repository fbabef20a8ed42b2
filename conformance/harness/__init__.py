"""The conformance harness: load cases, run any reader under limits, compare descriptions.

It needs only the standard library and PyYAML, so a third-party reader can be measured without
installing torchfmt (spec/canonical.md#canonical-reader-cli, spec/canonical.md#canonical-comparison).
"""
