"""One forward of shared-prefix scoring: inputs on top of cached prefixes, the read-only cache
layers, grouped-query attention with masks, and logits at the read positions only.

Inputs
------
Rows (:class:`~robustness.runners.continuations.Row`) run from ``start`` (the depth of their
cache point) to ``end``: left padded, each token at its own position id. Causal rows get a 2D
mask (past and new tokens), which the model turns into its causal mask; when a row is a
continuation tree the 4D mask is built here: a token attends to its prefix's cached positions,
to the causal part of its row and to its own ancestors (``ancestor_mask``); a padding query
attends to itself only, so no softmax row is empty.

Cache
-----
The cached keys are never written to: each layer returns ``past[row's prefix] ++ new`` for the
current forward only (``_SharedLayer``); one prefix is broadcast to every row by ``expand``
(a view), several are gathered by index.

Attention
---------
With a mask, transformers' SDPA path copies every key/value head once per query head it serves
(``repeat_kv``) before attention, on the CPU as well. For the forwards of this module the model
is switched, for the duration of the call, to an attention function that passes the mask and
the grouped heads to ``scaled_dot_product_attention`` with ``enable_gqa=True``, the same
arithmetic without the copies (:func:`gqa_attention`); anything it does not cover (no mask,
equal head counts, biases, soft caps, sinks, dropout) goes to transformers' own SDPA function.

Logits
------
With ``picks`` only the positions each row reads go through the output projection: a
pre-hook on the model's output embeddings gathers them from the last ``keep`` positions, so a
batch's logits are ``[sum of the rows' keeps, vocab]`` instead of ``[rows, largest keep,
vocab]``. Without an output-embedding module the full window is computed and gathered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from robustness.runners.batching import left_pad
from robustness.runners.continuations import Row, ancestor_mask

__all__ = ["Past", "gqa_attention", "run_forward", "supports_sharing"]

#: The name the attention function below is registered under.
GQA_SDPA = "robustness_gqa_sdpa"


@dataclass
class Past:
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


_LAYER_CLASS: list[Any] = []


def _shared_cache(model: Any, past: Past | None, slots: list[int], capture: bool) -> Any:
    """A cache whose layers read ``past[slots]`` (an empty past when ``past`` is None)."""
    from transformers.cache_utils import DynamicCache

    if not _LAYER_CLASS:
        _LAYER_CLASS.append(_cache_layer_class())
    param = next(model.parameters())
    cache = DynamicCache()
    layers = []
    for layer in range(_config(model).num_hidden_layers):
        if past is None:
            shape = (1, _kv_heads(model), 0, _head_dim(model))
            keys = values = torch.zeros(shape, dtype=param.dtype, device=param.device)
            index = None
        else:
            keys, values = past.keys[layer], past.values[layer]
            single = keys.shape[0] == 1
            index = None if single else torch.tensor(slots, device=param.device)
        layers.append(_LAYER_CLASS[0](keys, values, index, capture))
    cache.layers = layers
    return cache


def _tree_mask(rows: Sequence[Row], starts: Sequence[int], width: int) -> torch.Tensor:
    """``[rows, width, width]`` booleans over the new tokens: ancestors, left padded; a padding
    query sees itself."""
    out = np.zeros((len(rows), width, width), dtype=bool)
    for r, (row, start) in enumerate(zip(rows, starts, strict=True)):
        n = len(row) - start
        pad = width - n
        out[r, pad:, pad:] = ancestor_mask(row, start)
        out[r, np.arange(pad), np.arange(pad)] = True
    return torch.from_numpy(out)


def run_forward(
    model: Any,
    pad_id: int,
    past: Past | None,
    slots: list[int],
    pieces: Sequence[tuple[Row, int, int]],
    keep: int,
    capture: bool,
    picks: Sequence[int] | None = None,
) -> tuple[torch.Tensor, Past | None, int]:
    """One forward of ``row.tokens[start:end]`` for each ``(row, start, end)`` of ``pieces`` on
    top of ``past[slots]`` (see the module docstring).

    Returns
    -------
    tuple
        The float32 logits (``[rows, keep, vocab]``, right aligned; with ``picks``, the last
        ``picks[r]`` positions of each row ``r`` flattened in row order, ``[sum(picks),
        vocab]``), the extended cache when ``capture`` is set, and the token positions run.
    """
    device = next(model.parameters()).device
    ids, mask = left_pad([row.tokens[a:b] for row, a, b in pieces], pad_id)
    n, width = ids.shape
    positions = torch.zeros((n, width), dtype=torch.long)
    for r, (row, a, b) in enumerate(pieces):
        positions[r, width - (b - a) :] = torch.tensor(row.positions[a:b], dtype=torch.long)
    tree = any(b > row.branch for row, a, b in pieces)
    if past is None:
        past_mask, start = mask[:, :0], torch.zeros(n, dtype=torch.long)
    else:
        index = torch.tensor(slots, dtype=torch.long)
        start = past.length.index_select(0, index)
        past_mask = past.mask.index_select(0, index)
    full_mask = torch.cat([past_mask, mask], dim=-1)
    attention: torch.Tensor | None
    if tree:
        new = _tree_mask([row for row, _, _ in pieces], [a for _, a, _ in pieces], width)
        seen = past_mask.bool()[:, None, :].expand(n, width, past_mask.shape[1])
        attention = torch.cat([seen, new], dim=-1)[:, None]
    else:
        # with a cache the mask is always given: attention's causal fast path assumes as many
        # queries as keys.
        attention = full_mask if past is not None or bool((mask == 0).any()) else None
    kwargs: dict[str, Any] = {
        "input_ids": ids.to(device),
        "attention_mask": None if attention is None else attention.to(device),
        "position_ids": positions.to(device),
        "logits_to_keep": keep,
    }
    cache = None
    if past is not None or capture:
        cache = _shared_cache(model, past, slots, capture)
        kwargs["cache"] = cache
        kwargs["use_cache"] = True
    else:
        kwargs["use_cache"] = False
    logits = _logits(model, kwargs, keep, picks)
    if not capture:
        return logits, None, n * width
    assert cache is not None
    keys = [layer.captured[0] for layer in cache.layers]
    values = [layer.captured[1] for layer in cache.layers]
    return logits, Past(keys, values, full_mask, start + mask.sum(-1)), n * width


def _logits(
    model: Any, kwargs: dict[str, Any], keep: int, picks: Sequence[int] | None
) -> torch.Tensor:
    """Run the model; float32 logits of the last ``keep`` positions, or of the picks only."""
    if picks is None:
        return model(**kwargs).logits[:, -keep:, :].float()
    rows = len(picks)
    flat = torch.cat(
        [torch.arange(r * keep + keep - k, (r + 1) * keep) for r, k in enumerate(picks)]
    )
    flat = flat.to(kwargs["input_ids"].device)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None:
        logits = model(**kwargs).logits[:, -keep:, :]
        return logits.reshape(rows * keep, -1).index_select(0, flat).float()

    def gather(_: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        hidden = args[0]
        return (hidden.reshape(-1, hidden.shape[-1]).index_select(0, flat)[None], *args[1:])

    handle = head.register_forward_pre_hook(gather)
    try:
        logits = model(**kwargs).logits
    finally:
        handle.remove()
    return logits.reshape(len(flat), -1).float()


# ---------------------------------------------------------------------- attention
def _gqa_sdpa(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """SDPA over grouped key/value heads with a mask, without copying the heads (see the
    module docstring); every other case is transformers' own SDPA function."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plain = (
        attention_mask is None
        or attention_mask.dim() != 4
        or dropout
        or query.shape[1] == key.shape[1]
        or query.shape[1] % key.shape[1]
        or any(kwargs.get(k) is not None for k in ("position_bias", "softcap", "s_aux", "sinks"))
    )
    if plain:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, scale=scaling, enable_gqa=True
    )
    return out.transpose(1, 2).contiguous(), None


