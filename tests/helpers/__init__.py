"""Helpers of the test suite, one job per module (imported as ``helpers.NAME``: pytest puts
the tests folder on ``sys.path``; the benchmarks do the same).

- ``tiny``: the tiny tokenizer and models built from a seed, and a saved tiny model folder;
- ``fake_runner``: a deterministic runner without a model, and the cache writer process;
- ``ray_runners``: runners that record where they run, for the Ray tests;
- ``servers``: real OpenAI-compatible servers on loopback and a fault-injecting proxy;
- ``oracle``: the content oracle of the perturbation tests;
- ``kill_child``: the study run that the kill-safety test kills (run as a script).

Fixtures live in ``tests/conftest.py``.
"""
