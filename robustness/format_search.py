"""FormatSpread with a real model: Thompson-sampling search of the format space.

:func:`format_search` asks a runner (``choice`` mode) to answer objective items in
many prompt formats and uses :func:`analyses.thompson_search` to find the best
and the worst format within an evaluation budget, as FormatSpread (Sclar et al.
2024) does: the spread between them is how much formatting alone moves accuracy.
The default format is evaluated on every item first (the pilot that sets the
prior), and the two formats found are re-evaluated on every item; neither is
charged to the budget, and ``result.calls`` counts every model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robustness.core.errors import StudyError
from robustness.core.items import Item
from robustness.core.prompts import Format, default_spec
from robustness.core.seeding import study_rng

if TYPE_CHECKING:
    from robustness.answers import Progress


def sample_formats(n: int, seed: int = 0, statement: bool = False) -> list[Format]:
    """The default format first, then ``n - 1`` distinct others drawn from the space."""
    from perturbations.formatting import format_space  # perturbations imports robustness

    space = format_space(statement)
    default = default_spec(Item("x", "x", "objective", "x", ("a", "b"), answer=0)).format
    out, seen = [default], {default}
    rng = study_rng(seed, "format_search")
    while len(out) < min(n, len(space)):
        fmt = space[int(rng.integers(0, len(space)))]
        if fmt not in seen:
            seen.add(fmt)
            out.append(fmt)
    return out


def format_search(
    items: Sequence[Item],
    runner: Any,
    *,
    budget: int,
    formats: Sequence[Format] | None = None,
    n_formats: int = 50,
    batch: int = 10,
    pilot: int | None = None,
    chat: bool | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> Any:
    """Best and worst format for ``runner`` on objective ``items`` (a ThompsonResult).

    ``formats`` defaults to :func:`sample_formats`, the default format first: its
    accuracy on ``pilot`` items (all by default) sets the prior mean, as in the
    paper.  ``budget`` counts item evaluations over both searches (half each);
    the pilot and the final re-evaluation of the best and worst formats on every
    item are outside it.  The result holds the in-search estimates, the
    re-evaluated accuracies with Wilson intervals (``res.table()``) and ``res.calls``.
    ``progress("format_search", done, total)`` is called after every batch, as in
    :func:`robustness.run`; ``total`` is an upper bound (pilot + budget + the
    re-evaluation of two formats) until the last call, where it equals ``done``.

    Examples
    --------
    Not run by the doctests (it loads the embedded model and scores 300 prompts):

    >>> import robustness as rb  # doctest: +SKIP
    >>> from robustness.runners import make_runner  # doctest: +SKIP
    >>> items = [i for i in rb.demo_items() if i.dataset_type == "objective"]  # doctest: +SKIP
    >>> res = format_search(items, make_runner(), budget=300)  # doctest: +SKIP
    >>> res.best_format, res.spread, res.best_ci, res.calls  # doctest: +SKIP
    """
    from analyses.thompson import thompson_search
    from robustness.run import uses_chat

    pool = [i for i in items if i.answer is not None]
    if not pool:
        raise StudyError("format_search needs objective items with a gold answer; none was given.")
    arms = list(formats) if formats is not None else sample_formats(n_formats, seed)
    use_chat = uses_chat(runner) if chat is None else chat
    n = len(pool)
    total = (n if pilot is None else pilot) + budget + 2 * n
    done = [0]

    def evaluate(fmt: Format, idx: np.ndarray) -> list[float]:
        specs = [default_spec(pool[int(i)]).with_(format=fmt) for i in idx]
        prompts = [s.messages() if use_chat else s.render() for s in specs]
        scores = runner.score_options(prompts, [list(s.labels) for s in specs])
        done[0] += len(specs)
        if progress is not None:
            progress("format_search", done[0], total)
        return [float(sc.argmax == pool[int(i)].answer) for sc, i in zip(scores, idx, strict=True)]

    res = thompson_search(evaluate, arms, budget, batch, n_examples=n, pilot=pilot, seed=seed)
    if progress is not None:
        progress("format_search", done[0], done[0])
    return res
