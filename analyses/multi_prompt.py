"""Multi-prompt summaries of accuracy: average, maximum, combined score, worst case, quantiles.

A single prompt says little about a model (Mizrahi et al. 2024): accuracy moves between
meaning-preserving prompts, so a benchmark should report the distribution of accuracy over a
set of prompts.  For a set of prompts P with per-prompt accuracies acc(p) this module gives
the summaries the field uses:

- AvgP = mean_p acc(p) and MaxP = max_p acc(p), and the combined performance score
  CPS = MaxP * (1 - (MaxP - AvgP)) (Mizrahi et al. 2024);
- the minimum, the spread max - min and the 5/25/50/75/95% quantiles of acc(p) over P
  (PromptEval, Polo et al. 2024, who summarise the performance distribution by quantiles);
- HELM's worst case (Liang et al. 2023): an item counts as correct only when it is correct
  under every prompt of P.

A *prompt* is a (category, variant) pair of the long table.  The summaries over prompts
(max, min, spread, CPS, quantiles) need prompts that are the same template on every item, as
a formatting variant or an lm-eval task is: a variant is taken as a template when its
``params`` are the same on every item (or the table has no ``params``).  Families whose
variants are drawn per item (option orders, typos, paraphrases) have no shared template:
``formatting/2`` is one format everywhere, ``option_order/2`` a different order on every
item.  For a scope with such prompts only the mean and the worst case are given, and the
note says why.  Intervals resample items (a
stratified item bootstrap, items drawn with replacement within their dataset, the same
draws for every model and scope) and recompute every summary.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from analyses.accuracy import check_invalid, correct_outcome
from analyses.table_input import REFERENCE, load
from robustness.core.errors import AnalysisError, TableError

__all__ = ["ALL_PROMPTS", "MULTI_PROMPT_COLUMNS", "multi_prompt"]

#: The scope of the summary over every prompt of a model and dataset.
ALL_PROMPTS = "all prompts"

#: The summaries, each with ``<name>_low`` and ``<name>_high`` interval columns.
STATISTICS = (
    "mean",
    "max",
    "min",
    "spread",
    "cps",
    "worst_case",
    "q05",
    "q25",
    "q50",
    "q75",
    "q95",
)
QUANTILES = (0.05, 0.25, 0.50, 0.75, 0.95)
#: The summaries defined without shared prompt templates (means over the items' cells).
TEMPLATE_FREE = ("mean", "worst_case")

MULTI_PROMPT_COLUMNS = [
    "model",
    "dataset",
    "scope",
    "n_prompts",
    "mean",
    "max",
    "min",
    "cps",
    "worst_case",
    "q05",
    "q25",
    "q50",
    "q75",
    "q95",
    "spread",
    "n_items",
    *[f"{s}_{end}" for s in STATISTICS for end in ("low", "high")],
    "note",
]

PROMPT_LEVEL_NOTE = (
    "prompt-level table: worst_case and the item-bootstrap intervals need one row per item "
    "and prompt"
)


def _summaries(acc: np.ndarray, worst: np.ndarray) -> dict[str, np.ndarray]:
    """Every summary from accuracies ``acc`` (replicates x prompts, NaN: no item) and the
    worst case per replicate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an empty replicate is NaN
        mean = np.nanmean(acc, axis=1)
        top = np.nanmax(acc, axis=1)
        low = np.nanmin(acc, axis=1)
        q = np.nanquantile(acc, QUANTILES, axis=1)
    out = {
        "mean": mean,
        "max": top,
        "min": low,
        "spread": top - low,
        "cps": top * (1.0 - (top - mean)),
        "worst_case": worst,
    }
    for name, row in zip(STATISTICS[-5:], q, strict=True):
        out[name] = row
    return out


