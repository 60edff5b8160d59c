"""The transformers + torch backend.

How a call runs
---------------
Prompts are tokenised once (chat messages through the model's chat template with the generation
prompt appended) and run in length-sorted, left-padded batches with explicit position ids
(``batching.py``); ``logits_to_keep`` asks the model for the last few positions only, which skips
the vocabulary projection everywhere else. Every forward runs under ``torch.inference_mode()``;
decoding is greedy.

Shared prefixes
---------------
Rows that start alike are not run from the start each time: the extra passes of a label set,
few-shot exemplars, a chat template's preamble and the question stem an item's variants share
are computed once as a key/value cache and the rest of every row runs on top of it
(``prefix.py`` says how, what it costs in memory and when it pays). ``loglikelihood`` packs every
response scored under one prompt (the options of a cloze question, a POSIX row) into one row with
the prompt, a tree that attends along each response's own path (``continuations.py``).
``prefix_sharing="off"`` turns both off. Generation runs in length-sorted batches as well.

Elsewhere
---------
Device, dtype, threads, Hub access and loading: ``torch_setup.py`` (float32 is the CPU default;
``identity()`` records dtype, device, batch size and prefix sharing, and they are part of every
cache key). Rendering and tokenising prompts, shared with vllm: ``encoding.py``. Label
probabilities from next-token distributions: ``label_trie.py``; reading them and response
log-likelihoods out of a batch's logits: ``readout.py``.

``loglikelihood`` tokenises prompt and response separately and concatenates the ids (the
response is not merged into the prompt's last token), the usual convention for cloze scoring.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from robustness.core.errors import ModelError
from robustness.core.names import CHAT_MODES
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    canonical_prompt,
    check_max_new_tokens,
)
from robustness.runners.batching import flatten_windows, left_pad, length_batches, split_by_logits
from robustness.runners.continuations import PairRows, Row
from robustness.runners.encoding import PromptEncoding
from robustness.runners.label_trie import combine_plan
from robustness.runners.prefix import PrefixScorer
from robustness.runners.readout import read_label_passes, read_targets
from robustness.runners.torch_setup import (
    configure_threads,
    eos_token_ids,
    folder_revision,
    load_pretrained,
    resolve_device,
    resolve_dtype,
)

__all__ = ["CHAT_MODES", "HFRunner", "folder_revision", "resolve_device"]

#: Default padding cap on the CPU (see ``HFRunner``).
CPU_MAX_PADDING = 0.25
#: Prefix-sharing settings (see ``HFRunner``).
PREFIX_SHARING = ("auto", "off")


class HFRunner(PromptEncoding):
    """A transformers causal LM behind the runner protocol (see the module docstring).

    ``max_padding`` caps the share of a row that may be padding within a batch: rows sorted by
    length are cut into a new batch early when the next one is that much shorter than the
    batch's longest. On the CPU batching buys little (about 15% more tokens/s at batch 16 than
    at batch 1 on the reference 2-core machine) while every padded position costs a full
    position, so ``"auto"`` caps padding at 25% there; on CUDA, where batching is what makes
    throughput, ``"auto"`` means no cap. ``None`` disables the cap.

    ``prefix_sharing`` is ``"auto"`` (share a common prefix's key/value cache wherever the plan
    saves at least a tenth of the token positions and the memory budget allows, see
    ``prefix.py``) or ``"off"`` (every row runs from its first token, as before).
    """

    backend = "hf"
    #: Upper bound on the logits tensor of one loglikelihood batch; larger batches are split.
    max_logits_bytes = 1 << 29

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str,
        revision: str | None = None,
        batch_size: int = 16,
        chat: str | bool = "auto",
        threads: int | None = None,
        max_padding: float | str | None = "auto",
        prefix_sharing: str = "auto",
    ) -> None:
        if prefix_sharing not in PREFIX_SHARING:
            raise ModelError(f"prefix_sharing must be auto or off, got {prefix_sharing!r}.")
        if batch_size < 1:
            raise ModelError(f"batch_size must be at least 1, got {batch_size}.")
        max_length = int(getattr(model.config, "max_position_embeddings", 0) or 0) or None
        self.setup_encoding(tokenizer, chat, model_id, max_length)
        self.threads = configure_threads(threads)
        self.model = model.eval()
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        param = next(model.parameters())
        self.device = param.device
        self.dtype = param.dtype
        if max_padding == "auto":
            max_padding = CPU_MAX_PADDING if self.device.type == "cpu" else None
        if isinstance(max_padding, str) or (
            max_padding is not None and not 0.0 <= float(max_padding) < 1.0
        ):
            raise ModelError(f"max_padding must be in [0, 1), got {max_padding!r}.")
        self.max_padding = None if max_padding is None else float(max_padding)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        self.eos_ids = eos_token_ids(model, tokenizer)
        self.prefix_sharing = prefix_sharing
        self.prefix = PrefixScorer(
            self.model,
            self.pad_id,
            self.batches,
            batch_size,
            max_logits_bytes=self.max_logits_bytes,
        )

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        model_id: str | None = None,
        revision: str | None = None,
        dtype: str = "float32",
        device: str = "auto",
        batch_size: int = 16,
        chat: str | bool = "auto",
        threads: int | None = None,
        max_padding: float | str | None = "auto",
        prefix_sharing: str = "auto",
        offline: bool | None = None,
    ) -> HFRunner:
        """Load a model folder or model id on ``device`` in ``dtype``.

        ``offline``: ``None`` follows ``HF_HUB_OFFLINE`` (offline exactly when it is truthy),
        ``True`` uses local files only, ``False`` downloads a model id that is not cached yet,
        as transformers does. The other arguments are the constructor's.
        """
        resolved_device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved_device)
        if threads is not None or resolved_device.type == "cpu":
            configure_threads(threads)
        model, tokenizer, folder = load_pretrained(path, torch_dtype, offline=offline)
        model.to(resolved_device)
        if revision is None:
            revision = (
                folder_revision(folder)
                if folder is not None
                else getattr(model.config, "_commit_hash", None)
            )
        return cls(
            model,
            tokenizer,
            model_id=model_id or str(path),
            revision=revision,
            batch_size=batch_size,
            chat=chat,
            threads=threads,
            max_padding=max_padding,
            prefix_sharing=prefix_sharing,
        )

    def identity(self) -> dict[str, Any]:
        """Everything that determines this runner's numbers, JSON-able (used in cache keys)."""
        import transformers

        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "revision": self.revision,
            "dtype": str(self.dtype).removeprefix("torch."),
            "device": self.device.type,
            "batch_size": self.batch_size,
            "max_padding": self.max_padding,
            "prefix_sharing": self.prefix_sharing,
            "chat": self.chat if self.has_chat_template else "none",
            "transformers": transformers.__version__,
            "torch": torch.__version__.split("+")[0],
        }

    def close(self) -> None:
        """Nothing to release: the model is freed with the runner."""

    # ----------------------------------------------------------------- batching
    def batches(self, lengths: Sequence[int], batch_size: int | None = None) -> list[list[int]]:
        """Indices grouped into batches of similar length, longest first (stable on ties).

        A batch holds at most ``batch_size`` rows and, when ``max_padding`` is set, no row
        whose padding would exceed that fraction of the batch's longest row (see the class
        docstring for why the CPU default caps padding).
        """
        return length_batches(lengths, batch_size or self.batch_size, self.max_padding)

    def collate(self, rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor | None]:
        """Left-pad ``rows`` into model inputs with explicit position ids. The attention mask
        is omitted when no row is padded, which lets attention use its causal fast path."""
        ids, mask = left_pad(rows, self.pad_id)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        padded = bool((mask == 0).any())
        return {
            "input_ids": ids.to(self.device),
            "attention_mask": mask.to(self.device) if padded else None,
            "position_ids": positions.to(self.device),
        }

    def forward_last(self, inputs: dict[str, torch.Tensor | None], keep: int) -> torch.Tensor:
        """Logits of the last ``keep`` positions of each row, as float32 [batch, keep, vocab]."""
        out = self.model(**inputs, logits_to_keep=keep, use_cache=False)
        return out.logits[:, -keep:, :].float()

    # ----------------------------------------------------------------- calls
    def run_rows(self, rows: Sequence[Row], consume: Any, plain_width: int | None = None) -> None:
        """Run every row once and hand the logits of its last ``row.keep`` positions to
        ``consume(indices, logits, seconds)`` batch by batch (``logits`` float32 and flattened,
        ``[sum of the batch's keeps, vocab]`` in batch order; ``seconds`` the wall time since
        the previous batch).

        Shares prefixes when ``prefix_sharing`` is ``"auto"`` and the plan pays, and always
        runs packed rows through the shared path (see ``prefix.py``; ``plain_width`` is then
        the longest unpacked row, for the memory budget); otherwise runs plain length-sorted,
        memory-capped batches, which take causal rows only.
        """
        if not rows:
            return
        packed = not all(row.is_causal for row in rows)
        root = None
        if self.prefix_sharing == "auto":
            root = self.prefix.plan(rows, force=packed)
        if root is not None:
            width = plain_width or max(len(r) for r in rows)
            self.prefix.run(root, rows, consume, width)
            return
        if packed:
            raise ModelError("packed rows need prefix sharing on a model that supports it.")
        keeps = [row.keep for row in rows]
        vocab = int(self.model.config.vocab_size)
        clock = time.perf_counter()
        with torch.inference_mode():
            for group in self.batches([len(r) for r in rows]):
                for batch in split_by_logits(group, keeps, vocab, self.max_logits_bytes):
                    keep = max(keeps[i] for i in batch)
                    self.prefix.tokens_run += len(batch) * max(len(rows[i]) for i in batch)
                    self.prefix.forwards += 1
                    inputs = self.collate([rows[i].tokens for i in batch])
                    window = self.forward_last(inputs, keep)
                    logits = flatten_windows(window, [keeps[i] for i in batch])
                    now = time.perf_counter()
                    consume(batch, logits, now - clock)
                    clock = now

    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Next-token probability of each prompt's labels (see ``label_trie.py``)."""
        plans, ids = self.encode_label_sets(prompts, labels)
        jobs: list[tuple[int, int]] = []
        rows: list[Row] = []
        for i, plan in enumerate(plans):
            for p, path in enumerate(plan.passes):
                jobs.append((i, p))
                rows.append(Row.causal(ids[i] + list(path), len(path) + 1))
        pending = [len(plan.passes) for plan in plans]
        logps: list[dict[tuple[tuple[int, ...], int], float]] = [{} for _ in prompts]
        tops: dict[int, tuple[float, int]] = {}
        latency = [0.0 for _ in prompts]
        results: list[OptionScores | None] = [None for _ in prompts]

        def consume(batch: list[int], logits: torch.Tensor, seconds: float) -> None:
            passes = [(jobs[j][0], plans[jobs[j][0]], jobs[j][1]) for j in batch]
            reads, best = read_label_passes(logits, passes)
            for (i, node, tok), value in reads.items():
                logps[i][(node, tok)] = value
            tops.update(best)
            share = seconds * 1000.0 / len(batch)
            done: list[int] = []
            for j in batch:
                i = jobs[j][0]
                latency[i] += share
                pending[i] -= 1
                if pending[i] == 0:
                    done.append(i)
            for i in done:
                probs, label_lp = combine_plan(plans[i], logps[i])
                results[i] = OptionScores(
                    probs=probs,
                    label_logprobs=label_lp,
                    top_prob=tops[i][0],
                    top_token=self.tokenizer.decode([tops[i][1]]),
                    latency_ms=latency[i],
                )
                logps[i] = {}
            if done and on_batch is not None:
                on_batch(done, [results[i] for i in done])

        self.run_rows(rows, consume)
        return [r for r in results if r is not None]

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]:
        """Greedy continuation of each prompt, up to ``max_new_tokens`` or end of sequence."""
        from transformers import GenerationConfig

        check_max_new_tokens(max_new_tokens)
        ids = self.encode_prompts(prompts)
        config = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=1,
            eos_token_id=list(self.eos_ids) or None,
            pad_token_id=self.pad_id,
        )
        results: list[Generation | None] = [None for _ in prompts]
        eos = set(self.eos_ids)
        for batch in self.batches([len(r) for r in ids]):
            started = time.perf_counter()
            inputs = self.collate([ids[i] for i in batch])
            width = len(ids[batch[0]])  # the longest row: batches run longest first
            if inputs["attention_mask"] is None:
                inputs["attention_mask"] = torch.ones((len(batch), width), dtype=torch.long).to(
                    self.device
                )
            with torch.inference_mode():
                out = self.model.generate(**inputs, generation_config=config)
            new = out[:, width:].tolist()
            share = (time.perf_counter() - started) * 1000.0 / len(batch)
            for i, row in zip(batch, new, strict=True):
                n = next((k for k, tok in enumerate(row) if tok in eos), len(row))
                text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
                results[i] = Generation(text=text, n_tokens=n, latency_ms=share)
            if on_batch is not None:
                on_batch(batch, [results[i] for i in batch])
        return [r for r in results if r is not None]

    def loglikelihood(
        self,
        pairs: Sequence[tuple[Prompt, str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[LogLikelihood]:
        """Sum of log P(response tokens | prompt) for each (prompt, response) pair.

        With prefix sharing on, the responses of each distinct prompt are packed into one row
        (``continuations.py``); with it off, every pair is its own row ``prompt +
        response[:-1]``.
        """
        prompt_ids, response_ids = self._encode_pairs(pairs)
        results: list[LogLikelihood | None] = [None for _ in pairs]
        empty = [i for i, r in enumerate(response_ids) if not r]
        for i in empty:
            results[i] = LogLikelihood(logprob=0.0, n_tokens=0)
        if empty and on_batch is not None:
            on_batch(empty, [results[i] for i in empty])
        todo = [i for i, r in enumerate(response_ids) if r]
        if self.max_length is not None:
            for i in todo:
                if len(prompt_ids[i]) + len(response_ids[i]) - 1 > self.max_length:
                    raise ModelError(
                        f"pair {i} has {len(prompt_ids[i]) + len(response_ids[i])} tokens, more "
                        f"than the model's {self.max_length}."
                    )
        plain_width = max((len(prompt_ids[i]) + len(response_ids[i]) - 1 for i in todo), default=0)
        packed = self.prefix_sharing == "auto" and self.prefix.supported
        pairing = PairRows([prompt_ids[i] for i in todo], [response_ids[i] for i in todo], packed)

        def consume(batch: list[int], logits: torch.Tensor, seconds: float) -> None:
            done, picks = pairing.picks(batch)
            for j, logprob in zip(done, read_targets(logits, picks), strict=True):
                results[todo[j]] = LogLikelihood(
                    logprob=logprob, n_tokens=len(response_ids[todo[j]])
                )
            if on_batch is not None:
                on_batch([todo[j] for j in done], [results[todo[j]] for j in done])

        self.run_rows(pairing.rows, consume, plain_width)
        return [r for r in results if r is not None]

    def _encode_pairs(
        self, pairs: Sequence[tuple[Prompt, str]]
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids of every pair's prompt and response, each distinct one encoded once."""
        keys = [json.dumps(canonical_prompt(p), sort_keys=True) for p, _ in pairs]
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        distinct = list(first.values())
        try:
            encoded = dict(
                zip(distinct, self.encode_prompts([pairs[i][0] for i in distinct]), strict=True)
            )
        except ModelError:
            self.encode_prompts([p for p, _ in pairs])  # the same error, naming the pair
            raise
        prompt_ids = [encoded[first[key]] for key in keys]
        texts: dict[str, list[int]] = {}
        response_ids = []
        for _, response in pairs:
            text = str(response)
            if text not in texts:
                texts[text] = self._encode_text(text)
            response_ids.append(texts[text])
        return prompt_ids, response_ids
