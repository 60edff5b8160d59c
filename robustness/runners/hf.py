"""The transformers + torch backend.

How a call runs
---------------
Prompts are tokenised once (chat messages through the model's chat template with the generation
prompt appended), sorted by length (longest first, so the largest batch and any out-of-memory
error come first) and cut into batches of ``batch_size``. Each batch is left padded and given
explicit position ids (``cumsum(attention_mask) - 1``), so a padded row sees exactly the
positions it would see alone; ``logits_to_keep`` asks the model for the last few positions only
(one, for plain choice scoring), which skips the vocabulary projection everywhere else. Every
forward runs under ``torch.inference_mode()``; decoding is greedy.

Numerics
--------
float32 is the default on the CPU: on the reference CPU bf16 moved letter logits by up to 0.375
between batch sizes 1 and 8 and flipped answers, which a robustness study would misreport as
prompt sensitivity. bf16 is allowed (and ``dtype="auto"`` picks it) on CUDA. ``identity()``
records dtype, device and batch size, and they are part of every cache key.

Threads
-------
With torch's default OpenMP settings a forward pass on a small (2-core) CPU shared with other
work was 5-25x slower than with ``OMP_WAIT_POLICY=PASSIVE`` set before torch is imported, or with
``torch.set_num_threads(1)``. Importing ``robustness.runners`` therefore sets
``OMP_WAIT_POLICY=PASSIVE`` when torch has not been imported yet (and the user set nothing). If
torch was imported earlier with the default policy, the runner falls back to
``torch.set_num_threads(1)`` and warns once; pass ``threads=N`` to choose yourself, or set
``OMP_NUM_THREADS``, which is always respected.

Choice scoring (``score_options``)
----------------------------------
A label's probability is the probability that the model's next tokens spell it, with or without
a leading space: both spellings are tokenised and their probabilities are **summed**. The two
spellings are different token sequences, hence disjoint events, and the normaliser reads " B" and
"B" as the same answer, so their sum is the probability of that answer; taking the max would
under-count a model that splits its mass between the two forms (common after "Answer:"), and
would make the result depend on how the prompt's last whitespace was tokenised.

Labels whose token sequences share a prefix are resolved exactly, with extra forward passes only
where needed. All spellings of all labels go into one token trie. A spelling stops at its
shortest prefix that belongs to its label alone (usually the first token: "A", " B", ...), and
takes that prefix's probability. When spellings share a first token (the space token before
digits, the UTF-8 lead byte of some Greek letters, "(" in "(A)"), the distribution after the
shared prefix is needed: the prompt is extended by that prefix and run once more, reading the
distributions after every prefix in the same pass (the first-token distribution is read from the
same pass too, so no pass is wasted). When one label is a prefix of another ("1" and "10" spelt
"1" "0"; "i" and "ii" in a tokenizer without "ii"), the shorter label gets P(prefix) times the
probability of *not* continuing along any longer label, so every label is a disjoint event and
"1" is not credited with the mass of "10". A continuation that is no label's counts as the end of
the label (nothing in a next-token distribution can tell "1" then end from "1" then "2").
Label sets without shared prefixes (A-D, a-d, most roman numerals and Greek letters in SmolLM2's
vocabulary) cost exactly one forward pass per prompt.

``loglikelihood`` tokenises prompt and response separately and concatenates the ids (the
response is not merged into the prompt's last token), the usual convention for cloze scoring.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from robustness.errors import ModelError
from robustness.runners.base import (
    BatchCallback,
    Generation,
    LogLikelihood,
    OptionScores,
    Prompt,
    canonical_prompt,
    check_label_sets,
    check_labels,
    check_max_new_tokens,
)

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}
CHAT_MODES = ("auto", "always", "never")
#: Default padding cap on the CPU (see ``HFRunner``).
CPU_MAX_PADDING = 0.25

_thread_warning_given = False


def configure_threads(threads: int | None = None) -> int:
    """Make torch's CPU threading sane for this process and return the thread count in use.

    ``threads`` set: use exactly that many. Otherwise, if ``OMP_NUM_THREADS`` is set, leave torch
    alone; if torch was imported before ``robustness.runners`` could set
    ``OMP_WAIT_POLICY=PASSIVE``, fall back to one thread (warning once), because spin-waiting
    OpenMP threads make small shared CPUs 5-25x slower.
    """
    global _thread_warning_given
    if threads is not None:
        if threads < 1:
            raise ModelError(f"threads must be at least 1, got {threads}.")
        torch.set_num_threads(threads)
        return threads
    from robustness import runners

    passive = os.environ.get("OMP_WAIT_POLICY", "").upper() == "PASSIVE"
    if (
        runners.TORCH_IMPORTED_FIRST
        and not passive
        and "OMP_NUM_THREADS" not in os.environ
        and torch.get_num_threads() > 1
    ):
        torch.set_num_threads(1)
        if not _thread_warning_given:
            _thread_warning_given = True
            warnings.warn(
                "torch was imported before robustness.runners with OpenMP's default "
                "spin-waiting, so the runner uses one CPU thread; set "
                "OMP_WAIT_POLICY=PASSIVE or OMP_NUM_THREADS, or pass threads=N.",
                RuntimeWarning,
                stacklevel=3,
            )
    return torch.get_num_threads()


def resolve_device(device: str) -> torch.device:
    """``"auto"`` -> CUDA when present, else CPU; ``"cuda"``/``"cuda:N"`` must exist."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ModelError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N.") from err
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} was requested but CUDA is not available here.")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ModelError(
                f"device {device!r} was requested but only "
                f"{torch.cuda.device_count()} CUDA device(s) exist."
            )
    elif resolved.type != "cpu":
        raise ModelError(f"unsupported device {device!r}: use auto, cpu, cuda or cuda:N.")
    return resolved


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """Map a dtype name to torch; ``"auto"`` is bfloat16 on CUDA and float32 on the CPU."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}: use one of auto, {', '.join(DTYPES)}.")
    if device.type == "cpu" and dtype != "float32":
        warnings.warn(
            f"{dtype} on the CPU changes answers between batch sizes; float32 is "
            "the safe choice for robustness studies.",
            RuntimeWarning,
            stacklevel=3,
        )
    return DTYPES[dtype]


def folder_revision(path: Path) -> str:
    """A cheap fingerprint of a model folder: its config bytes and the names and sizes of its
    weight files (hashing gigabytes of weights on every start would be too slow)."""
    digest = hashlib.sha256()
    config = path / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size};".encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class _LabelPlan:
    """How to score one label set: extra prompt extensions to run and how to combine them.

    ``passes[p]`` is a token path appended to the prompt for forward pass ``p`` (``()`` for the
    plain prompt); ``reads[p]`` lists ``(depth, node, tokens)``: read the log-probabilities of
    ``tokens`` after ``node`` = ``passes[p][:depth]``. ``terminals`` are ``(label, path)`` whose
    full path probability goes to the label; ``exclusive`` are ``(label, node, children)``
    where the label gets P(node) times 1 - sum of P(child | node).
    """

    passes: tuple[tuple[int, ...], ...]
    reads: tuple[tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...], ...]
    terminals: tuple[tuple[int, tuple[int, ...]], ...]
    exclusive: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]
    n_labels: int


def build_label_plan(labels: Sequence[str], encode: Any) -> _LabelPlan:
    """Build the trie plan for ``labels`` (already stripped and distinct); ``encode(text)``
    returns token ids without special tokens. See the module docstring for the rules."""
    spellings: list[tuple[int, tuple[int, ...]]] = []
    for index, label in enumerate(labels):
        seen: set[tuple[int, ...]] = set()
        for text in (label, " " + label):
            ids = tuple(encode(text))
            if not ids:
                raise ModelError(f"label {label!r} tokenises to nothing.")
            if ids not in seen:
                seen.add(ids)
                spellings.append((index, ids))

    owners: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for index, ids in spellings:
        for depth in range(len(ids) + 1):
            owners[ids[:depth]].add(index)
    marked: dict[tuple[int, ...], int] = {}
    for index, ids in spellings:
        if marked.setdefault(ids, index) != index:
            raise ModelError(
                f"labels {labels[marked[ids]]!r} and {labels[index]!r} tokenise "
                "identically, so they cannot be told apart."
            )

    terminals: set[tuple[int, tuple[int, ...]]] = set()
    exclusive: dict[tuple[int, ...], int] = {}
    for index, ids in spellings:
        for depth in range(1, len(ids) + 1):
            if owners[ids[:depth]] == {index}:
                terminals.add((index, ids[:depth]))
                break
        else:
            exclusive[ids] = index

    needed: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for _, path in terminals:
        for depth in range(len(path)):
            needed[path[:depth]].add(path[depth])
    children: dict[tuple[int, ...], tuple[int, ...]] = {}
    for node in exclusive:
        for depth in range(len(node)):
            needed[node[:depth]].add(node[depth])
        kids = sorted(
            {
                ids[len(node)]
                for _, ids in spellings
                if len(ids) > len(node) and ids[: len(node)] == node
            }
        )
        children[node] = tuple(kids)
        needed[node].update(kids)

    nodes = sorted(needed, key=lambda n: (len(n), n))
    maximal = [n for n in nodes if not any(len(o) > len(n) and o[: len(n)] == n for o in nodes)]
    passes = tuple(sorted(maximal, key=lambda n: (len(n), n)))
    reads: list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = [[] for _ in passes]
    for node in nodes:
        source = next(p for p, path in enumerate(passes) if path[: len(node)] == node)
        reads[source].append((len(node), node, tuple(sorted(needed[node]))))
    return _LabelPlan(
        passes=passes,
        reads=tuple(tuple(r) for r in reads),
        terminals=tuple(sorted(terminals)),
        exclusive=tuple((index, node, children[node]) for node, index in sorted(exclusive.items())),
        n_labels=len(labels),
    )


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def combine_plan(
    plan: _LabelPlan, logp: dict[tuple[tuple[int, ...], int], float]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Turn the read log-probabilities into (renormalised probs, raw label log-probs)."""

    def path_logp(path: tuple[int, ...]) -> float:
        return sum(logp[(path[:d], path[d])] for d in range(len(path)))

    terms: list[list[float]] = [[] for _ in range(plan.n_labels)]
    for index, path in plan.terminals:
        terms[index].append(path_logp(path))
    for index, node, kids in plan.exclusive:
        continued = sum(math.exp(logp[(node, kid)]) for kid in kids)
        rest = math.log1p(-continued) if continued < 1.0 else -math.inf
        terms[index].append(path_logp(node) + rest)
    label_lp = tuple(_logsumexp(t) for t in terms)
    total = _logsumexp(label_lp)
    if total == -math.inf:
        probs = tuple(math.nan for _ in label_lp)
    else:
        probs = tuple(math.exp(lp - total) for lp in label_lp)
    return probs, label_lp


