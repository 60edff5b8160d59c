"""robustness: prompt-robustness studies of language models, and their statistics.

>>> import robustness as rb
>>> items = rb.demo_items()
>>> variants = rb.perturb(items[:1], families="all", n=2, seed=0)
>>> variants[0].category
'original'
"""

from __future__ import annotations

__version__ = "0.1.0"

from robustness.errors import ItemError, ModelError, RobustnessError, StudyError, TableError
from robustness.format_search import format_search
from robustness.items import Item
from robustness.loaders import demo_items, load_items, per_dataset
from robustness.perturb import perturb
from robustness.prompts import Exemplar, Format, PromptSpec, default_spec
from robustness.run import run, run_study
from robustness.study import ModelConfig, StudyConfig, load_study, model
from robustness.table import read_table, validate
from robustness.variants import Variant

__all__ = [
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
