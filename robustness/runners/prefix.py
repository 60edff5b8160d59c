"""Shared-prefix scoring: the key/value cache of a common prefix is computed once and every
continuation is scored on top of it.

What is shared is planned in ``prefix_trie.py``: a compressed token trie of the call's rows,
with the nodes that save at least ``min_gain`` token positions kept as cache points.

How it runs
-----------
The trie is walked depth first. At a cache point the rows that end there are batched by suffix
length (the runner's own ``batches``: longest first, ``batch_size`` rows, padding cap) and run
on top of the cached keys and values of their prefixes; the child cache points are batched the
same way and their spans run to extend the cache, which is then walked in turn. A batch may mix
rows under different prefixes: the prefixes' caches are stacked, left padded inside (mask zero),
and each row's position ids continue from its own prefix's length, so every row sees exactly
the positions and keys it would see alone. The cached keys are never written to: each layer
returns ``past[row's prefix] ++ new`` for the current forward only (``_SharedLayer``).

Memory
------
Sharing trades compute for memory held between forwards: a cache point's keys and values stay
alive while the rows below it run, ``2 * layers * kv_heads * head_dim`` values per token and
prefix (45 KiB a token for SmolLM2-135M in fp32), while a forward over a suffix needs less
activation memory than over the full row. The budget is the estimated peak of the largest plain
batch the call would run (``batch_size`` rows of the call's longest row, logits capped as the
runner caps them). Every shared forward is sized so that the caches held on the current path
plus its own estimated peak stay within that budget; a cache point that does not fit even
alone is not cached and its rows run as plain suffixes of the point above. The estimate
(:meth:`PrefixScorer.step_bytes`) counts one layer's activations, the concatenated keys and
values of one layer, attention weights and float32 logits; it is a model of the peak, not a
measurement.

Numerics
--------
The same positions, keys and masks as the unshared forward; only the order of floating-point
reductions differs (a cached prefix is computed in a different batch shape), which moves fp32
log-likelihoods by about 1e-6 (tests require 1e-4 and identical picks).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from robustness.runners.batching import left_pad
from robustness.runners.prefix_trie import (
    PrefixNode,
    all_rows,
    build_tree,
    prune_tree,
    shared_tokens,
)

__all__ = ["PrefixScorer"]

#: ``consume(rows, logits, seconds)``: logits of the last positions of each row (float32,
#: ``[len(rows), keep, vocab]``, right aligned) and the wall time spent since the last call.
Consume = Callable[[list[int], torch.Tensor, float], None]
#: ``batches(lengths, batch_size)``: the runner's length-sorted batching.
Batcher = Callable[[Sequence[int], int | None], list[list[int]]]


@dataclass
class _Past:
    """Cached keys and values of ``U`` prefixes, stacked and left padded: per layer
    ``[U, kv_heads, T, head_dim]``, with the mask ``[U, T]`` and each prefix's real length."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    mask: torch.Tensor
    length: torch.Tensor

    @property
    def width(self) -> int:
        return int(self.mask.shape[1])


