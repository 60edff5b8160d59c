"""Power of a planned study by simulation, and the items it needs.

Modules, by concept: ``design`` (the planned :class:`Design`), ``effects`` (the assumed or
pilot :class:`Effects` and the data-generating model that simulates tables from them),
``simulation`` (:func:`power`: fit the study's GEE to each simulated table) and ``solve``
(:func:`solve_items`: the smallest number of items per dataset that reaches a target power).
Public names load on first use (:mod:`robustness.core.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robustness.core.lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each once: read by lazy_exports, seen by type checkers
    from analyses.power.design import Design
    from analyses.power.effects import (
        Effects,
        assumed_effects,
        calibrate_sigma,
        effects_from_pilot,
        simulate_table,
    )
    from analyses.power.simulation import POWER_COLUMNS, power, power_terms
    from analyses.power.solve import SolveResult, solve_items


lazy_exports(__name__)
