"""The tiny models of the runner tests: built in memory from a seed, no files, no network.

- ``tiny_tokenizer``: a byte-level BPE tokenizer whose merges mirror SmolLM2's shape: " A" ..
  " D", " a" .. " d" and " i" are single tokens, while " 1" is the space token then "1", "10" is
  "1" "0", "ii" is "i" "i" and Greek letters are two UTF-8 byte tokens, so every kind of label
  collision occurs;
- ``tiny_model``: a 2-layer Llama with random weights; ``tiny_runner``: an HFRunner over both;
- ``save_tiny_model``: a 1-layer Llama and the tokenizer saved like any model folder (the
  session fixture ``tiny_folder`` of ``conftest.py`` holds one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "CHAT_TEMPLATE",
    "ONE_LAYER",
    "TWO_LAYERS",
    "save_tiny_model",
    "tiny_model",
    "tiny_runner",
    "tiny_tokenizer",
]

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


#: The 2-layer model of :func:`tiny_model` (256 positions).
TWO_LAYERS: dict[str, Any] = {
    "hidden_size": 48,
    "intermediate_size": 96,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 256,
    "initializer_range": 0.2,
    "bos_token_id": None,
}
#: The 1-layer model of :func:`save_tiny_model` (4096 positions).
ONE_LAYER: dict[str, Any] = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 4096,
    "initializer_range": 0.3,
    "bos_token_id": 1,
}


def tiny_model(vocab_size: int, seed: int = 0, **config: Any) -> Any:
    """A Llama with random weights drawn from a generator seeded with ``seed``: the 2-layer
    :data:`TWO_LAYERS` unless ``config`` names other ``LlamaConfig`` values."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    settings = {**TWO_LAYERS, "tie_word_embeddings": False, "eos_token_id": 2, **config}
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, pad_token_id=None, **settings))
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


def save_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Write the 1-layer tiny model (:data:`ONE_LAYER`) and the tokenizer into ``folder``
    (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = tiny_tokenizer()
    tiny_model(len(tokenizer), seed, **ONE_LAYER).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def fake_gguf(monkeypatch: Any, folder: Path) -> tuple[Path, list[Any]]:
    """Stand a tiny model in for the embedded GGUF, so the conversion logic runs in a second.

    Writes a small fake ``fake.gguf`` in ``folder``, points ``embedded.gguf_path`` at it and
    makes ``embedded.load_gguf`` return a tiny model (seed 11); returns the file and the list
    of models loaded so far (one per conversion). The "converted to ..." line is reset, so
    each test sees it once."""
    from robustness.runners import embedded

    source = folder / "fake.gguf"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(b"GGUF" + bytes(range(256)) * 4)
    loaded: list[Any] = []

    def load(_: Path | None = None) -> tuple[Any, Any]:
        tokenizer = tiny_tokenizer()
        model = tiny_model(len(tokenizer), seed=11)
        loaded.append(model)
        return model, tokenizer

    monkeypatch.setattr(embedded, "gguf_path", lambda: source)
    monkeypatch.setattr(embedded, "load_gguf", load)
    monkeypatch.setattr(embedded, "_ANNOUNCED", set())
    return source, loaded
