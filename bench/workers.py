"""Scoring workers for side-by-side benchmarks: the same requests timed in separate processes.

A worker loads one model once and then answers requests read from its standard input, each
timed inside the worker (so start-up and the pipe are never counted). Kinds:

- ``robustness``: this toolkit's hf runner imported from ``--root`` (this checkout, or a copy of
  another revision such as main, made by :func:`export_revision`), with ``--sharing``;
- ``lmeval``: lm-evaluation-harness's ``HFLM`` (run it with the Python of the environment that
  has ``lm_eval``, see ``make lmeval-env``).

Requests are ``("loglikelihood", pairs)``, ``("score_options", (prompts, labels))`` and
``("generate", (prompts, max_new_tokens))`` (robustness only); each
answer is ``(seconds, results, token positions run, forwards, CPU seconds)`` with results as
plain tuples; the CPU seconds (the worker process's, all threads) measure the work on a machine
whose other jobs stretch the wall clock.
The parent side is :class:`Worker`. Run as ``python bench/workers.py --kind ... --root ...``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parents[1]


def _send(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("worker closed its pipe")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))


class Worker:
    """A worker process, started at construction; :meth:`call` sends one request and waits."""

    def __init__(self, python: str | Path, *args: str) -> None:
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": ""})
        self.proc = subprocess.Popen(
            [str(python), str(Path(__file__).resolve()), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.info = self._read()

    def _read(self) -> Any:
        assert self.proc.stdout is not None
        return _recv(self.proc.stdout)  # type: ignore[arg-type]

    def call(self, kind: str, payload: Any) -> tuple[float, list[Any], int, int, float]:
        assert self.proc.stdin is not None
        _send(self.proc.stdin, (kind, payload))  # type: ignore[arg-type]
        answer = self._read()
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def export_revision(revision: str) -> Path:
    """A copy of this repository's ``revision`` (``git archive``) in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{revision.replace('/', '-')}-"))
    archive = folder / "tree.tar"
    with archive.open("wb") as handle:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision], stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "tree", filter="data")
    archive.unlink()
    return folder / "tree"


def embedded_folder() -> Path:
    """The converted folder of the embedded model (converted on first use)."""
    from robustness.runners.embedded import ensure_converted

    return Path(ensure_converted().path)


# ---------------------------------------------------------------------- worker side
def _robustness(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    sys.path.insert(0, str(Path(args.root).resolve()))
    from robustness.runners.hf import HFRunner

    runner = HFRunner.from_pretrained(
        args.model, batch_size=args.batch_size, prefix_sharing=args.sharing
    )

    def serve(kind: str, payload: Any) -> tuple[list[Any], int, int]:
        before = (runner.prefix.tokens_run, getattr(runner.prefix, "forwards", 0))
        if kind == "loglikelihood":
            out = [(r.logprob, r.n_tokens) for r in runner.loglikelihood(payload)]
        elif kind == "generate":
            out = [g.text for g in runner.generate(*payload)]
        else:
            prompts, labels = payload
            out = [(r.probs, r.label_logprobs) for r in runner.score_options(prompts, labels)]
        tokens = runner.prefix.tokens_run - before[0]
        return out, tokens, getattr(runner.prefix, "forwards", 0) - before[1]

    import torch
    import transformers

    import robustness

    info = {"code": str(Path(robustness.__file__).parents[1]), "torch": torch.__version__}
    info["transformers"] = transformers.__version__
    info["threads"] = torch.get_num_threads()
    return serve, info


def _lmeval(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    import lm_eval
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=args.model, batch_size=args.batch_size, device="cpu", dtype="float32")

    def serve(kind: str, payload: Any) -> tuple[list[Any], int, int]:
        if kind != "loglikelihood":
            raise ValueError(f"the lm-eval worker answers loglikelihood only, not {kind}")
        requests = [
            Instance(request_type="loglikelihood", doc={}, arguments=(ctx, cont), idx=i)
            for i, (ctx, cont) in enumerate(payload)
        ]
        out = lm.loglikelihood(requests, disable_tqdm=True)
        return [(float(lp), None) for lp, _ in out], 0, 0

    info = {"lm_eval": getattr(lm_eval, "__version__", "?"), "torch": torch.__version__}
    info["threads"] = torch.get_num_threads()
    return serve, info


def main() -> int:
    if len(sys.argv) == 1:  # as `make bench` runs every script: nothing to measure alone
        print("bench/workers.py: the worker of bench/cloze.py and bench/lmeval.py; see --help")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("robustness", "lmeval"), required=True)
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sharing", default="auto")
    args = parser.parse_args()
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    sys.stdout = sys.stderr  # anything printed goes to stderr, the pipe stays clean
    serve, info = _robustness(args) if args.kind == "robustness" else _lmeval(args)
    _send(out, info)
    while True:
        try:
            kind, payload = _recv(inp)
        except EOFError:
            return 0
        try:
            started, cpu = time.perf_counter(), time.process_time()
            results, tokens, forwards = serve(kind, payload)
            wall = time.perf_counter() - started
            _send(out, (wall, results, tokens, forwards, time.process_time() - cpu))
        except Exception as exc:  # handed to the parent, which raises it
            _send(out, RuntimeError(f"{type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    raise SystemExit(main())
