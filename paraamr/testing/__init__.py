"""What users run that tests use too: tiny random models in the real on-disk formats
(:mod:`~paraamr.testing.tiny_models`: ``make tiny-models``, ``make build-demo``, the benchmarks'
``--models tiny`` smoke runs), the rule-based AMR -> text generator of the demo
(:mod:`~paraamr.testing.fakes`) and the fault injector (:mod:`~paraamr.testing.faults`:
``python -m paraamr.testing.faults SCRIPT``, run in child processes by the crash tests, so it must
be importable from the installed package). Helpers only tests use live in ``tests/testkit/``
(``tests/test_layers.py`` checks that nothing in the library imports a test helper)."""
