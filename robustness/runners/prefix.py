"""Shared-prefix scoring: the key/value cache of a common prefix is computed once and every
continuation is scored on top of it.

What is shared is planned in ``prefix_trie.py``: a compressed token trie of the call's rows,
with the nodes that save at least ``min_gain`` token positions kept as cache points. A row is
a plain token sequence or a continuation tree (a prompt with all its responses packed, see
``continuations.py``); only the causal part before a row's first read is ever shared.

How it runs
-----------
The trie is walked depth first. At a cache point the rows that end there are batched by suffix
length (the runner's own ``batches``: longest first, ``batch_size`` rows, padding cap) and run
on top of the cached keys and values of their prefixes; the child cache points are batched the
same way and their spans run to extend the cache, which is then walked in turn. A batch may mix
rows under different prefixes: the prefixes' caches are stacked, left padded inside (mask zero),
and each row's position ids continue from its own prefix's length, so every row sees exactly
the positions and keys it would see alone. How one forward is built (masks, the read-only
cache, attention over grouped heads, logits at the read positions only): ``prefix_forward.py``.

Where the time goes (the profile behind the defaults)
------------------------------------------------------
On the reference 2-core CPU (SmolLM2-135M, fp32, batch 16) the cost of a forward is its token
positions plus a fixed part of roughly a hundred positions' worth (the weights are read and
every layer's kernels launched whatever the batch holds). Cloze scoring of 200 MMLU items used
to cache every prompt and run its four options as separate suffix rows: 152 forwards for 200
questions (27 for letter scoring), the suffix forwards holding 28% of the positions but half
the time, split small by the padding cap on suffixes of 1 to 30 tokens and by cache points of a
few shared words. Now each prompt's responses are packed into one row, so a cloze question is
one row like a letter question; a cache point must save ``min_gain`` = 128 positions, which
keeps the chat preamble, few-shot exemplars and the question stem shared by an item's
variants, and drops the ones that would cost more forwards than they save.

Memory
------
Sharing trades compute for memory held between forwards: a cache point's keys and values stay
alive while the rows below it run, ``2 * layers * kv_heads * head_dim`` values per token and
prefix (45 KiB a token for SmolLM2-135M in fp32), while a forward over a suffix needs less
activation memory than over the full row. The budget is the estimated peak of the largest plain
batch the call would run: ``batch_size`` rows of the call's longest unpacked row, with logits at
the cap that bounds every batch's logits (``max_logits_bytes``, twice: the logits and their
normalisation). Every shared forward is sized so that the caches held on the current path
plus its own estimated peak stay within that budget; a cache point that does not fit even
alone is not cached and its rows run as plain suffixes of the point above. The estimate
(:meth:`PrefixScorer.step_bytes`) counts one layer's activations, the concatenated keys and
values of one layer, attention weights and float32 logits; it is a model of the peak, not a
measurement.

Numerics
--------
The same positions, keys and masks as the unshared forward; only the order of floating-point
reductions differs (a cached prefix is computed in a different batch shape, a packed row in a
wider one). On SmolLM2 in fp32 that moved the 160 cloze log-likelihoods of 40 MMLU items by
4.5e-5 at most (mean 1.2e-5), as much as the unshared path moves between batch 16 and batch 1
(3.6e-5); tests require 1e-4 and identical picks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from robustness.runners.continuations import Row
from robustness.runners.prefix_forward import Past, gqa_attention, run_forward, supports_sharing
from robustness.runners.prefix_trie import (
    PrefixNode,
    all_rows,
    build_tree,
    prune_tree,
    shared_tokens,
)

__all__ = ["MIN_GAIN", "PrefixScorer"]

#: ``consume(rows, logits, seconds)``: the logits of the last ``rows[r].keep`` positions of
#: each row, flattened in row order (float32, ``[sum of keeps, vocab]``), and the wall time
#: spent since the last call.
Consume = Callable[[list[int], torch.Tensor, float], None]
#: ``batches(lengths, batch_size)``: the runner's length-sorted batching.
Batcher = Callable[[Sequence[int], int | None], list[list[int]]]
#: Least token positions a cache point must save (see "Where the time goes").
MIN_GAIN = 128


class PrefixScorer:
    """Runs a call's rows with shared prefixes over one causal LM (see the module docstring).

    Parameters
    ----------
    model : transformers causal LM
        A model whose layers all use full attention.
    pad_id : int
        Padding token id.
    batches : callable
        The runner's length-sorted batching, ``batches(lengths, batch_size)``.
    batch_size : int
        Most rows per forward.
    min_gain : int
        Least token positions a cache point must save.
    max_logits_bytes : int
        Most bytes of float32 logits one forward may produce.
    """

    def __init__(
        self,
        model: Any,
        pad_id: int,
        batches: Batcher,
        batch_size: int,
        *,
        min_gain: int = MIN_GAIN,
        max_logits_bytes: int = 1 << 29,
    ) -> None:
        self.model = model
        self.pad_id = pad_id
        self.batches = batches
        self.batch_size = batch_size
        self.min_gain = min_gain
        self.max_logits_bytes = max_logits_bytes
        config = (
            model.config.get_text_config()
            if hasattr(model.config, "get_text_config")
            else model.config
        )
        self.layers = int(config.num_hidden_layers)
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(getattr(config, "num_key_value_heads", None) or self.heads)
        self.hidden = int(config.hidden_size)
        self.head_dim = int(getattr(config, "head_dim", None) or self.hidden // self.heads)
        self.inter = int(getattr(config, "intermediate_size", None) or 4 * self.hidden)
        self.vocab = int(config.vocab_size)
        param = next(model.parameters())
        self.device, self.elem = param.device, param.element_size()
        self.supported = supports_sharing(model)
        #: token positions computed by forwards, and the number of forwards (for benchmarks).
        self.tokens_run = 0
        self.forwards = 0
        #: the last shared run's budget and the largest estimate it admitted (for tests).
        self.budget = 0
        self.peak_estimate = 0

    # ------------------------------------------------------------------ memory model
    def step_bytes(self, rows: int, width: int, past: int, reads: int) -> int:
        """Estimated peak bytes of one forward: ``rows`` rows of ``width`` new tokens on top of
        ``past`` cached positions, producing ``reads`` positions of float32 logits."""
        act = rows * width * (6 * self.hidden + 3 * self.inter) * self.elem
        kv = rows * (past + width) * 2 * self.kv_heads * self.head_dim * self.elem
        scores = rows * self.heads * width * (past + width) * 4
        logits = min(2 * reads * self.vocab * 4, 2 * self.max_logits_bytes)
        return act + kv + scores + logits

    def past_bytes(self, slots: int, width: int) -> int:
        """Bytes of a cache of ``slots`` prefixes ``width`` positions wide (all layers)."""
        return slots * width * self.layers * 2 * self.kv_heads * self.head_dim * self.elem

    # ------------------------------------------------------------------ planning
    def plan(self, rows: Sequence[Row], *, force: bool = False) -> PrefixNode | None:
        """The pruned trie of ``rows``, or None when sharing would save less than a tenth of the
        positions or the model cannot share. With ``force`` (packed rows, which only this
        scorer runs) a supported model always gets a tree, with no cache point if none pays."""
        if not self.supported or (len(rows) < 2 and not force):
            return None
        seqs = [row.tokens for row in rows]
        limits = [max(0, len(row) - row.keep) for row in rows]
        root = prune_tree(build_tree(seqs, limits), self.min_gain)
        if not force and (
            not root.children or shared_tokens(root, seqs) > 0.9 * sum(map(len, seqs))
        ):
            return None
        return root

    # ------------------------------------------------------------------ running
    def run(
        self, root: PrefixNode, rows: Sequence[Row], consume: Consume, plain_width: int
    ) -> None:
        """Run every row once, sharing the cache points of ``root`` (see the module docstring);
        ``plain_width`` is the longest row the unshared computation would run."""
        batch = min(self.batch_size, len(rows))
        budget = self.step_bytes(batch, plain_width, 0, 0) + 2 * self.max_logits_bytes
        self.budget, self.peak_estimate = budget, 0
        self._clock = time.perf_counter()
        with torch.inference_mode(), gqa_attention(self.model):
            self._visit(None, [root], rows, consume, 0, budget)

    def _visit(
        self,
        past: Past | None,
        nodes: list[PrefixNode],
        rows: Sequence[Row],
        consume: Consume,
        held: int,
        budget: int,
    ) -> None:
        width = 0 if past is None else past.width
        leaves: list[tuple[int, int]] = []  # (slot, row)
        kids: list[tuple[int, PrefixNode]] = []
        for slot, node in enumerate(nodes):
            leaves.extend((slot, r) for r in node.rows)
            for child in node.children:
                span = child.depth - node.depth
                need = held + self.past_bytes(1, width + span) + self.step_bytes(1, span, width, 1)
                if need <= budget:
                    kids.append((slot, child))
                else:
                    leaves.extend((slot, r) for r in all_rows(child))

        lengths = [len(rows[r]) - nodes[s].depth for s, r in leaves]
        reads = [rows[r].keep for _, r in leaves]
        for group in self.batches(lengths, self.batch_size):
            for chunk in self._fit(group, lengths, reads, width, held, budget, False):
                pieces = [
                    (rows[r], nodes[s].depth, len(rows[r])) for s, r in (leaves[j] for j in chunk)
                ]
                keeps = [rows[leaves[j][1]].keep for j in chunk]
                need = held + self.step_bytes(
                    len(chunk), max(lengths[j] for j in chunk), width, sum(keeps)
                )
                self.peak_estimate = max(self.peak_estimate, need)
                logits, _ = self._forward(
                    past, [leaves[j][0] for j in chunk], pieces, max(keeps), False, keeps
                )
                now = time.perf_counter()
                consume([leaves[j][1] for j in chunk], logits, now - self._clock)
                self._clock = now

        spans = [c.depth - nodes[s].depth for s, c in kids]
        for group in self.batches(spans, self.batch_size):
            for chunk in self._fit(group, spans, [1] * len(kids), width, held, budget, True):
                pieces = [
                    (rows[c.witness], nodes[s].depth, c.depth) for s, c in (kids[j] for j in chunk)
                ]
                _, extended = self._forward(
                    past, [kids[j][0] for j in chunk], pieces, 1, True, None
                )
                assert extended is not None
                size = self.past_bytes(len(chunk), extended.width)
                need = (
                    held
                    + size
                    + self.step_bytes(len(chunk), max(spans[j] for j in chunk), width, len(chunk))
                )
                self.peak_estimate = max(self.peak_estimate, need)
                self._visit(
                    extended, [kids[j][1] for j in chunk], rows, consume, held + size, budget
                )
                del extended

    def _fit(
        self,
        group: list[int],
        lengths: Sequence[int],
        reads: Sequence[int],
        past: int,
        held: int,
        budget: int,
        capture: bool,
    ) -> list[list[int]]:
        """Split a length-sorted batch so that held caches plus the forward's estimated peak
        (plus the cache it creates, for cache points) stay within ``budget`` and its float32
        logits within ``max_logits_bytes``, as in the plain path."""
        out: list[list[int]] = []
        current: list[int] = []
        for j in group:
            trial = [*current, j]
            width = max(lengths[t] for t in trial)
            count = sum(reads[t] for t in trial)
            need = held + self.step_bytes(len(trial), width, past, count)
            if capture:
                need += self.past_bytes(len(trial), past + width)
            if current and (need > budget or count * self.vocab * 4 > self.max_logits_bytes):
                out.append(current)
                current = [j]
            else:
                current = trial
        if current:
            out.append(current)
        return out

    def _forward(
        self,
        past: Past | None,
        slots: list[int],
        pieces: list[tuple[Row, int, int]],
        keep: int,
        capture: bool,
        picks: list[int] | None,
    ) -> tuple[torch.Tensor, Past | None]:
        logits, extended, positions = run_forward(
            self.model, self.pad_id, past, slots, pieces, keep, capture, picks
        )
        self.tokens_run += positions
        self.forwards += 1
        return logits, extended
