"""Importers: per-sample logs of other evaluation tools in, the long table out.

``lm_eval`` reads lm-evaluation-harness ``--log_samples`` folders, ``inspect_log`` reads
inspect_ai eval logs; both map each task to our dataset, dataset type, category and variant
through the same TOML map (:mod:`robustness.importers.task_map`) and write the same long table,
so nothing downstream knows where a table came from.
"""
