"""POSIX, the prompt sensitivity index (Chatterjee et al. 2024).

For a set of N meaning-preserving prompts x_1 .. x_N of one item (the original
prompt among them) with y_j the model's response to x_j, the index is

    psi = 1 / (N (N - 1)) * sum_{i != j} | (1 / L_{y_j}) * log( P(y_j | x_i) / P(y_j | x_j) ) |

with L_{y_j} the length of y_j in tokens.  It is 0 when every prompt makes
every response exactly as likely as its own prompt does, and grows as the
prompts disagree about the responses.  This is the formula as the paper writes
it: the released code divides by ``max_new_tokens`` instead of L_{y_j} and
indexes the matrix transposed; neither is copied here.

The inputs are the log-likelihood matrix ``loglik[i, j] = log P(y_j | x_i)``
(row: prompt, column: response) and the response lengths L_j.
:func:`posix_from_runner` collects that matrix from any runner with a
``loglikelihood(pairs)`` method (pairs of (prompt, response) strings, returning
objects with ``.logprob``, the summed log-probability of the response tokens
given the prompt, and ``.n_tokens``), in one call.

References
----------
Chatterjee, A., Renduchintala, H. S. V. N. S. K., Bhatia, S. & Chakraborty, T. (2024).
POSIX: A prompt sensitivity index for large language models. Findings of EMNLP 2024.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from robustness.core.errors import AnalysisError, ModelError


class LoglikelihoodRunner(Protocol):
    """What :func:`posix_from_runner` needs from a runner."""

    def loglikelihood(self, pairs: Sequence[tuple[Any, str]]) -> list[Any]: ...


def posix(
    loglik: np.ndarray | Sequence[Sequence[float]], lengths: np.ndarray | Sequence[float]
) -> float:
    """POSIX psi of one prompt set from its log-likelihood matrix (see the module docstring).

    Parameters
    ----------
    loglik
        N x N matrix, ``loglik[i, j] = log P(y_j | x_i)``; the diagonal holds each
        response under its own prompt.
    lengths
        L_j, the number of tokens of response y_j (positive).

    Returns
    -------
    float
        psi >= 0; 0 when every prompt gives every response the likelihood its own prompt
        gives it.

    Notes
    -----
    psi = 1 / (N (N - 1)) sum_{i != j} | (1 / L_{y_j}) (log P(y_j | x_i) - log P(y_j | x_j)) |,
    the index as Chatterjee et al. (2024) define it (module docstring for where their
    released code differs).

    References
    ----------
    Chatterjee et al. (2024): see the module.

    Examples
    --------
    >>> from analyses import posix
    >>> ll = [[-2.0, -6.0], [-4.0, -3.0]]   # y_0 under x_1: -4 vs -2 under its own x_0
    >>> posix(ll, [2, 3])                   # (|(-4 + 2) / 2| + |(-6 + 3) / 3|) / 2
    1.0

    Against the sum written out, on three prompts:

    >>> import numpy as np
    >>> m = np.array([[-3.0, -7.0, -5.0], [-4.0, -2.0, -9.0], [-6.0, -5.0, -4.0]])
    >>> L = np.array([3.0, 2.0, 4.0])
    >>> hand = sum(abs((m[i, j] - m[j, j]) / L[j]) for i in range(3) for j in range(3)
    ...            if i != j) / (3 * 2)
    >>> round(posix(m, L), 6), round(float(hand), 6)
    (1.138889, 1.138889)
    """
    m = np.asarray(loglik, dtype=float)
    n = m.shape[0] if m.ndim == 2 else 0
    if m.ndim != 2 or m.shape[1] != n:
        raise AnalysisError(f"loglik must be a square N x N matrix, not shape {m.shape}.")
    if n < 2:
        raise AnalysisError(f"POSIX needs at least two prompts, not {n}.")
    if not np.all(np.isfinite(m)):
        i, j = np.argwhere(~np.isfinite(m))[0]
        raise AnalysisError(f"loglik[{i}, {j}] = {m[i, j]} is not finite.")
    length = np.asarray(lengths, dtype=float)
    if length.shape != (n,):
        raise AnalysisError(f"lengths must have one entry per response ({n}), not {length.shape}.")
    if np.any(~(length > 0)):
        j = int(np.flatnonzero(~(length > 0))[0])
        raise AnalysisError(f"lengths[{j}] = {length[j]} must be a positive token count.")
    # column j: log P(y_j | x_i) - log P(y_j | x_j), divided by L_j
    ratio = (m - np.diag(m)[None, :]) / length[None, :]
    off = ~np.eye(n, dtype=bool)
    return float(np.abs(ratio[off]).sum() / (n * (n - 1)))


@dataclass(frozen=True)
class PosixResult:
    """psi with the matrix it came from."""

    psi: float
    loglik: np.ndarray
    lengths: np.ndarray
    prompts: list[Any]
    responses: list[str]
    original_index: int | None


def _text(out: Any) -> str:
    return out if isinstance(out, str) else str(getattr(out, "text", out))


def _as_prompt(runner: Any, prompt: Any) -> Any:
    """``prompt`` as ``runner`` should get it: text as one user message when it chats."""
    chats = bool(getattr(runner, "has_chat_template", False)) and (
        getattr(runner, "chat", "auto") != "never"
    )
    if chats and isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return prompt


def posix_from_runner(
    runner: LoglikelihoodRunner,
    prompts: Sequence[Any],
    responses: Sequence[str] | None = None,
    *,
    original: Any = None,
    max_new_tokens: int = 64,
) -> PosixResult:
    """Collect the N x N log-likelihood matrix through ``runner.loglikelihood`` and compute psi.

    Parameters
    ----------
    runner
        Any object with ``loglikelihood(pairs)`` (see the module docstring); when
        ``responses`` is None it must also have ``generate(prompts,
        max_new_tokens)`` returning strings or objects with ``.text``.
    prompts
        The prompt variants of one item: text or chat messages. Text goes to a runner with
        a chat template (``has_chat_template``, ``chat`` not ``"never"``) as one user
        message, exactly as :func:`robustness.run` asks it; otherwise as it is.
    responses
        y_j for each prompt, or None to generate them (greedy, through the runner).
    original
        The unperturbed prompt; added first when it is not among ``prompts``
        (POSIX is defined over a set that contains it).
    max_new_tokens
        Passed to ``generate`` when responses are generated.

    Returns
    -------
    PosixResult
        ``psi`` (:func:`posix` of the matrix); ``loglik`` (the N x N matrix,
        ``loglik[i, j] = log P(y_j | x_i)``); ``lengths`` (L_j); ``prompts`` (as sent,
        the original first when it was added); ``responses`` (y_j); ``original_index``
        (the original prompt's position, or None).

    Notes
    -----
    One ``loglikelihood`` call scores all N^2 (prompt, response) pairs, row-major
    (prompt i, response j).  L_{y_j} is the token count of y_j scored under its
    own prompt x_j (the diagonal), since a tokenizer may split a response
    differently after different prompts.  psi is then the formula of :func:`posix`
    (Chatterjee et al. 2024).

    References
    ----------
    Chatterjee et al. (2024): see the module.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from analyses import posix_from_runner
    >>> class Toy:    # every response costs -1 per token under its own prompt, -2 otherwise
    ...     def loglikelihood(self, pairs):
    ...         return [SimpleNamespace(logprob=-(1 if p[-1] == r[-1] else 2) * len(r),
    ...                                 n_tokens=len(r)) for p, r in pairs]
    >>> posix_from_runner(Toy(), ["Q1", "Q2"], ["aa1", "b2"]).psi
    1.0
    """
    # Text and chat prompts are rendered alike: a runner whose model has a chat template (and
    # whose chat setting is not "never") gets plain text as one user message, as rb.run asks it.
    # Sent raw, an instruct model ends most text prompts at once, with an empty response.
    plist = [_as_prompt(runner, p) for p in prompts]
    if original is not None:
        original = _as_prompt(runner, original)
    original_index = None
    if original is not None:
        if original in plist:
            original_index = plist.index(original)
        else:
            plist = [original, *plist]
            original_index = 0
    n = len(plist)
    if n < 2:
        raise AnalysisError(f"POSIX needs at least two prompts, not {n}.")
    if responses is None:
        generated = runner.generate(plist, max_new_tokens)  # type: ignore[attr-defined]
        rlist = [_text(g) for g in generated]
        empty = [j for j, r in enumerate(rlist) if not r.strip()]
        if empty:
            raise AnalysisError(
                f"the model gave an empty response to prompt {empty[0]} ({len(empty)} of {n} "
                "prompts); POSIX divides by the response length, so pass responses or prompts "
                "the model answers."
            )
    else:
        rlist = [str(r) for r in responses]
    if len(rlist) != n:
        hint = (
            " (the original prompt was added first; give its response first)"
            if original_index == 0 and len(plist) == len(prompts) + 1
            else ""
        )
        raise AnalysisError(f"{len(rlist)} responses for {n} prompts{hint}.")
    pairs = [(plist[i], rlist[j]) for i in range(n) for j in range(n)]
    scored = list(runner.loglikelihood(pairs))
    if len(scored) != n * n:
        raise ModelError(f"runner.loglikelihood returned {len(scored)} results for {n * n} pairs.")
    try:
        ll = np.array([float(s.logprob) for s in scored]).reshape(n, n)
        toks = np.array([float(s.n_tokens) for s in scored]).reshape(n, n)
    except AttributeError as exc:
        raise ModelError(
            f"runner.loglikelihood must return objects with .logprob and .n_tokens ({exc})."
        ) from None
    lengths = np.diag(toks).copy()
    if np.any(lengths <= 0):
        j = int(np.flatnonzero(lengths <= 0)[0])
        raise AnalysisError(
            f"response {j} ({rlist[j]!r}) has no tokens; POSIX divides by its length."
        )
    return PosixResult(posix(ll, lengths), ll, lengths, plist, rlist, original_index)


def posix_table(
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset", "item_id"),
    prompt: str = "prompt_index",
    response: str = "response_index",
) -> pd.DataFrame:
    """psi per prompt set from stored pair scores (a DataFrame in, a DataFrame out).

    Parameters
    ----------
    df
        One row per (set, prompt i, response j) with the ``by`` columns, ``prompt`` and
        ``response`` (0-based indexes), ``logprob`` (log P(y_j | x_i)) and ``n_tokens``;
        every set must hold each of its N^2 pairs exactly once.
    by
        The columns that name a prompt set.
    prompt, response
        The columns holding i and j.

    Returns
    -------
    pandas.DataFrame
        One row per set: the ``by`` columns, ``n_prompts`` (N) and ``posix`` (psi).

    Notes
    -----
    psi = 1 / (N (N - 1)) sum_{i != j} |(logprob_ij - logprob_jj) / L_j| with L_j the
    ``n_tokens`` of the diagonal row (prompt j, response j); :func:`posix` per set
    (Chatterjee et al. 2024).

    References
    ----------
    Chatterjee et al. (2024): see the module.

    Examples
    --------
    >>> import pandas as pd
    >>> from analyses import posix_table
    >>> d = pd.DataFrame({"item_id": "q", "prompt_index": [0, 0, 1, 1],
    ...     "response_index": [0, 1, 0, 1], "logprob": [-2.0, -6.0, -4.0, -3.0],
    ...     "n_tokens": [2, 3, 2, 3]})
    >>> float(posix_table(d, by=["item_id"])["posix"].iloc[0])
    1.0
    """
    need = [*by, prompt, response, "logprob", "n_tokens"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise AnalysisError(f"posix_table: missing column(s) {', '.join(map(repr, missing))}.")
    rows = []
    for key, g in df.groupby(list(by), sort=True):
        n = int(max(g[prompt].max(), g[response].max())) + 1
        if len(g) != n * n or g[[prompt, response]].duplicated().any():
            raise AnalysisError(
                f"posix_table: set {key!r} does not hold each of its {n}x{n} "
                "(prompt, response) pairs exactly once."
            )
        ll = np.full((n, n), np.nan)
        ll[g[prompt].to_numpy(int), g[response].to_numpy(int)] = g["logprob"].to_numpy(float)
        diag = g[g[prompt] == g[response]].sort_values(response)
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_prompts": n,
                "posix": posix(ll, diag["n_tokens"].to_numpy(float)),
            }
        )
    return pd.DataFrame(rows, columns=[*by, "n_prompts", "posix"])
