"""robustness: prompt-robustness studies of language models, and their statistics.

The public names below load on first use (PEP 562), so ``import robustness`` (and
``import analyses``, which reads the long table's schema from here) loads no model code, no
perturbation family and no torch; importing changes nothing in the process.

>>> import robustness as rb
>>> items = rb.demo_items()
>>> variants = rb.perturb(items[:1], families="option_order,framing", n=2, seed=0)
>>> [v.variant_id for v in variants]
['original/0', 'option_order/0', 'option_order/1', 'framing/0', 'framing/1']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robustness.lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "Exemplar": "robustness.prompts",
    "Format": "robustness.prompts",
    "Item": "robustness.items",
    "AnalysisError": "robustness.errors",
    "ItemError": "robustness.errors",
    "ModelConfig": "robustness.study",
    "ModelError": "robustness.errors",
    "PromptSpec": "robustness.prompts",
    "RobustnessError": "robustness.errors",
    "StudyConfig": "robustness.study",
    "StudyError": "robustness.errors",
    "TableError": "robustness.errors",
    "Variant": "robustness.variants",
    "default_spec": "robustness.prompts",
    "demo_items": "robustness.loaders",
    "format_search": "robustness.format_search",
    "load_items": "robustness.loaders",
    "load_study": "robustness.study",
    "model": "robustness.study",
    "per_dataset": "robustness.loaders",
    "perturb": "robustness.perturb",
    "read_table": "robustness.table",
    "run": "robustness.run",
    "run_study": "robustness.run",
    "validate": "robustness.table",
}

__all__ = [
    "AnalysisError",
    "Exemplar",
    "Format",
    "Item",
    "ItemError",
    "ModelConfig",
    "ModelError",
    "PromptSpec",
    "RobustnessError",
    "StudyConfig",
    "StudyError",
    "TableError",
    "Variant",
    "__version__",
    "default_spec",
    "demo_items",
    "format_search",
    "load_items",
    "load_study",
    "model",
    "per_dataset",
    "perturb",
    "read_table",
    "run",
    "run_study",
    "validate",
]

if TYPE_CHECKING:  # the names as type checkers and editors see them
    from robustness.errors import (
        AnalysisError,
        ItemError,
        ModelError,
        RobustnessError,
        StudyError,
        TableError,
    )
    from robustness.format_search import format_search
    from robustness.items import Item
    from robustness.loaders import demo_items, load_items, per_dataset
    from robustness.perturb import perturb
    from robustness.prompts import Exemplar, Format, PromptSpec, default_spec
    from robustness.run import run, run_study
    from robustness.study import ModelConfig, StudyConfig, load_study, model
    from robustness.table import read_table, validate
    from robustness.variants import Variant


lazy_exports(__name__, _EXPORTS)