def _cache_layer_class() -> Any:
    from transformers.cache_utils import DynamicLayer

    class _SharedLayer(DynamicLayer):  # type: ignore[misc, valid-type, unused-ignore]
        """A read-only cache layer: ``update`` returns ``past[index] ++ new`` and keeps it only
        when ``capture`` is set (to extend the cache for a child cache point)."""

        def __init__(self, keys: torch.Tensor, values: torch.Tensor, index: Any, capture: bool):
            super().__init__()
            self.keys, self.values = keys, values
            self.past_keys: torch.Tensor = keys
            self.past_values: torch.Tensor = values
            self.is_initialized = True
            self.index = index
            self.capture = capture
            self.captured: tuple[torch.Tensor, torch.Tensor] | None = None

        def _select(self, past: torch.Tensor, rows: int) -> torch.Tensor:
            if self.index is None:
                return past.expand(rows, -1, -1, -1)
            return past.index_select(0, self.index)

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> Any:
            rows = key_states.shape[0]
            keys = torch.cat([self._select(self.past_keys, rows), key_states], dim=-2)
            values = torch.cat([self._select(self.past_values, rows), value_states], dim=-2)
            if self.capture:
                self.captured = (keys, values)
            return keys, values

        def get_seq_length(self) -> int:
            return int(self.past_keys.shape[-2])

        def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
            return int(self.past_keys.shape[-2]) + query_length, 0

    return _SharedLayer


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
    """

    def __init__(
        self,
        model: Any,
        pad_id: int,
        batches: Batcher,
        batch_size: int,
        *,
        min_gain: int = 32,
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
        self.supported = _supports_sharing(model, config)
        self._layer_class: Any = None
        #: token positions computed by forwards (for benchmarks).
        self.tokens_run = 0
        #: the last shared run's budget and the largest estimate it admitted (for tests).
        self.budget = 0
        self.peak_estimate = 0

    # ------------------------------------------------------------------ memory model
    def step_bytes(self, rows: int, width: int, past: int, keep: int) -> int:
        """Estimated peak bytes of one forward: ``rows`` rows of ``width`` new tokens on top of
        ``past`` cached positions, reading ``keep`` positions of float32 logits."""
        act = rows * width * (6 * self.hidden + 3 * self.inter) * self.elem
        kv = rows * (past + width) * 2 * self.kv_heads * self.head_dim * self.elem
        scores = rows * self.heads * width * (past + width) * 4
        logits = min(2 * rows * keep * self.vocab * 4, 2 * self.max_logits_bytes)
        return act + kv + scores + logits

    def past_bytes(self, slots: int, width: int) -> int:
        """Bytes of a cache of ``slots`` prefixes ``width`` positions wide (all layers)."""
        return slots * width * self.layers * 2 * self.kv_heads * self.head_dim * self.elem

    # ------------------------------------------------------------------ planning
    def plan(
        self, seqs: Sequence[Sequence[int]], keeps: Sequence[int]
    ) -> tuple[PrefixNode, int, int] | None:
        """The pruned trie and (shared, plain) token counts, or None when sharing would save
        less than a tenth of the positions (or the model cannot share)."""
        if not self.supported or len(seqs) < 2:
            return None
        limits = [max(0, len(s) - k) for s, k in zip(seqs, keeps, strict=True)]
        root = prune_tree(build_tree(seqs, limits), self.min_gain)
        if not root.children:
            return None
        plain = sum(len(s) for s in seqs)
        shared = shared_tokens(root, seqs)
        if shared > 0.9 * plain:
            return None
        return root, shared, plain

    # ------------------------------------------------------------------ running
    def run(
        self,
        root: PrefixNode,
        seqs: Sequence[Sequence[int]],
        keeps: Sequence[int],
        consume: Consume,
    ) -> None:
        """Run every row once, sharing the cache points of ``root``; see the module docstring."""
        longest = max(len(s) for s in seqs)
        budget = self.step_bytes(min(self.batch_size, len(seqs)), longest, 0, max(keeps))
        self.budget, self.peak_estimate = budget, 0
        self._clock = time.perf_counter()
        self._visit(None, [root], seqs, keeps, consume, 0, budget)

    def _visit(
        self,
        past: _Past | None,
        nodes: list[PrefixNode],
        seqs: Sequence[Sequence[int]],
        keeps: Sequence[int],
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

        def suffix(slot: int, row: int) -> list[int]:
            return list(seqs[row][nodes[slot].depth :])

        lengths = [len(seqs[r]) - nodes[s].depth for s, r in leaves]
        for group in self.batches(lengths, self.batch_size):
            for chunk in self._fit(group, lengths, width, held, budget, 0, keeps, leaves):
                keep = max(keeps[leaves[j][1]] for j in chunk)
                rows = [suffix(*leaves[j]) for j in chunk]
                need = held + self.step_bytes(len(rows), max(map(len, rows)), width, keep)
                self.peak_estimate = max(self.peak_estimate, need)
                logits, _ = self._forward(past, [leaves[j][0] for j in chunk], rows, keep, False)
                now = time.perf_counter()
                consume([leaves[j][1] for j in chunk], logits, now - self._clock)
                self._clock = now

        spans = [c.depth - nodes[s].depth for s, c in kids]
        for group in self.batches(spans, self.batch_size):
            for chunk in self._fit(group, spans, width, held, budget, 1, None, kids):
                rows = [
                    list(seqs[kids[j][1].witness][nodes[kids[j][0]].depth : kids[j][1].depth])
                    for j in chunk
                ]
                _, extended = self._forward(past, [kids[j][0] for j in chunk], rows, 1, True)
                assert extended is not None
                size = self.past_bytes(len(chunk), extended.width)
                need = held + size + self.step_bytes(len(rows), max(map(len, rows)), width, 1)
                self.peak_estimate = max(self.peak_estimate, need)
                self._visit(
                    extended, [kids[j][1] for j in chunk], seqs, keeps, consume, held + size, budget
                )
                del extended

    def _fit(
        self,
        group: list[int],
        lengths: list[int],
        past: int,
        held: int,
        budget: int,
        capture: int,
        keeps: Sequence[int] | None,
        items: Sequence[tuple[int, Any]],
    ) -> list[list[int]]:
        """Split a length-sorted batch so that held caches plus the forward's estimated peak
        (plus the cache it creates, for cache points) stay within ``budget`` and its float32
        logits within ``max_logits_bytes``, as in the plain path."""
        out: list[list[int]] = []
        current: list[int] = []
        for j in group:
            trial = [*current, j]
            width = max(lengths[t] for t in trial)
            keep = 1 if keeps is None else max(keeps[items[t][1]] for t in trial)
            need = held + self.step_bytes(len(trial), width, past, keep)
            if capture:
                need += self.past_bytes(len(trial), past + width)
            logits = len(trial) * keep * self.vocab * 4
            if current and (need > budget or logits > self.max_logits_bytes):
                out.append(current)
                current = [j]
            else:
                current = trial
        if current:
            out.append(current)
        return out

    def _forward(
        self,
        past: _Past | None,
        slots: list[int],
        rows: list[list[int]],
        keep: int,
        capture: bool,
    ) -> tuple[torch.Tensor, _Past | None]:
        """One forward of left-padded ``rows`` on top of ``past[slots]``; returns the float32
        logits of the last ``keep`` positions and, with ``capture``, the extended cache."""
        ids, mask = left_pad(rows, self.pad_id)
        n, width = ids.shape
        steps = (mask.cumsum(-1) - 1).clamp(min=0)
        self.tokens_run += n * width
        if past is None:
            full_mask, positions, start = mask, steps, torch.zeros(n, dtype=torch.long)
        else:
            index = torch.tensor(slots, dtype=torch.long)
            start = past.length.index_select(0, index)
            full_mask = torch.cat([past.mask.index_select(0, index), mask], dim=-1)
            positions = steps + start[:, None]
        # with a cache the mask is always given: attention's causal fast path assumes as many
        # queries as keys.
        padded = past is not None or bool((full_mask == 0).any())
        kwargs: dict[str, Any] = {
            "input_ids": ids.to(self.device),
            "attention_mask": full_mask.to(self.device) if padded else None,
            "position_ids": positions.to(self.device),
            "logits_to_keep": keep,
        }
        cache = None
        if past is not None or capture:
            cache = self._cache(past, slots, n, capture)
            kwargs["cache"] = cache
            kwargs["use_cache"] = True
        else:
            kwargs["use_cache"] = False
        out = self.model(**kwargs)
        logits = out.logits[:, -keep:, :].float()
        if not capture:
            return logits, None
        assert cache is not None
        keys = [layer.captured[0] for layer in cache.layers]
        values = [layer.captured[1] for layer in cache.layers]
        extended = _Past(keys, values, full_mask, start + mask.sum(-1))
        return logits, extended

    def _cache(self, past: _Past | None, slots: list[int], rows: int, capture: bool) -> Any:
        from transformers.cache_utils import DynamicCache

        if self._layer_class is None:
            self._layer_class = _cache_layer_class()
        cache = DynamicCache()
        layers = []
        for layer in range(self.layers):
            if past is None:
                shape = (1, self.kv_heads, 0, self.head_dim)
                param = next(self.model.parameters())
                keys = torch.zeros(shape, dtype=param.dtype, device=self.device)
                values = keys
                index = None
            else:
                keys, values = past.keys[layer], past.values[layer]
                single = keys.shape[0] == 1
                index = None if single else torch.tensor(slots, device=self.device)
            layers.append(self._layer_class(keys, values, index, capture))
        cache.layers = layers
        return cache


def _supports_sharing(model: Any, config: Any) -> bool:
    """Whether the shared cache is exact for this model: every layer full attention (no sliding
    window, no linear attention) and a forward that takes a ``cache``."""
    import inspect

    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:  # pragma: no cover - transformers without cache layers
        return False
    if "cache" not in inspect.signature(model.forward).parameters:
        return False
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
        layer_types = getattr(config, "layer_types", None)
        if not layer_types or any(t != "full_attention" for t in layer_types):
            return False
    try:
        layers = DynamicCache(config=config).layers
    except Exception:  # any model the cache cannot describe is simply not shared
        return False
    return all(type(layer) is DynamicLayer for layer in layers)