@contextlib.contextmanager
def gqa_attention(model: Any) -> Iterator[None]:
    """Within the block, a model on transformers' ``"sdpa"`` attention uses :func:`_gqa_sdpa`
    (registered once under ``GQA_SDPA``, with SDPA's mask function); others are untouched."""
    config = model.config
    if getattr(config, "_attn_implementation", None) != "sdpa":
        yield
        return
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    from transformers.modeling_utils import AttentionInterface

    AttentionInterface.register(GQA_SDPA, _gqa_sdpa)
    AttentionMaskInterface.register(GQA_SDPA, sdpa_mask)
    config._attn_implementation = GQA_SDPA
    try:
        yield
    finally:
        config._attn_implementation = "sdpa"


# ---------------------------------------------------------------------- model facts
def _config(model: Any) -> Any:
    config = model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _kv_heads(model: Any) -> int:
    config = _config(model)
    return int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)


def _head_dim(model: Any) -> int:
    config = _config(model)
    return int(
        getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    )


def supports_sharing(model: Any) -> bool:
    """Whether the shared cache is exact for this model: every layer full attention (no sliding
    window, no linear attention) and a forward that takes a ``cache``."""
    import inspect

    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:  # pragma: no cover - transformers without cache layers
        return False
    config = _config(model)
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