def _scope_stats(y: np.ndarray, m: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Summaries for item weights ``weights`` (replicates x items) over a y/mask matrix."""
    y0 = np.where(m, y, 0.0)
    hits = weights @ y0
    counts = weights @ m.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(counts > 0, hits / counts, np.nan)
    answered = m.any(axis=1)
    worst_item = np.where(m, y, 1.0).min(axis=1) * answered
    n_answered = weights @ answered.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        worst = np.where(n_answered > 0, (weights @ worst_item) / n_answered, np.nan)
    return _summaries(acc, worst)


def _scopes(categories: np.ndarray, include_original: bool) -> list[tuple[str, np.ndarray]]:
    """(scope name, prompt mask) for each family, then for every prompt."""
    out = []
    for family in sorted({c for c in categories if c != REFERENCE}):
        mask = categories == family
        if include_original:
            mask = mask | (categories == REFERENCE)
        out.append((family, mask))
    out.append((ALL_PROMPTS, np.ones(categories.size, dtype=bool)))
    return out


def _item_rows(
    t: pd.DataFrame,
    y: np.ndarray,
    prompt_col: str,
    include_original: bool,
    n_boot: int,
    level: float,
    rng: np.random.Generator,
) -> list[dict[str, object]]:
    """The summaries of every (model, dataset, scope) of an item-level table."""
    frame = pd.DataFrame(
        {
            "model": t["model"].astype(str).to_numpy(),
            "dataset": t["dataset"].astype(str).to_numpy(),
            "item": t["item_id"].astype(str).to_numpy(),
            "category": t["category"].astype(str).to_numpy(),
            "prompt": t[prompt_col].astype(str).to_numpy(),
            "params": (t["params"] if "params" in t.columns else pd.Series("", index=t.index))
            .astype(str)
            .to_numpy(),
            "y": y,
        }
    )
    frame = frame[~np.isnan(y)]
    tail = (1.0 - level) / 2.0
    rows: list[dict[str, object]] = []
    for dataset, d in frame.groupby("dataset", sort=True):
        item_code, items = pd.factorize(d["item"], sort=True)
        d = d.assign(icode=item_code)
        n_items = len(items)
        weights = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_boot)
        point = np.ones((1, n_items))
        for model, g in d.groupby("model", sort=True):
            keys = g["category"] + "\x00" + g["prompt"]
            prompt_code, prompts = pd.factorize(keys, sort=True)
            categories = np.array([p.split("\x00", 1)[0] for p in prompts], dtype=object)
            shared = g.groupby(prompt_code)["params"].nunique().to_numpy() <= 1
            hits = np.zeros((n_items, len(prompts)))
            seen = np.zeros((n_items, len(prompts)))
            rows_i = g["icode"].to_numpy()
            np.add.at(hits, (rows_i, prompt_code), g["y"].to_numpy())
            np.add.at(seen, (rows_i, prompt_code), 1.0)
            m = seen > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                ymat = np.where(m, hits / np.maximum(seen, 1.0), 0.0)
            for scope, cols in _scopes(categories, include_original):
                ys, ms = ymat[:, cols], m[:, cols]
                est = _scope_stats(ys, ms, point)
                boot = _scope_stats(ys, ms, weights) if n_boot > 0 else None
                row: dict[str, object] = {
                    "model": model,
                    "dataset": dataset,
                    "scope": scope,
                    "n_prompts": int(cols.sum()),
                    "n_items": int(ms.any(axis=1).sum()),
                    "note": "",
                }
                per_item = sorted({c for c in categories[cols & ~shared] if c != REFERENCE})
                if per_item:
                    row["note"] = (
                        f"the variants of {', '.join(per_item)} differ per item (no shared "
                        "template): only the mean and the worst case are defined"
                    )
                for name in STATISTICS:
                    if per_item and name not in TEMPLATE_FREE:
                        row[name] = row[f"{name}_low"] = row[f"{name}_high"] = np.nan
                        continue
                    row[name] = float(est[name][0])
                    lo, hi = (
                        _percentiles(boot[name], tail) if boot is not None else (np.nan, np.nan)
                    )
                    row[f"{name}_low"], row[f"{name}_high"] = lo, hi
                rows.append(row)
    return rows


def _percentiles(values: np.ndarray, tail: float) -> tuple[float, float]:
    """The percentile interval of the finite replicates (NaN when there are none)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.nan, np.nan
    lo, hi = np.quantile(finite, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _prompt_level_rows(df: pd.DataFrame, include_original: bool) -> list[dict[str, object]]:
    """The summaries of a prompt-level table (one row per model, prompt: accuracy, n_items)."""
    for column in ("model", "prompt", "accuracy"):
        if column not in df.columns:
            raise TableError(
                f"a prompt-level table needs columns model, prompt, accuracy (and optionally "
                f"dataset, category, n_items); column {column!r} is missing."
            )
    acc_all = pd.to_numeric(df["accuracy"], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(acc_all) | (acc_all < 0) | (acc_all > 1)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        value = df["accuracy"].iloc[pos]
        shown = repr(value) if isinstance(value, str) else str(value)
        raise TableError(f"column 'accuracy', row {pos}: {shown} is not a number in [0, 1].")
    t = df.assign(
        _acc=acc_all,
        _dataset=df["dataset"].astype(str) if "dataset" in df.columns else "all",
        _category=df["category"].astype(str) if "category" in df.columns else REFERENCE,
    )
    rows: list[dict[str, object]] = []
    for (model, dataset), g in t.groupby(["model", "_dataset"], sort=True):
        categories = g["_category"].to_numpy(object)
        for scope, cols in _scopes(categories, include_original):
            acc = g["_acc"].to_numpy(float)[cols][None, :]
            est = _summaries(acc, np.array([np.nan]))
            n_items = (
                int(pd.to_numeric(g["n_items"]).to_numpy()[cols].max())
                if "n_items" in g.columns
                else 0
            )
            row: dict[str, object] = {
                "model": model,
                "dataset": dataset,
                "scope": scope,
                "n_prompts": int(cols.sum()),
                "n_items": n_items,
                "note": PROMPT_LEVEL_NOTE,
            }
            for name in STATISTICS:
                row[name] = float(est[name][0])
                row[f"{name}_low"] = row[f"{name}_high"] = np.nan
            rows.append(row)
    return rows


def multi_prompt(
    df: pd.DataFrame,
    prompt_col: str = "variant_id",
    include_original: bool = True,
    invalid: str = "wrong",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> pd.DataFrame:
    """Multi-prompt summaries per model and dataset, over each family and over all prompts.

    Parameters
    ----------
    df
        A long table (one row per model, item and prompt; correctness from ``gold`` or
        ``correct``), or a *prompt-level* table (no ``item_id``; one row per model and prompt
        with columns ``model``, ``prompt``, ``accuracy`` in [0, 1], optionally ``dataset``,
        ``category`` and ``n_items``), the form in which published results often come.
    prompt_col
        The column naming a prompt within its category (``variant_id``).
    include_original
        The ``original`` prompt is one of the prompts of every family's scope (as in
        :func:`analyses.format_spread`); the ``all prompts`` scope always holds it.
    invalid
        ``'wrong'`` (default): an invalid answer scores 0; ``'drop'``: it is not scored.
    n_boot
        Item-bootstrap replicates (0: no intervals).
    level
        Coverage of the percentile intervals.
    seed
        Seed or :class:`numpy.random.Generator` of the item resampling.

    Returns
    -------
    pandas.DataFrame
        One row per (model, dataset, scope), scope each family then ``'all prompts'``:
        ``model``, ``dataset``, ``scope``, ``n_prompts``, ``mean`` (AvgP), ``max`` (MaxP),
        ``min``, ``cps``, ``worst_case``, ``q05``, ``q25``, ``q50``, ``q75``, ``q95``
        (quantiles of per-prompt accuracy, numpy's linear rule), ``spread`` (max - min),
        ``n_items`` (items scored), ``<statistic>_low`` and ``<statistic>_high`` for each
        of those statistics (the item-bootstrap percentile interval at ``level``), and
        ``note`` (empty, or what a prompt-level table cannot give: ``worst_case`` and the
        intervals are NaN there).

    Notes
    -----
    With acc(p) = (1 / n_p) sum_i Y_ip over the items i scored under prompt p:

    - AvgP = (1 / |P|) sum_p acc(p), MaxP = max_p acc(p) (Mizrahi et al. 2024, the
      average and maximum performance metrics);
    - CPS = MaxP * (1 - (MaxP - AvgP)) (Mizrahi et al. 2024, combined performance score:
      the peak discounted by its saturation MaxP - AvgP);
    - min_p acc(p), spread = MaxP - min_p acc(p), and the quantiles Q_q of {acc(p)}
      (Polo et al. 2024, the performance distribution over templates);
    - worst case = (1 / n) sum_i min_p Y_ip over the prompts item i was scored under
      (HELM's worst-case robustness, Liang et al. 2023).

    Intervals: items are drawn with replacement within their dataset (the same draws for
    every model and scope), each replicate recomputes every statistic from the drawn items,
    and the interval is the percentile interval of the replicates.

    References
    ----------
    Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., Stanovsky, G. (2024). State of
    what art? A call for multi-prompt LLM evaluation. TACL 12.
    Polo, F. M., Xu, R., Weber, L., Silva, M., Bhardwaj, O., Choshen, L., de Oliveira, A. F. M.,
    Sun, Y., Yurochkin, M. (2024). Efficient multi-prompt evaluation of LLMs. NeurIPS 2024.
    Liang, P. et al. (2023). Holistic evaluation of language models. TMLR.

    Examples
    --------
    Three items under three prompts, correct as [1 1 0], [1 0 0], [1 1 1]: AvgP = 2/3,
    MaxP = 1, CPS = 1 * (1 - (1 - 2/3)) = 2/3, and only the first item is correct under all
    three prompts (worst case 1/3).

    >>> import pandas as pd
    >>> from analyses import multi_prompt
    >>> right = {"original/0": [1, 1, 0], "formatting/0": [1, 0, 0], "formatting/1": [1, 1, 1]}
    >>> t = pd.DataFrame([{"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": f"i{i}", "category": v.split("/")[0], "variant_id": v,
    ...     "answer": 1 - ok[i], "gold": 0, "valid": True}
    ...     for v, ok in right.items() for i in range(3)])
    >>> r = multi_prompt(t, n_boot=0).set_index("scope").loc["all prompts"]
    >>> [round(float(r[c]), 4) for c in ("mean", "max", "min", "cps", "worst_case", "q25")]
    [0.6667, 1.0, 0.3333, 0.6667, 0.3333, 0.5]
    """
    check_invalid(invalid)
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a table must be a pandas DataFrame, not {type(df).__name__}.")
    if not 0.0 < level < 1.0:
        raise AnalysisError(f"level must be between 0 and 1, not {level!r}.")
    if n_boot < 0:
        raise AnalysisError(f"n_boot must be 0 or more, not {n_boot!r}.")
    if "item_id" not in df.columns and "accuracy" in df.columns:
        rows = _prompt_level_rows(df, include_original)
    else:
        t = load(df, optional=("gold", "correct", "params", prompt_col))
        if prompt_col not in t.columns:
            raise TableError(f"multi_prompt: the table has no column {prompt_col!r}.")
        y, _ = correct_outcome(t, invalid)
        rng = np.random.default_rng(seed)
        rows = _item_rows(
            t.reset_index(drop=True), y, prompt_col, include_original, n_boot, level, rng
        )
    return pd.DataFrame(rows, columns=MULTI_PROMPT_COLUMNS)
