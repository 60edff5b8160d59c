"""Shared helpers for the runner and cache tests (imported by name; not a pytest conftest).

- a tiny byte-level BPE tokenizer built in memory (no files, no network) whose merges mirror
  SmolLM2's shape: " A" .. " D", " a" .. " d" and " i" are single tokens, while " 1" is the space
  token then "1", "10" is "1" "0", "ii" is "i" "i" and Greek letters are two UTF-8 byte tokens,
  so every kind of label collision occurs;
- a tiny randomly initialised Llama built from a seed;
- ``FakeRunner``, a deterministic torch-free runner for cache tests, and ``child_main``, the
  writer process that the SIGKILL test kills.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer(chat_template: str | None = CHAT_TEMPLATE) -> Any:
    """A byte-level BPE tokenizer with a handful of merges, as a transformers tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS)}
    for char in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[char] = len(vocab)
    merges = [("Ġ", c) for c in "ABCDabcdi"]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(SPECIALS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def tiny_model(vocab_size: int, seed: int = 0) -> Any:
    """A 2-layer Llama with random weights drawn from a generator seeded with ``seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=48,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.2,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=2,
        pad_token_id=None,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model.eval()


def tiny_runner(seed: int = 0, chat_template: str | None = CHAT_TEMPLATE, **kwargs: Any) -> Any:
    """An HFRunner over the tiny model and tokenizer (one thread, float32, CPU)."""
    from robustness.runners.hf import HFRunner

    tokenizer = tiny_tokenizer(chat_template)
    kwargs.setdefault("threads", 1)
    return HFRunner(
        tiny_model(len(tokenizer), seed),
        tokenizer,
        model_id=f"tiny-{seed}",
        revision="test",
        **kwargs,
    )


def _unit(text: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}\x00{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


class FakeRunner:
    """A deterministic runner without a model: results are hashes of the request. It batches
    like a real backend (sorted by length, ``on_batch`` per batch), can sleep per batch, and can
    fail after a number of batches, so cache behaviour can be tested quickly."""

    backend = "fake"

    def __init__(
        self,
        batch_size: int = 4,
        sleep: float = 0.0,
        fail_after: int | None = None,
        model_id: str = "fake-model",
        dtype: str = "float32",
    ) -> None:
        self.batch_size = batch_size
        self.sleep = sleep
        self.fail_after = fail_after
        self.model_id = model_id
        self.dtype = dtype
        self.calls: list[tuple[str, int]] = []
        self.batches_run = 0

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
        }

    uses_chat = False  # plain-text prompts

    def close(self) -> None:
        self.closed = True

    def _batched(self, kind: str, texts: Sequence[str], make: Any, on_batch: Any) -> list[Any]:
        self.calls.append((kind, len(texts)))
        order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
        results: list[Any] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            if self.fail_after is not None and self.batches_run >= self.fail_after:
                raise RuntimeError("fake runner failure")
            batch = order[start : start + self.batch_size]
            if self.sleep:
                time.sleep(self.sleep)
            for i in batch:
                results[i] = make(i)
            self.batches_run += 1
            if on_batch is not None:
                on_batch(batch, [results[i] for i in batch])
        return results

    def score_options(
        self, prompts: Sequence[Any], labels: Sequence[Sequence[str]], *, on_batch: Any = None
    ) -> list[Any]:
        from robustness.runners.base import OptionScores

        texts = [str(p) for p in prompts]

        def make(i: int) -> OptionScores:
            raw = [_unit(texts[i], label) + 0.01 for label in labels[i]]
            total = sum(raw)
            return OptionScores(
                probs=tuple(r / total for r in raw),
                label_logprobs=tuple(math.log(r / 2) for r in raw),
                top_prob=max(raw) / 2,
                top_token=str(labels[i][0]),
                latency_ms=1.0,
            )

        return self._batched("score_options", texts, make, on_batch)

    def generate(
        self, prompts: Sequence[Any], max_new_tokens: int, *, on_batch: Any = None
    ) -> list[Any]:
        from robustness.runners.base import Generation

        texts = [str(p) for p in prompts]

        def make(i: int) -> Generation:
            return Generation(
                text=f"answer {_unit(texts[i], 'g'):.6f}"[: max_new_tokens + 7],
                n_tokens=2,
                latency_ms=1.0,
            )

        return self._batched("generate", texts, make, on_batch)

    def loglikelihood(self, pairs: Sequence[tuple[Any, str]], *, on_batch: Any = None) -> list[Any]:
        from robustness.runners.base import LogLikelihood

        texts = [f"{p}\x00{r}" for p, r in pairs]

        def make(i: int) -> LogLikelihood:
            return LogLikelihood(logprob=-10 * _unit(texts[i], "ll"), n_tokens=len(pairs[i][1]))

        return self._batched("loglikelihood", texts, make, on_batch)


def child_prompts(n: int) -> list[str]:
    """The prompts the SIGKILL writer scores (also used by the parent to check results)."""
    return [f"Question {i}: which option? " + "x" * (i % 7) for i in range(n)]


CHILD_LABELS = ("A", "B", "C", "D")


def child_main(db: str, n: int, batch_size: int, sleep: float) -> None:
    """Writer process of the SIGKILL test: score ``n`` prompts through a CachedRunner into
    ``db``, printing one line per stored batch (flushed), then ``done`` and the stats."""
    from robustness.cache import Cache
    from robustness.runners.cached import CachedRunner

    def report(positions: Sequence[int], results: Sequence[Any]) -> None:
        print(f"batch {len(positions)}", flush=True)

    with Cache(db) as cache:
        runner = CachedRunner(FakeRunner(batch_size=batch_size, sleep=sleep), cache)
        prompts = child_prompts(n)
        runner.score_options(prompts, [CHILD_LABELS] * n, on_batch=report)
        stats = runner.stats
        print(f"done hits={stats.hits} misses={stats.misses} calls={stats.model_calls}", flush=True)


if __name__ == "__main__":
    child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
