"""The harness's self-tests (collected with ``--self-tests`` or when named, conftest.py
``pytest_ignore_collect``): a package, so that pytest imports them as ``conformance.tests.test_*`` and
their basenames may repeat those of reference_impl/tests."""