class HFRunner:
    """A transformers causal LM behind the runner protocol (see the module docstring).

    ``max_padding`` caps the share of a row that may be padding within a batch: rows sorted by
    length are cut into a new batch early when the next one is that much shorter than the
    batch's longest. On the CPU batching buys little (about 15% more tokens/s at batch 16 than
    at batch 1 on the reference 2-core machine) while every padded position costs a full
    position, so ``"auto"`` caps padding at 25% there; on CUDA, where batching is what makes
    throughput, ``"auto"`` means no cap. ``None`` disables the cap.
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
    ) -> None:
        if batch_size < 1:
            raise ModelError(f"batch_size must be at least 1, got {batch_size}.")
        if chat is True:
            chat = "always"
        elif chat is False:
            chat = "never"
        if chat not in CHAT_MODES:
            raise ModelError(f"unknown chat setting {chat!r}: use auto, always or never.")
        self.threads = configure_threads(threads)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        self.chat = str(chat)
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
        self.has_chat_template = bool(getattr(tokenizer, "chat_template", None))
        if self.chat == "always" and not self.has_chat_template:
            raise ModelError(f"chat='always' was requested but {model_id} has no chat template.")
        self.max_length = int(getattr(model.config, "max_position_embeddings", 0) or 0) or None
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        self.eos_ids = self._eos_ids()
        self._plans: dict[tuple[str, ...], _LabelPlan] = {}

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
    ) -> HFRunner:
        """Load a local folder (or a model already in the local Hugging Face cache) with no
        network access, on ``device`` in ``dtype``."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        resolved_device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved_device)
        if threads is not None or resolved_device.type == "cpu":
            configure_threads(threads)
        folder = Path(path).expanduser()
        source = str(folder) if folder.is_dir() else str(path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                source, dtype=torch_dtype, local_files_only=True
            )
        except OSError as err:
            if folder.is_dir():
                raise ModelError(f"model folder {folder} could not be loaded: {err}") from err
            raise ModelError(
                f"model {str(path)!r} was not found: no such folder, and not in "
                "the local Hugging Face cache (nothing is downloaded)."
            ) from err
        model.to(resolved_device)
        if revision is None:
            revision = (
                folder_revision(folder)
                if folder.is_dir()
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
            "chat": self.chat if self.has_chat_template else "none",
            "transformers": transformers.__version__,
            "torch": torch.__version__.split("+")[0],
        }

    @property
    def uses_chat(self) -> bool:
        """Whether prompts should be chat messages: the model has a template, chat not off."""
        return self.has_chat_template and self.chat != "never"

    def close(self) -> None:
        """Nothing to release: the model is freed with the runner."""

    def _eos_ids(self) -> tuple[int, ...]:
        ids: set[int] = set()
        for source in (
            getattr(self.model, "generation_config", None),
            self.model.config,
            self.tokenizer,
        ):
            value = getattr(source, "eos_token_id", None)
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, list | tuple):
                ids.update(int(v) for v in value)
        return tuple(sorted(ids))

    # ----------------------------------------------------------------- tokenisation
    def render(self, prompt: Prompt) -> tuple[str, bool]:
        """The prompt as the text the model sees, and whether special tokens must be added
        when tokenising it (False when a chat template already wrote them).

        Messages go through the chat template when the model has one and chat is not
        ``"never"``; otherwise their contents are joined by blank lines. Text goes through the
        template as one user message only with ``chat="always"``.
        """
        data = canonical_prompt(prompt)
        use_template = self.has_chat_template and self.chat != "never"
        if isinstance(data, str):
            if self.chat == "always":
                data = [{"role": "user", "content": data}]
            else:
                return data, True
        if not use_template:
            return "\n\n".join(m["content"] for m in data), True
        text = self.tokenizer.apply_chat_template(data, tokenize=False, add_generation_prompt=True)
        return str(text), False

    def encode_prompts(self, prompts: Sequence[Prompt]) -> list[list[int]]:
        """Token ids of each prompt as the model sees it; raises ModelError naming an empty or
        too long prompt."""
        rendered = [self.render(p) for p in prompts]
        ids: list[list[int]] = [[] for _ in prompts]
        for special in (True, False):
            positions = [i for i, (_, s) in enumerate(rendered) if s is special]
            if positions:
                encoded = self.tokenizer(
                    [rendered[i][0] for i in positions], add_special_tokens=special
                )["input_ids"]
                for i, row in zip(positions, encoded, strict=True):
                    ids[i] = list(row)
        for i, row in enumerate(ids):
            if not row:
                raise ModelError(f"prompt {i} is empty after tokenisation.")
            if self.max_length is not None and len(row) > self.max_length:
                raise ModelError(
                    f"prompt {i} has {len(row)} tokens, more than the model's {self.max_length}."
                )
        return ids

    def _encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ----------------------------------------------------------------- batching
    def batches(self, lengths: Sequence[int], batch_size: int | None = None) -> list[list[int]]:
        """Indices grouped into batches of similar length, longest first (stable on ties).

        A batch holds at most ``batch_size`` rows and, when ``max_padding`` is set, no row
        whose padding would exceed that fraction of the batch's longest row (see the class
        docstring for why the CPU default caps padding).
        """
        size = batch_size or self.batch_size
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        out: list[list[int]] = []
        current: list[int] = []
        for i in order:
            too_short = (
                self.max_padding is not None
                and current
                and lengths[i] < (1.0 - self.max_padding) * lengths[current[0]]
            )
            if current and (len(current) == size or too_short):
                out.append(current)
                current = []
            current.append(i)
        if current:
            out.append(current)
        return out

    def collate(self, rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor | None]:
        """Left-pad ``rows`` into model inputs with explicit position ids. The attention mask
        is omitted when no row is padded, which lets attention use its causal fast path."""
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[r, width - len(row) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        padded = any(len(r) != width for r in rows)
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
        jobs: list[tuple[int, int, list[int]]] = []
        for i, plan in enumerate(plans):
            for p, path in enumerate(plan.passes):
                jobs.append((i, p, ids[i] + list(path)))
        pending = [len(plan.passes) for plan in plans]
        logps: list[dict[tuple[tuple[int, ...], int], float]] = [{} for _ in prompts]
        tops: list[tuple[float, int]] = [(math.nan, -1) for _ in prompts]
        latency = [0.0 for _ in prompts]
        results: list[OptionScores | None] = [None for _ in prompts]

        for batch in self.batches([len(j[2]) for j in jobs]):
            started = time.perf_counter()
            keep = max(len(plans[jobs[j][0]].passes[jobs[j][1]]) for j in batch) + 1
            with torch.inference_mode():
                logits = self.forward_last(self.collate([jobs[j][2] for j in batch]), keep)
                logprobs = torch.log_softmax(logits, dim=-1)
                rows, cols, toks, keys = [], [], [], []
                root_rows = []
                for r, j in enumerate(batch):
                    i, p, _ = jobs[j]
                    plan = plans[i]
                    depth_total = len(plan.passes[p])
                    for depth, node, tokens in plan.reads[p]:
                        col = keep - (depth_total + 1) + depth
                        for tok in tokens:
                            rows.append(r)
                            cols.append(col)
                            toks.append(tok)
                            keys.append((i, node, tok))
                        if depth == 0 and p == 0:
                            root_rows.append((r, keep - (depth_total + 1), i))
                values = logprobs[rows, cols, toks].tolist() if rows else []
                if root_rows:
                    root = logprobs[[r for r, _, _ in root_rows], [c for _, c, _ in root_rows]]
                    best_lp, best_tok = root.max(dim=-1)
                    best = list(zip(best_lp.tolist(), best_tok.tolist(), strict=True))
                else:
                    best = []
            for (i, node, tok), value in zip(keys, values, strict=True):
                logps[i][(node, tok)] = value
            for (_, _, i), (lp, tok) in zip(root_rows, best, strict=True):
                tops[i] = (math.exp(lp), tok)
            share = (time.perf_counter() - started) * 1000.0 / len(batch)
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
        return [r for r in results if r is not None]

    def _plan(self, labels: tuple[str, ...]) -> _LabelPlan:
        plan = self._plans.get(labels)
        if plan is None:
            plan = build_label_plan(labels, self._encode_text)
            self._plans[labels] = plan
        return plan

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
            if inputs["attention_mask"] is None:
                inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
            with torch.inference_mode():
                out = self.model.generate(**inputs, generation_config=config)
            new = out[:, inputs["input_ids"].shape[1] :].tolist()
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
        """Sum of log P(response tokens | prompt) for each (prompt, response) pair."""
        prompt_ids = self.encode_prompts([p for p, _ in pairs])
        response_ids = [self._encode_text(str(r)) for _, r in pairs]
        results: list[LogLikelihood | None] = [None for _ in pairs]
        empty = [i for i, r in enumerate(response_ids) if not r]
        for i in empty:
            results[i] = LogLikelihood(logprob=0.0, n_tokens=0)
        if empty and on_batch is not None:
            on_batch(empty, [results[i] for i in empty])
        todo = [i for i, r in enumerate(response_ids) if r]
        # the last response token is never an input: its prediction comes from the one before.
        rows = {i: prompt_ids[i] + response_ids[i][:-1] for i in todo}
        if self.max_length is not None:
            for i in todo:
                if len(rows[i]) > self.max_length:
                    raise ModelError(
                        f"pair {i} has {len(rows[i]) + 1} tokens, more than the "
                        f"model's {self.max_length}."
                    )
        vocab = int(self.model.config.vocab_size)
        for group in self.batches([len(rows[i]) for i in todo]):
            indices = [todo[g] for g in group]
            for batch in self._split_for_memory(indices, response_ids, vocab):
                keep = max(len(response_ids[i]) for i in batch)
                with torch.inference_mode():
                    logits = self.forward_last(self.collate([rows[i] for i in batch]), keep)
                    norm = torch.logsumexp(logits, dim=-1)
                    r_idx, c_idx, t_idx = [], [], []
                    for r, i in enumerate(batch):
                        n = len(response_ids[i])
                        for k, tok in enumerate(response_ids[i]):
                            r_idx.append(r)
                            c_idx.append(keep - n + k)
                            t_idx.append(tok)
                    picked = (logits[r_idx, c_idx, t_idx] - norm[r_idx, c_idx]).double().tolist()
                offset = 0
                for i in batch:
                    n = len(response_ids[i])
                    results[i] = LogLikelihood(
                        logprob=math.fsum(picked[offset : offset + n]), n_tokens=n
                    )
                    offset += n
                if on_batch is not None:
                    on_batch(batch, [results[i] for i in batch])
        return [r for r in results if r is not None]

    def _split_for_memory(
        self, batch: list[int], response_ids: list[list[int]], vocab: int
    ) -> list[list[int]]:
        """Split a batch (sorted longest first) so its float32 logits stay under the budget."""
        out: list[list[int]] = []
        current: list[int] = []
        for i in batch:
            trial = [*current, i]
            keep = max(len(response_ids[j]) for j in trial)
            if current and len(trial) * keep * vocab * 4 > self.max_logits_bytes:
                out.append(current)
                current = [i]
            else:
                current = trial
        if current:
            out.append(current)
        return out
