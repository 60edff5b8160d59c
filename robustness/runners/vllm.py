"""The vLLM backend: the offline ``vllm.LLM`` engine behind the runner protocol.

vLLM is an optional extra (``pip install 'robustness[vllm]'`` on a machine with a CUDA GPU).
Importing this module never imports vllm; building a runner without it raises one ModelError
that says how to install it.

What is shared with the transformers backend
--------------------------------------------
Everything that decides *what* is scored is the hf runner's own code, not a copy:
prompt rendering and chat templates (``HFRunner.render`` and ``encode_prompts``, run here with
the engine's tokenizer), label tokenisation and the token trie for labels whose spellings share
a prefix (``build_label_plan``), and the combination of the read log-probabilities into label
probabilities (``combine_plan``). Prompts reach the engine as token ids, so vLLM never
tokenises anything and the two backends see identical inputs. Only the reading of log-probs
differs, below.

How each call maps onto the engine (decoding is always greedy: ``temperature=0``)
-------------------------------------------------------------------------------
- ``score_options``: the label plan names, for every trie node (the plain prompt, and the prompt
  extended by each shared prefix such as the space token before digits), the tokens whose
  log-probability is needed. Each node is one request with ``max_tokens=1`` and
  ``logprobs=top_logprobs`` (default 20, vLLM's default ``max_logprobs``); vLLM computes
  log-probs from the raw logits, before any sampling adjustment. Where ``SamplingParams`` has
  ``logprob_token_ids`` (recent vLLM; it is in 0.28), the request names the needed tokens and
  vLLM returns exactly those, plus the sampled one. Otherwise it returns the top-k, and a needed
  token missing from it is scored exactly by a second request: the node extended by that token,
  with ``prompt_logprobs=1``, whose last prompt position holds log P(token | node). So every
  number is exact, never a top-k bound. The fallback is not rare: after a chat template the
  space-led spellings (" A") of SmolLM2's labels lie outside its top 20, which cost about five
  extra prefills per four-label prompt (counted in ``exact_requests``). ``top_prob`` is the
  greedy token's probability (the largest entry of the plain prompt's answer), as in the hf
  runner.
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
True in ``options`` to trade that back. ``dtype="auto"`` means bfloat16 (the toolkit's meaning
of auto on a GPU), not vLLM's own auto, which would run float32 checkpoints in float16.
Engine arguments that only change memory use or logging are left out of ``identity()`` (and so
of cache keys); all others are in it, because kernels and batch shapes can move the last bits.

Testing
-------
There is no GPU on the development machines, so ``tests/test_runners_vllm.py`` injects a small
fake ``vllm`` module that answers from a transformers model with vLLM's output structures. That
tests this adapter (requests, reading of logprob dicts, the exact fallback, chunking, errors),
not vLLM itself; ``bench/gpu_check.py`` compares the real engine with the hf backend on a GPU.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from robustness.errors import ModelError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    check_label_sets,
    check_labels,
    check_max_new_tokens,
)
from robustness.runners.hf import CHAT_MODES, HFRunner, folder_revision
from robustness.runners.label_trie import combine_plan

INSTALL_HINT = (
    "backend 'vllm' needs the vllm package, which is not installed here: run "
    "pip install 'robustness[vllm]' on a machine with a CUDA GPU."
)
#: vLLM's default cap on requested log-probs (``max_logprobs``).
DEFAULT_TOP_LOGPROBS = 20
#: Engine arguments that change memory use, logging or downloads but never the numbers.
RESOURCE_ONLY_ARGS = frozenset(
    {
        "gpu_memory_utilization",
        "swap_space",
        "cpu_offload_gb",
        "disable_log_stats",
        "download_dir",
        "seed",
    }
)
#: The toolkit's dtype names -> vLLM's (``auto`` is bfloat16 on a GPU, as in the hf runner).
VLLM_DTYPES = {
    "auto": "bfloat16",
    "float32": "float32",
    "bfloat16": "bfloat16",
    "float16": "float16",
}


def import_vllm() -> Any:
    """The vllm module, or ModelError with the install hint when it is missing."""
    try:
        import vllm
    except ImportError as err:
        raise ModelError(INSTALL_HINT) from err
    return vllm


def _chat_mode(chat: str | bool) -> str:
    if chat is True:
        return "always"
    if chat is False:
        return "never"
    if chat not in CHAT_MODES:
        raise ModelError(f"unknown chat setting {chat!r}: use auto, always or never.")
    return str(chat)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _logprob(entry: Any) -> float:
    """A vLLM ``Logprob`` (or a bare float) as a float."""
    return float(getattr(entry, "logprob", entry))


class VLLMRunner:
    """A ``vllm.LLM`` engine behind the runner protocol (see the module docstring).

    ``llm`` is a ready engine (``make_vllm_runner`` builds one from settings); ``engine_args``
    are the arguments it was built with, recorded in ``identity()``.
    """

    backend = "vllm"

    # The hf runner's tokenisation, used as is: these read only ``tokenizer``, ``chat``,
    # ``has_chat_template``, ``max_length`` and ``_plans``, which this class sets alike.
    render = HFRunner.render
    encode_prompts = HFRunner.encode_prompts
    _encode_text = HFRunner._encode_text
    _plan = HFRunner._plan

    def __init__(
        self,
        llm: Any,
        *,
        model_id: str,
        revision: str | None = None,
        dtype: str = "bfloat16",
        batch_size: int = 256,
        chat: str | bool = "auto",
        engine_args: Mapping[str, Any] | None = None,
        top_logprobs: int = DEFAULT_TOP_LOGPROBS,
    ) -> None:
        vllm = import_vllm()
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}.")
        if top_logprobs < 1:
            raise ModelError(f"top_logprobs must be at least 1, got {top_logprobs}.")
        self.llm = llm
        self._sampling_params = vllm.SamplingParams
        self.vllm_version = str(getattr(vllm, "__version__", "unknown"))
        self.model_id = model_id
        self.revision = revision
        self.dtype = dtype
        self.batch_size = batch_size
        self.top_logprobs = top_logprobs
        self.engine_args = dict(engine_args or {})
        self.chat = _chat_mode(chat)
        self.tokenizer = llm.get_tokenizer()
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        if self.chat == "always" and not self.has_chat_template:
            raise ModelError(f"chat='always' was requested but {model_id} has no chat template.")
        config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
        self.max_length = int(getattr(config, "max_model_len", 0) or 0) or None
        self.token_ids_supported = self._accepts(logprob_token_ids=[0])
        self.exact_requests = 0
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.eos_ids = frozenset([int(eos)] if isinstance(eos, int) else [])
        self._plans: dict[tuple[str, ...], Any] = {}

    def identity(self) -> dict[str, Any]:
        """Everything that determines this runner's numbers, JSON-able (used in cache keys)."""
        engine = {
            k: _jsonable(v)
            for k, v in sorted(self.engine_args.items())
            if k not in RESOURCE_ONLY_ARGS
        }
        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "revision": self.revision,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "chat": self.chat if self.has_chat_template else "none",
            "engine": engine,
            "vllm": self.vllm_version,
        }

    @property
    def uses_chat(self) -> bool:
        """Whether prompts should be chat messages: the model has a template, chat not off."""
        return self.has_chat_template and self.chat != "never"

    def close(self) -> None:
        """Nothing to release: the model is freed with the runner."""

    # ----------------------------------------------------------------- engine calls
    def _params(self, **kwargs: Any) -> Any:
        return self._sampling_params(temperature=0.0, **kwargs)

    def _accepts(self, **kwargs: Any) -> bool:
        """Whether this vLLM's SamplingParams takes these arguments."""
        try:
            self._params(max_tokens=1, logprobs=1, **kwargs)
        except (TypeError, ValueError):
            return False
        return True

    def _run(self, rows: Sequence[Sequence[int]], params: Any) -> list[Any]:
        """One ``LLM.generate`` call over token-id prompts; outputs in input order."""
        if not rows:
            return []
        prompts = [{"prompt_token_ids": list(row)} for row in rows]
        outputs = list(self.llm.generate(prompts, params, use_tqdm=False))
        if len(outputs) != len(rows):
            raise ModelError(f"vLLM answered {len(outputs)} of {len(rows)} requests.")
        return outputs

    def _check_length(self, n_tokens: int, what: str) -> None:
        # the engine needs room for the one token every request generates.
        if self.max_length is not None and n_tokens + 1 > self.max_length:
            raise ModelError(
                f"{what} has {n_tokens} tokens, more than the engine's "
                f"max_model_len {self.max_length} allows."
            )

    def _chunks(self, n: int) -> list[list[int]]:
        return [list(range(s, min(s + self.batch_size, n))) for s in range(0, n, self.batch_size)]

    # ----------------------------------------------------------------- calls
    def score_options(
        self,
        prompts: Sequence[Prompt],
        labels: Sequence[Sequence[str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[OptionScores]:
        """Next-token probability of each prompt's labels (see the module docstring)."""
        check_label_sets(prompts, labels, "score_options")
        plans = [self._plan(check_labels(lab, f"label set {i}")) for i, lab in enumerate(labels)]
        ids = self.encode_prompts(prompts)
        results: list[OptionScores] = []
        for chunk in self._chunks(len(prompts)):
            started = time.perf_counter()
            scored = self._score_chunk([ids[i] for i in chunk], [plans[i] for i in chunk])
            share = (time.perf_counter() - started) * 1000.0 / len(chunk)
            done = [
                OptionScores(
                    probs=probs,
                    label_logprobs=label_lp,
                    top_prob=top_prob,
                    top_token=top_token,
                    latency_ms=share,
                )
                for probs, label_lp, top_prob, top_token in scored
            ]
            results.extend(done)
            if on_batch is not None:
                on_batch(chunk, done)
        return results

    def _score_chunk(
        self, ids: Sequence[list[int]], plans: Sequence[Any]
    ) -> list[tuple[tuple[float, ...], tuple[float, ...], float, str]]:
        """Label scores of one chunk: top-k reads per trie node, then exact reads of the
        needed tokens the top-k left out."""
        requests: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        for r, plan in enumerate(plans):
            for reads in plan.reads:
                for _, node, tokens in reads:
                    self._check_length(len(ids[r]) + len(node), f"prompt {r} with its labels")
                    requests.append((r, node, tokens))
        if self.token_ids_supported:
            params: Any = [
                self._params(
                    max_tokens=1, logprobs=self.top_logprobs, logprob_token_ids=list(tokens)
                )
                for _, _, tokens in requests
            ]
        else:
            params = self._params(max_tokens=1, logprobs=self.top_logprobs)
        outputs = self._run([ids[r] + list(node) for r, node, _ in requests], params)
        logps: list[dict[tuple[tuple[int, ...], int], float]] = [{} for _ in plans]
        tops: list[tuple[float, int]] = [(math.nan, -1) for _ in plans]
        missing: list[tuple[int, tuple[int, ...], int]] = []
        for (r, node, tokens), output in zip(requests, outputs, strict=True):
            top_k = output.outputs[0].logprobs[0]
            for tok in tokens:
                if tok in top_k:
                    logps[r][(node, tok)] = _logprob(top_k[tok])
                else:
                    missing.append((r, node, tok))
            if not node:
                best_lp, best_tok = max((_logprob(v), -int(k)) for k, v in top_k.items())
                tops[r] = (math.exp(best_lp), -best_tok)
        self.exact_requests += len(missing)
        exact = self._run(
            [ids[r] + [*node, tok] for r, node, tok in missing],
            self._params(max_tokens=1, prompt_logprobs=1),
        )
        for (r, node, tok), output in zip(missing, exact, strict=True):
            logps[r][(node, tok)] = _logprob(output.prompt_logprobs[-1][tok])
        out = []
        for r, plan in enumerate(plans):
            probs, label_lp = combine_plan(plan, logps[r])
            out.append((probs, label_lp, tops[r][0], self.tokenizer.decode([tops[r][1]])))
        return out

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int,
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[Generation]:
        """Greedy continuation of each prompt, up to ``max_new_tokens`` or end of sequence."""
        check_max_new_tokens(max_new_tokens)
        ids = self.encode_prompts(prompts)
        params = self._params(max_tokens=max_new_tokens, skip_special_tokens=True)
        results: list[Generation] = []
        for chunk in self._chunks(len(prompts)):
            started = time.perf_counter()
            outputs = self._run([ids[i] for i in chunk], params)
            share = (time.perf_counter() - started) * 1000.0 / len(chunk)
            done = []
            for output in outputs:
                completion = output.outputs[0]
                tokens = list(completion.token_ids)
                n = next((k for k, tok in enumerate(tokens) if tok in self.eos_ids), len(tokens))
                # vLLM keeps the EOS (stop_reason None) or stop token id (an int) it stopped on
                # as the last id; a stop string (a str) is never requested here.
                if (
                    tokens
                    and completion.finish_reason == "stop"
                    and not isinstance(getattr(completion, "stop_reason", None), str)
                ):
                    n = min(n, len(tokens) - 1)
                text = self.tokenizer.decode(tokens[:n], skip_special_tokens=True)
                done.append(Generation(text=text, n_tokens=n, latency_ms=share))
            results.extend(done)
            if on_batch is not None:
                on_batch(chunk, done)
        return results

    def loglikelihood(
        self,
        pairs: Sequence[tuple[Prompt, str]],
        *,
        on_batch: BatchCallback | None = None,
    ) -> list[LogLikelihood]:
        """Sum of log P(response tokens | prompt) for each (prompt, response) pair."""
        prompt_ids = self.encode_prompts([p for p, _ in pairs])
        response_ids = [self._encode_text(str(r)) for _, r in pairs]
        for i, (p, r) in enumerate(zip(prompt_ids, response_ids, strict=True)):
            self._check_length(len(p) + len(r), f"pair {i}")
        params = self._params(max_tokens=1, prompt_logprobs=1)
        results: list[LogLikelihood] = []
        for chunk in self._chunks(len(pairs)):
            todo = [i for i in chunk if response_ids[i]]
            outputs = dict(
                zip(
                    todo,
                    self._run([prompt_ids[i] + response_ids[i] for i in todo], params),
                    strict=True,
                )
            )
            done = []
            for i in chunk:
                start, response = len(prompt_ids[i]), response_ids[i]
                if not response:
                    done.append(LogLikelihood(logprob=0.0, n_tokens=0))
                    continue
                positions = outputs[i].prompt_logprobs
                picked = [_logprob(positions[start + k][tok]) for k, tok in enumerate(response)]
                done.append(LogLikelihood(logprob=math.fsum(picked), n_tokens=len(response)))
            results.extend(done)
            if on_batch is not None:
                on_batch(chunk, done)
        return results


def make_vllm_runner(
    model: str,
    *,
    dtype: str = "auto",
    batch_size: int = 256,
    chat: str | bool = "auto",
    device: str = "auto",
    top_logprobs: int = DEFAULT_TOP_LOGPROBS,
    **engine_args: Any,
) -> VLLMRunner:
    """Build a vLLM runner from plain settings (the shape a study file gives them).

    ``model`` is ``"embedded"`` (the converted SmolLM2 folder the hf backend uses), a local model
    folder, or a model id already in the local Hugging Face cache; nothing is downloaded unless
    the user unset ``HF_HUB_OFFLINE``. ``dtype`` takes the toolkit's names (``auto`` is
    bfloat16). ``device`` exists so study files written for the hf backend work: vLLM always
    runs on the GPUs it is given, so only ``auto`` and ``cuda`` are accepted. Every other
    keyword goes to ``vllm.LLM`` unchanged (``tensor_parallel_size=2``, ``max_model_len=4096``
    ...). Raises ModelError with one sentence when vllm is missing or a setting is wrong.
    """
    vllm = import_vllm()
    if dtype not in VLLM_DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of {', '.join(VLLM_DTYPES)}.")
    if device not in ("auto", "cuda"):
        raise ModelError(
            f"backend 'vllm' runs on the GPUs it is given; device {device!r} is "
            "not supported (use auto)."
        )
    model_id, revision, source = model, None, model
    if model == "embedded":
        from robustness.runners.embedded import MODEL_ID, ensure_converted

        found = ensure_converted()
        source, model_id, revision = str(found.path), f"embedded:{MODEL_ID}", found.gguf_sha256[:16]
    else:
        path = Path(model).expanduser()
        if path.is_dir():
            source, revision = str(path), folder_revision(path)
        elif path.exists():
            raise ModelError(f"model path {model!r} is a file; give the model's folder.")
    reserved = sorted({"model", "tokenizer", "dtype"} & set(engine_args))
    if reserved:
        raise ModelError(
            f"engine argument {reserved[0]!r} is set by the runner itself; give it "
            "as the model's own setting instead."
        )
    engine_args.setdefault("enable_prefix_caching", False)
    engine_args.setdefault("seed", 0)
    cap = int(engine_args.get("max_logprobs", 0) or 0)
    if cap > 0:  # vLLM refuses requests for more log-probs than its max_logprobs
        top_logprobs = min(top_logprobs, cap)
    vllm_dtype = VLLM_DTYPES[dtype]
    try:
        llm = vllm.LLM(model=source, tokenizer=source, dtype=vllm_dtype, **engine_args)
    except (OSError, ValueError) as err:
        raise ModelError(f"vLLM could not load model {model!r}: {err}") from err
    return VLLMRunner(
        llm,
        model_id=model_id,
        revision=revision,
        dtype=vllm_dtype,
        batch_size=batch_size,
        chat=chat,
        engine_args=engine_args,
        top_logprobs=top_logprobs,
    )
