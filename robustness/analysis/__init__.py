"""``robustness analyze`` as a Python call: the pipeline over the statistics and its typed result.

Orchestration on top of :mod:`analyses` (DESIGN.md, "Analysis and report"): :mod:`.pipeline`
runs every analysis of a long table and returns an :class:`~.result.AnalysisResult` whose
fields are the tables; :mod:`.table_groups` builds groups of those tables; :mod:`.files`
writes them (``tables/*.csv``, ``summary.json``); :mod:`.console` prints the summary with rich;
:mod:`.number_text` formats numbers as a paper prints them. ``analyses.analyze`` is the same
function, resolved from here on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robustness.core.lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each once (robustness.core.lazy)
    from robustness.analysis.pipeline import analyze as analyze
    from robustness.analysis.pipeline import analyze_path as analyze_path
    from robustness.analysis.result import AnalysisResult as AnalysisResult

lazy_exports(__name__)
