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

from robustness.core.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the public names, each once: read by lazy_exports, seen by type checkers
    from robustness.core.errors import (
        AnalysisError,
        ItemError,
        ModelError,
        RobustnessError,
        StudyError,
        TableError,
    )
    from robustness.core.items import Item, demo_items, load_items, per_dataset
    from robustness.core.prompts import Exemplar, Format, PromptSpec, default_spec
    from robustness.core.table import read_table, validate
    from robustness.core.variants import Variant
    from robustness.format_search import format_search
    from robustness.perturb import perturb
    from robustness.run import run, run_study
    from robustness.study import ModelConfig, StudyConfig, load_study, model


lazy_exports(__name__, also=("__version__",))
