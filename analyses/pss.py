"""Prompt sensitivity score, PSS (ProSA, Zhuo et al. 2024, eq. 1-2).

For an item i answered under the prompt set P_i (its valid variants in one
category, for one model), with Y(p) a per-prompt outcome,

    S_i = sum_{unordered pairs {p, q} in P_i} |Y(p) - Y(q)| / C(|P_i|, 2)     (eq. 1)
    PSS = (1 / |I|) sum_i S_i                                                (eq. 2)

The sum runs over the C(n, 2) = n (n - 1) / 2 *unordered* pairs.  Summing over
ordered pairs counts every pair twice; dividing that by C(n, 2) doubles the
score, a mistake the tests guard against.  Three outcomes Y are scored:

``correctness``
    Y = 1 when the answer equals gold, else 0 (objective items; ProSA's own use).
    With k correct out of n, S_i = k (n - k) / C(n, 2).
``answer``
    |Y(p) - Y(q)| = 1 when the two answers differ: S_i is the share of discordant
    pairs, (n^2 - sum_y n(y)^2) / (n (n - 1)), for any item.
``ordinal``
    |a_p - a_q| / (K - 1) on ordinal scales (agree scales), so that S_i lies in
    [0, 1] for any scale length K.

K comes from ``n_options`` when present, else from the length of the row's
``option_probs``, else (documented fallback) from the largest answer seen in the
dataset plus one, which can only understate K and so overstate S_i.  A row is
ordinal when its ``scale`` is ``'ordinal'``; without a ``scale`` value,
subjective items are taken as ordinal and objective ones as nominal.

Invalid rows: for ``correctness`` an unparseable answer is a prompt of the set
scored as wrong (``invalid='wrong'``, the default, as ProSA scores it) or is left
out (``invalid='drop'``); for ``answer`` and ``ordinal`` it is never a prompt of
the set (it has no answer to compare).  ``n_invalid`` counts the invalid rows of
each set either way.  Sets with fewer than two scored prompts have no S_i and are
left out of the mean (``n_items`` counts the rest).
Category ``all`` pools every variant of an item, ``original`` included, as ProSA
pools all its prompt templates.

:func:`set_scores` is the vectorised kernel of :func:`pss_items` (arrays in, arrays out);
its formulas are eq. 1 above, and its examples are those of :func:`pss_items`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyses.accuracy import check_invalid, correct_outcome
from analyses.prompt_sets import PromptSets, count_pairs, prompt_sets
from analyses.table_input import codes, is_ordinal, k_columns, load, n_options
from robustness.core.table import TableError

__all__ = ["SCORES", "pss", "pss_items", "set_scores", "summarize_pss"]

SCORES = ("correctness", "answer", "ordinal")


def set_scores(
    group: np.ndarray,
    n_groups: int,
    answer: np.ndarray,
    valid: np.ndarray,
    correct: np.ndarray | None,
    k: np.ndarray,
    ordinal: np.ndarray,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """S_i of every group for each score: ``{score: (n prompts, S_i)}``; NaN where undefined.

    Parameters
    ----------
    group, n_groups
        Each row's prompt-set code (0 .. n_groups - 1) and the number of sets.
    answer, valid
        Each row's canonical answer and validity.
    correct
        1/0 per row, NaN where the row is not scored (its invalid rule applied); None
        without gold answers (no ``correctness`` score).
    k, ordinal
        Each row's number of options K and whether its scale is ordinal.

    Returns
    -------
    dict of str to (numpy.ndarray, numpy.ndarray)
        Score (``correctness``, ``answer``, ``ordinal``) -> (number of scored prompts per
        set, S_i per set as in eq. 1, NaN where fewer than two prompts are scored).
    """
    G = n_groups
    pairs = count_pairs(group[valid], answer[valid], G)
    n = np.bincount(pairs.group, weights=pairs.count, minlength=G)
    n_pairs = n * (n - 1) / 2.0
    ok = n >= 2
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        # answer identity: discordant pairs = (n^2 - sum n(y)^2) / 2
        sumsq = np.bincount(pairs.group, weights=pairs.count.astype(float) ** 2, minlength=G)
        out["answer"] = (n, np.where(ok, (n * n - sumsq) / 2.0 / n_pairs, np.nan))
        # correctness: k correct of m -> k (m - k) discordant pairs
        if correct is not None:
            cv = ~np.isnan(correct)
            m = np.bincount(group[cv], minlength=G).astype(float)
            kk = np.bincount(group[cv], weights=correct[cv], minlength=G)
            mp = m * (m - 1) / 2.0
            out["correctness"] = (m, np.where(m >= 2, kk * (m - kk) / mp, np.nan))
        # ordinal: sum over unordered pairs of |a - b|, from counts sorted by answer
        cnt = pairs.count.astype(float)
        val = pairs.answer.astype(float)
        if cnt.size:
            st = pairs.starts()
            seg = np.repeat(np.arange(st.size), np.diff(np.r_[st, cnt.size]))
            cum_n = np.cumsum(cnt) - cnt
            cum_s = np.cumsum(cnt * val) - cnt * val
            below_n = cum_n - cum_n[st][seg]
            below_s = cum_s - cum_s[st][seg]
            contrib = cnt * (val * below_n - below_s)
            absdiff = np.bincount(pairs.group, weights=contrib, minlength=G)
        else:
            absdiff = np.zeros(G)
        kg = np.full(G, np.nan)
        np.fmax.at(kg, group, k)
        ordg = np.bincount(group, weights=ordinal.astype(float), minlength=G) > 0
        s_ord = np.where(ok & ordg & (kg >= 2), absdiff / (kg - 1) / n_pairs, np.nan)
        out["ordinal"] = (np.where(ordg, n, 0.0), s_ord)
    return out


def _pss_items(ps: PromptSets, invalid: str = "wrong") -> tuple[pd.DataFrame, str]:
    """:func:`pss_items` on prompt sets already built, with where K came from."""
    check_invalid(invalid)
    t = ps.table
    has_gold = "gold" in t.columns or "correct" in t.columns
    correct = correct_outcome(t, invalid)[0] if has_gold else None
    k, k_source = n_options(t)
    ordinal = is_ordinal(t)
    # per (model, item, category) and pooled per (model, item) as category 'all'
    frames = []
    item_code, item_keys = codes(ps.keys, ["model", "dataset", "item_id"])
    item_type = np.empty(len(item_keys), dtype=object)
    item_type[item_code] = ps.keys["dataset_type"].to_numpy(dtype=object)
    item_keys = item_keys.assign(dataset_type=item_type, category="all")
    for group, G, keys in (
        (ps.group, len(ps.keys), ps.keys),
        (item_code[ps.group], len(item_keys), item_keys),
    ):
        scores = set_scores(group, G, ps.answer, ps.valid, correct, k, ordinal)
        n_bad = np.bincount(group[~ps.valid], minlength=G).astype(np.int64)
        for score in SCORES:
            if score not in scores:
                continue
            n, s = scores[score]
            keep = n > 0
            frames.append(
                pd.DataFrame(
                    {
                        "model": keys["model"].to_numpy()[keep],
                        "dataset": keys["dataset"].to_numpy()[keep],
                        "dataset_type": keys["dataset_type"].to_numpy()[keep],
                        "item_id": keys["item_id"].to_numpy()[keep],
                        "category": keys["category"].to_numpy()[keep],
                        "score": score,
                        "n_prompts": n[keep].astype(np.int64),
                        "s_i": s[keep],
                        "n_invalid": n_bad[keep],
                    }
                )
            )
    return pd.concat(frames, ignore_index=True), k_source


def pss_items(df: pd.DataFrame, invalid: str = "wrong") -> pd.DataFrame:
    """S_i (ProSA eq. 1) of every item's prompt set, for each score.

    Parameters
    ----------
    df
        Long table.
    invalid
        ``'wrong'`` (default): for ``correctness`` an invalid answer is a wrong
        prompt of the set; ``'drop'``: it is left out.

    Returns
    -------
    pandas.DataFrame
        One row per (model, dataset, item, category, score), including category
        ``all`` (every variant of the item pooled): ``model, dataset,
        dataset_type, item_id, category, score``, ``n_prompts`` (prompts scored),
        ``s_i`` (NaN when fewer than two) and ``n_invalid`` (invalid rows of the
        set).  ``correctness`` rows appear for items with gold, ``ordinal`` rows
        for ordinal-scale items.

    Notes
    -----
    S_i = sum_{unordered pairs {p, q}} |Y(p) - Y(q)| / C(|P_i|, 2) (ProSA eq. 1).

    References
    ----------
    Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt
    sensitivity of LLMs. Findings of EMNLP 2024.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import pss_items
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": "q", "category": "paraphrase", "variant_id": ["a", "b", "c"],
    ...     "answer": [0, 0, 1], "gold": 0, "valid": True})
    >>> s = pss_items(t).query("category == 'paraphrase'").set_index("score")["s_i"]
    >>> round(float(s["correctness"]), 4), round(float(s["answer"]), 4)  # 2 of 3 pairs differ
    (0.6667, 0.6667)
    """
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"a long table must be a pandas DataFrame, not {type(df).__name__}.")
    t = load(df, optional=("gold", "correct", "scale", *k_columns(df)))
    return _pss_items(prompt_sets(t), invalid)[0]


PSS_COLUMNS = ["model", "dataset", "category", "score", "pss", "n_items", "sd"]


def summarize_pss(items: pd.DataFrame) -> pd.DataFrame:
    """PSS (ProSA eq. 2) per model x dataset x category x score from :func:`pss_items` output.

    Parameters
    ----------
    items
        :func:`pss_items` output: ``model, dataset, dataset_type, category, score, s_i``
        (and ``n_invalid``; 0 when absent); rows with a missing S_i are not averaged.

    Returns
    -------
    pandas.DataFrame
        ``model, dataset, category, score, pss, n_items, sd, dataset_type,
        n_invalid`` (invalid rows of the group's sets, those without S_i included).

    Notes
    -----
    PSS = (1 / |I|) sum_i S_i over the items with an S_i (ProSA eq. 2).

    References
    ----------
    Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt
    sensitivity of LLMs. Findings of EMNLP 2024.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from analyses import summarize_pss
    >>> items = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": ["a", "b", "c"], "category": "paraphrase", "score": "answer",
    ...     "s_i": [0.0, 0.5, 2 / 3]})
    >>> r = summarize_pss(items).iloc[0]
    >>> round(float(r["pss"]), 4), round(float(r["sd"]), 4), int(r["n_items"])
    (0.3889, 0.3469, 3)
    >>> s = [0.0, 0.5, 2 / 3]                                # by hand
    >>> round(float(np.mean(s)), 4), round(float(np.std(s, ddof=1)), 4)
    (0.3889, 0.3469)
    """
    keys = ["model", "dataset", "category", "score"]
    if "n_invalid" not in items.columns:
        items = items.assign(n_invalid=0)
    x = items[items["s_i"].notna()]
    if x.empty:
        return pd.DataFrame(columns=[*PSS_COLUMNS, "dataset_type", "n_invalid"])
    bad = items.groupby(keys, sort=True)["n_invalid"].sum().rename("n_invalid")
    out = (
        x.groupby(keys, sort=True)
        .agg(
            pss=("s_i", "mean"),
            n_items=("s_i", "size"),
            sd=("s_i", "std"),
            dataset_type=("dataset_type", "first"),
        )
        .join(bad, how="left")
        .reset_index()
    )
    out["n_invalid"] = out["n_invalid"].astype(np.int64)
    out["_last"] = out["category"] == "all"
    out = out.sort_values(["model", "dataset", "_last", "category", "score"])
    return out.drop(columns="_last").reset_index(drop=True)


def pss(df: pd.DataFrame, invalid: str = "wrong") -> pd.DataFrame:
    """Prompt sensitivity score (ProSA eq. 1-2) per model x dataset x category, and overall.

    Parameters
    ----------
    df
        Long table.
    invalid
        How ``correctness`` scores an invalid answer: ``'wrong'`` (default, as
        ProSA) or ``'drop'``.

    Returns
    -------
    pandas.DataFrame
        ``model, dataset, category, score, pss, n_items, sd, dataset_type,
        n_invalid``; ``category == 'all'`` is the overall score, every variant of
        an item pooled into one prompt set.

    Notes
    -----
    PSS = (1 / |I|) sum_i S_i, S_i = sum_{pairs {p, q}} |Y(p) - Y(q)| / C(|P_i|, 2)
    (ProSA eq. 1-2; the module docstring gives the three outcomes Y).

    References
    ----------
    Zhuo, J. et al. (2024). ProSA: Assessing and understanding the prompt
    sensitivity of LLMs. Findings of EMNLP 2024.

    Examples
    --------
    >>> import itertools, pandas as pd
    >>> from analyses import pss
    >>> t = pd.DataFrame({"model": "m", "dataset": "d", "dataset_type": "objective",
    ...     "item_id": "q", "category": "paraphrase", "variant_id": ["a", "b", "c"],
    ...     "answer": [0, 1, None], "gold": 0, "valid": [True, True, False]})
    >>> y = [1, 0, 0]                      # the invalid answer is wrong
    >>> brute = sum(abs(a - b) for a, b in itertools.combinations(y, 2)) / 3
    >>> r = pss(t).query("category == 'paraphrase' and score == 'correctness'").iloc[0]
    >>> bool(r["pss"] == brute), int(r["n_invalid"])
    (True, 1)
    >>> float(pss(t, invalid="drop").query("score == 'correctness'")["pss"].iloc[0])
    1.0
    """
    return summarize_pss(pss_items(df, invalid))
