"""The plan of shared-prefix scoring: which common prefixes of a call's rows are worth caching.

What is shared
--------------
A call's rows (token ids, each with the number of final positions whose logits are read) go
into one compressed token trie. Each row may share at most ``len(row) - keep`` tokens, so every
position that is read stays in the row's own suffix. A trie node becomes a *cache point* when
sharing it saves enough: with ``n`` rows below it and ``s`` tokens since the cache point above
it, it saves ``(n - 1) * s`` token positions, and it is kept when that is at least
``min_gain``. Nodes nest, so the options of one cloze prompt share the prompt, the prompts of a
few-shot dataset share the exemplars above that, and every chat prompt shares the template's
preamble. The whole call falls back to plain batches when sharing would save less than a tenth of
the token positions (a single prompt, zero-shot prompts without a common preamble).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["PrefixNode", "all_rows", "build_tree", "prune_tree", "shared_tokens"]


@dataclass
class PrefixNode:
    """A node of the prefix trie: every row at or below it starts with the same ``depth``
    tokens. ``rows`` are the rows whose suffix starts here; ``size`` counts all rows below."""

    depth: int
    rows: list[int] = field(default_factory=list)
    children: list[PrefixNode] = field(default_factory=list)
    size: int = 0
    #: one row below the node (to read the node's tokens from)
    witness: int = -1


def build_tree(seqs: Sequence[Sequence[int]], limits: Sequence[int]) -> PrefixNode:
    """The compressed trie of ``seqs``, each cut at ``limits[i]`` tokens.

    Parameters
    ----------
    seqs : sequence of token-id sequences
        The rows.
    limits : sequence of int
        How many leading tokens of each row may be shared (``0 <= limits[i] <= len(seqs[i])``).

    Returns
    -------
    PrefixNode
        The root (depth 0); every internal node is a point where rows diverge.
    """
    trimmed = [tuple(seqs[i][: limits[i]]) for i in range(len(seqs))]
    root = PrefixNode(depth=0, size=len(seqs), witness=0 if seqs else -1)
    stack: list[tuple[PrefixNode, list[int]]] = [(root, list(range(len(seqs))))]
    while stack:
        node, members = stack.pop()
        by_token: dict[int, list[int]] = defaultdict(list)
        for r in members:
            if len(trimmed[r]) == node.depth:
                node.rows.append(r)
            else:
                by_token[trimmed[r][node.depth]].append(r)
        for group in by_token.values():
            if len(group) == 1:
                node.rows.append(group[0])
                continue
            low = min(trimmed[r] for r in group)
            high = max(trimmed[r] for r in group)
            depth = node.depth + 1
            while depth < len(low) and low[depth] == high[depth]:
                depth += 1
            child = PrefixNode(depth=depth, size=len(group), witness=group[0])
            node.children.append(child)
            stack.append((child, group))
    return root


def prune_tree(root: PrefixNode, min_gain: int) -> PrefixNode:
    """Keep the cache points that save at least ``min_gain`` token positions (see the module
    docstring); the rows of dissolved nodes move up to the nearest kept node.

    Returns
    -------
    PrefixNode
        A new tree of kept nodes only, with the same root depth.
    """

    def lift(node: PrefixNode, parent_depth: int) -> tuple[list[int], list[PrefixNode]]:
        gain = (node.size - 1) * (node.depth - parent_depth)
        if node.depth > parent_depth and node.size > 1 and gain >= min_gain:
            kept = PrefixNode(depth=node.depth, size=node.size, witness=node.witness)
            kept.rows = list(node.rows)
            for child in node.children:
                lifted, below = lift(child, node.depth)
                kept.rows.extend(lifted)
                kept.children.extend(below)
            return [], [kept]
        rows = list(node.rows)
        kids: list[PrefixNode] = []
        for child in node.children:
            more, found = lift(child, parent_depth)
            rows.extend(more)
            kids.extend(found)
        return rows, kids

    out = PrefixNode(depth=root.depth, size=root.size, witness=root.witness)
    out.rows = list(root.rows)
    for child in root.children:
        rows, kids = lift(child, root.depth)
        out.rows.extend(rows)
        out.children.extend(kids)
    return out


def shared_tokens(root: PrefixNode, seqs: Sequence[Sequence[int]]) -> int:
    """Token positions a shared run of the pruned tree computes (cache spans plus suffixes)."""
    total = 0
    stack: list[tuple[PrefixNode, int]] = [(root, 0)]
    while stack:
        node, parent_depth = stack.pop()
        total += node.depth - parent_depth
        total += sum(len(seqs[r]) - node.depth for r in node.rows)
        stack.extend((child, node.depth) for child in node.children)
    return total


def all_rows(node: PrefixNode) -> list[int]:
    """Every row at or below ``node``."""
    out: list[int] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.extend(current.rows)
        stack.extend(current.children)
    return out
