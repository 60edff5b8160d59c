"""The bottom layer of the toolkit: the plain data every other layer shares.

Names and seeding, errors, items (with their loaders and item files), prompt specs, variants,
the long table (schema, checks, values, files), the answer parser, text safety, the answer
cache and the lazy package faces. Nothing here imports ``perturbations``, ``analyses``,
``robustness.runners`` or the orchestration above them (``tests/test_layers.py``), and
importing any of it changes nothing in the process.
"""
