"""Balanced option orders: permutations that move every option over the positions evenly.

A schedule of ``n`` permutations of ``m`` options is *balanced* when, for every option,
the number of variants that show it at each displayed position differs by at most one
across positions (``floor(n / m)`` or ``ceil(n / m)`` times), and the original order
(the identity) is never one of them.  A respondent that always picks one position then
gets its answers from the options the schedule moves there, so its agreement C_i
(Kamal et al. 2026, eq. 1) is the smallest the number of variants allows,
``ceil(n / m) / n``: ``1 / m`` for a full square of ``m`` variants.

The rows come from cyclic Latin squares with seeded relabelling,
``L[r][p] = tau[(r + kappa[p]) mod m]`` (``tau`` relabels the options, ``kappa`` the
positions, and the rows are drawn in a seeded order):

- every full block of ``m`` variants is a square none of whose rows is the identity;
- the last ``r < m`` variants are ``r`` of the ``m - 1`` non-identity rows of a square
  that *does* contain the identity (``kappa = tau^-1 - c``): those rows never show an
  option where the original prompt shows it, so with the original prompt as one more row
  the ``m - 1`` variants (the case ``n = m - 1``) complete the square, and fewer variants
  never repeat a displayed position for the same option.

When no fresh square can be drawn (small ``m``, many variants), the remaining rows are
greedy: the unused permutation that adds least to the sum of squared (option, position)
counts.

References
----------
Fisher, R. A. (1935). *The Design of Experiments*, ch. 4 (Latin squares).
Kamal et al. (2026): option-order perturbation and agreement C_i (eq. 1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

__all__ = ["balanced_orders", "cyclic_square", "position_counts"]

#: Fresh relabellings tried for one block before the greedy rows take over.
SQUARE_TRIES = 64
#: Candidates a greedy row is chosen from when the permutations cannot be listed.
GREEDY_CANDIDATES = 200
#: Largest number of options whose permutations are listed outright.
LISTED_UP_TO = 7

Order = tuple[int, ...]


def cyclic_square(m: int, rng: np.random.Generator, *, with_identity: bool) -> list[Order]:
    """The ``m`` rows of a cyclic Latin square with seeded relabelling, in seeded order.

    Parameters
    ----------
    m
        Number of options (at least 2).
    rng
        The generator every relabelling is drawn from.
    with_identity
        True: the square contains the identity (its other rows are derangements);
        False: none of its rows is the identity.

    Returns
    -------
    list of tuple
        ``m`` permutations; row ``r`` maps displayed position ``p`` to the option shown.
    """
    tau = [int(x) for x in rng.permutation(m)]
    tau_inv = [0] * m
    for pos, sym in enumerate(tau):
        tau_inv[sym] = pos
    if with_identity:
        start = int(rng.integers(m))
        kappa = [(tau_inv[p] - start) % m for p in range(m)]
    else:
        while True:
            kappa = [int(x) for x in rng.permutation(m)]
            offsets = {(tau_inv[p] - kappa[p]) % m for p in range(m)}
            if len(offsets) > 1:  # no shift r makes tau[(r + kappa[p]) % m] == p for all p
                break
    rows = [tuple(tau[(r + kappa[p]) % m] for p in range(m)) for r in range(m)]
    return [rows[int(i)] for i in rng.permutation(m)]


def position_counts(orders: list[Order], m: int) -> np.ndarray:
    """``counts[o, p]``: how many of ``orders`` show option ``o`` at position ``p``."""
    counts = np.zeros((m, m), dtype=int)
    for order in orders:
        for pos, opt in enumerate(order):
            counts[opt, pos] += 1
    return counts


def _fresh_rows(
    m: int, rng: np.random.Generator, want: int, used: set[Order], *, with_identity: bool
) -> list[Order] | None:
    identity = tuple(range(m))
    for _ in range(SQUARE_TRIES):
        rows = [r for r in cyclic_square(m, rng, with_identity=with_identity) if r != identity]
        rows = rows[:want]
        if not used.intersection(rows):
            return rows
    return None


def _greedy_rows(m: int, rng: np.random.Generator, chosen: list[Order]) -> Iterator[Order]:
    identity = tuple(range(m))
    used = set(chosen) | {identity}
    counts = position_counts(chosen, m)
    listed = m <= LISTED_UP_TO
    pool = [p for p in itertools.permutations(range(m)) if p not in used] if listed else []
    while not listed or pool:
        if listed:
            picks = [pool[int(i)] for i in rng.permutation(len(pool))[:GREEDY_CANDIDATES]]
        else:
            picks = [tuple(int(x) for x in rng.permutation(m)) for _ in range(GREEDY_CANDIDATES)]
            picks = [p for p in picks if p not in used]
            if not picks:
                continue
        best = min(picks, key=lambda p: sum(counts[o, pos] for pos, o in enumerate(p)))
        used.add(best)
        if listed:
            pool.remove(best)
        for pos, opt in enumerate(best):
            counts[opt, pos] += 1
        yield best


def balanced_orders(m: int, n: int, rng: np.random.Generator) -> Iterator[Order]:
    """Distinct non-identity permutations of ``m`` options, the first ``n`` balanced.

    Parameters
    ----------
    m
        Number of options that move (at least 2).
    n
        Number of variants the design is made for.
    rng
        Seeded generator (from study seed, item and family).

    Returns
    -------
    iterator of tuple
        Permutations (position -> option); after the ``n`` planned ones, greedy extra
        rows follow (for the caller to skip prompts that render the same), until every
        non-identity permutation has been given.

    Notes
    -----
    With ``n = q m + r`` the plan is ``q`` identity-free Latin squares and ``r`` derangement
    rows of one square containing the identity, so every option sits at each position
    ``q`` or ``q + 1`` times and a one-position respondent gets C_i = ceil(n / m) / n
    (Kamal et al. 2026, eq. 1) whenever distinct rows can be drawn.
    """
    total = math.factorial(m) - 1 if m <= LISTED_UP_TO else None
    chosen: list[Order] = []
    full, rest = divmod(max(n, 0), m)
    blocks = [(m, False)] * full + ([(rest, True)] if rest else [])
    if m == 2:  # the only other order is the swap: no square of two rows avoids the identity
        blocks = [(1, True)]
    for want, with_identity in blocks:
        rows = _fresh_rows(m, rng, want, set(chosen), with_identity=with_identity)
        if rows is None:
            break
        chosen.extend(rows)
    yield from chosen
    if total is not None and len(chosen) >= total:
        return
    yield from _greedy_rows(m, rng, chosen)
