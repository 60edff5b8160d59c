"""lm-evaluation-harness ``--log_samples`` output in, the long table out.

lm-eval writes, per model, a folder with ``results_<date>.json`` (the run: model, revision,
task configs, version) and one ``samples_<task>_<date>.jsonl`` per task (one JSON object per
document: ``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
``filter``). Each sample becomes one row per (model, task, doc):

- multiple-choice tasks (``output_type`` ``multiple_choice``): the answer is the argmax of the
  logged log-likelihoods (``filtered_resps``, one ``[loglik, is_greedy]`` per choice, in the
  task's choice order), ``option_probs`` their softmax, ``gold`` the ``target`` index;
- generation tasks (``generate_until``): the answer is our answer parser on the filtered
  response, over the displayed labels and options the doc carries (``labels``/``options`` or
  ``choices``).

Every error is one sentence naming the file, line and field; nothing is written until every
file has been read.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from robustness.core.answer_parser import parse_answer
from robustness.core.errors import StudyError
from robustness.importers.rows import ROW_COLUMNS, rows_frame
from robustness.importers.task_map import TaskPlace, place_of

__all__ = ["SUPPORTED_VERSIONS", "import_lm_eval"]

#: The lm-eval releases whose log format this reader knows (0.4.x).
SUPPORTED_VERSIONS = re.compile(r"^0\.4\.\d+")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class _Run:
    """One results file: the model it ran and its tasks' output types."""

    path: Path
    model: str
    revision: str | None
    version: str
    output_types: dict[str, str]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"{path}: cannot be read ({exc.strerror}).") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StudyError(f"{path}: not a JSON file ({exc}).") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: a results file must hold a JSON object.")
    return data


def _model_args(args: object) -> dict[str, str]:
    """``pretrained=X,revision=Y`` (or a dict) -> {key: value}."""
    if isinstance(args, dict):
        return {str(k): str(v) for k, v in args.items()}
    out = {}
    for part in str(args or "").split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _read_run(path: Path) -> _Run:
    data = _read_json(path)
    version = data.get("lm_eval_version")
    if not isinstance(version, str) or not SUPPORTED_VERSIONS.match(version):
        raise StudyError(
            f"{path}, field 'lm_eval_version': {version!r} is not an lm-eval 0.4.x log "
            "(this importer reads the 0.4 sample format)."
        )
    raw_config = data.get("config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    args = _model_args(config.get("model_args"))
    model = data.get("model_name") or args.get("pretrained") or config.get("model")
    if not isinstance(model, str) or not model:
        raise StudyError(f"{path}, field 'model_name': missing; the model cannot be named.")
    revision = data.get("model_revision") or args.get("revision")
    configs = data.get("configs")
    if not isinstance(configs, dict):
        raise StudyError(f"{path}, field 'configs': missing; the tasks' output types are unknown.")
    types = {}
    for task, cfg in configs.items():
        kind = cfg.get("output_type") if isinstance(cfg, dict) else None
        if kind not in ("multiple_choice", "generate_until"):
            raise StudyError(
                f"{path}, field 'configs.{task}.output_type': {kind!r} cannot be imported "
                "(multiple_choice or generate_until)."
            )
        types[str(task)] = str(kind)
    return _Run(path, model, str(revision) if revision else None, version, types)


def _samples_files(run: _Run) -> list[tuple[str, Path]]:
    """The (task, samples file) pairs written with ``run`` (same folder, same date)."""
    date = run.path.stem.removeprefix("results_")
    out = []
    for path in sorted(run.path.parent.glob(f"samples_*_{date}.jsonl")):
        match = _SAMPLES.match(path.name)
        if match and match["date"] == date:
            out.append((match["task"], path))
    return out


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise StudyError(f"{path}: cannot be read ({exc.strerror}).") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                end = "" if line.endswith(b"\n") else " (the line is truncated)"
                raise StudyError(f"{path}, line {number}: not a JSON object{end}.") from None
            if not isinstance(record, dict):
                raise StudyError(f"{path}, line {number}: not a JSON object.")
            yield number, record


def _logliks(resps: object, where: str) -> list[float]:
    """One float per choice from ``filtered_resps`` ([loglik, is_greedy] or a bare loglik)."""
    if not isinstance(resps, list) or len(resps) < 2:
        raise StudyError(f"{where}, field 'filtered_resps': not a list of two or more choices.")
    out = []
    for pair in resps:
        value = pair[0] if isinstance(pair, list | tuple) and pair else pair
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise StudyError(
                f"{where}, field 'filtered_resps': {value!r} is not a log-likelihood."
            ) from None
        if math.isnan(number):
            raise StudyError(f"{where}, field 'filtered_resps': a log-likelihood is NaN.")
        out.append(number)
    return out


def _gold_index(target: object, labels: list[str], options: list[str], where: str) -> int:
    """The gold position from ``target``: an index, a displayed label, or the option text."""
    if isinstance(target, bool):
        target = None
    if isinstance(target, int):
        index = target
    elif isinstance(target, str) and target.strip() in labels:
        index = labels.index(target.strip())
    elif isinstance(target, str) and target.strip() in [o.strip() for o in options]:
        index = [o.strip() for o in options].index(target.strip())
    elif isinstance(target, str) and target.strip().isdigit():
        index = int(target.strip())
    else:
        raise StudyError(f"{where}, field 'target': {target!r} names no choice.")
    if not 0 <= index < len(options):
        raise StudyError(f"{where}, field 'target': {index} is outside the {len(options)} choices.")
    return index


def _prompt_of(record: dict[str, Any]) -> str | None:
    """The context of the first request (``arguments`` as a list or as lm-eval's dict)."""
    args = record.get("arguments")
    first: object = None
    if isinstance(args, list) and args:
        first = args[0]
    elif isinstance(args, dict) and args:
        first = next(iter(args.values()))
    if isinstance(first, dict):
        first = list(first.values())
    if isinstance(first, list | tuple) and first and isinstance(first[0], str):
        return first[0]
    return None


def _continuations(record: dict[str, Any]) -> list[str]:
    args = record.get("arguments")
    requests = list(args.values()) if isinstance(args, dict) else (args or [])
    out = []
    for request in requests:
        values = list(request.values()) if isinstance(request, dict) else request
        if isinstance(values, list | tuple) and len(values) > 1 and isinstance(values[1], str):
            out.append(values[1])
    return out


def _choice_row(record: dict[str, Any], where: str) -> dict[str, Any]:
    logliks = _logliks(record.get("filtered_resps"), where)
    options = [c.strip() for c in _continuations(record)]
    if len(options) != len(logliks):
        options = [str(i) for i in range(len(logliks))]
    gold = _gold_index(record["target"], list(_LETTERS[: len(options)]), options, where)
    top = max(logliks)
    if not math.isfinite(top):
        raise StudyError(
            f"{where}, field 'filtered_resps': no option has a finite log-likelihood ({top})."
        )
    weights = [math.exp(x - top) for x in logliks]
    total = sum(weights)
    answer = logliks.index(top)
    return {
        "mode": "cloze",
        "raw_output": options[answer],
        "label": options[answer],
        "answer": answer,
        "valid": True,
        "invalid_reason": None,
        "gold": gold,
        "correct": answer == gold,
        "option_probs": [w / total for w in weights],
        "n_options": len(logliks),
        "logliks": json.dumps(logliks),
    }


def _display(doc: object, where: str) -> tuple[list[str], list[str]]:
    options = None
    if isinstance(doc, dict):
        options = doc.get("options", doc.get("choices"))
    if isinstance(options, dict) and isinstance(options.get("text"), list):
        labels = options.get("label")
        options = options["text"]
    else:
        labels = doc.get("labels") if isinstance(doc, dict) else None
    if not isinstance(options, list) or len(options) < 2:
        raise StudyError(
            f"{where}, field 'doc.options': a generation task's doc needs its options "
            "('options' or 'choices', two or more) to read the answer."
        )
    if not isinstance(labels, list) or len(labels) != len(options):
        labels = list(_LETTERS[: len(options)])
    return [str(x) for x in labels], [str(x) for x in options]


def _generation_row(record: dict[str, Any], where: str) -> dict[str, Any]:
    labels, options = _display(record.get("doc"), where)
    resps = record.get("filtered_resps")
    raw = resps[0] if isinstance(resps, list) and resps else resps
    if isinstance(raw, list):
        raw = raw[0] if raw else None
    if raw is not None and not isinstance(raw, str):
        raise StudyError(f"{where}, field 'filtered_resps': {raw!r} is not generated text.")
    parsed = parse_answer(raw, labels, options)
    gold = _gold_index(record["target"], labels, options, where)
    answer = parsed.position if parsed.valid else None
    return {
        "mode": "generate",
        "raw_output": raw,
        "label": parsed.label if parsed.valid else None,
        "answer": answer,
        "valid": bool(parsed.valid),
        "invalid_reason": None if parsed.valid else parsed.reason,
        "gold": gold,
        "correct": (answer == gold) if answer is not None else None,
        "option_probs": None,
        "n_options": len(options),
        "logliks": None,
    }


def _task_rows(
    task: str, path: Path, kind: str, place: TaskPlace, run: _Run
) -> list[dict[str, Any]]:
    """Every row of one samples file (the first filter of each doc)."""
    model = run.model if run.revision in (None, "main") else f"{run.model}@{run.revision}"
    seen: dict[int, str] = {}
    rows = []
    for number, record in _lines(path):
        where = f"{path}, line {number}"
        doc_id = record.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool):
            raise StudyError(f"{where}, field 'doc_id': {doc_id!r} is not an integer.")
        if "target" not in record:
            raise StudyError(f"{where}, field 'target': missing (doc {doc_id} has no gold).")
        filter_name = str(record.get("filter", "none"))
        if doc_id in seen:
            if seen[doc_id] == filter_name:
                raise StudyError(f"{where}, field 'doc_id': doc {doc_id} appears twice.")
            continue  # another filter of the same doc: the first one is kept
        seen[doc_id] = filter_name
        body = (
            _choice_row(record, where)
            if kind == "multiple_choice"
            else _generation_row(record, where)
        )
        prompt = _prompt_of(record)
        rows.append(
            {
                "study": "lm-eval",
                "model": model,
                "dataset": place.dataset,
                "dataset_type": place.dataset_type,
                "item_id": str(doc_id),
                "category": place.category,
                "variant_id": place.variant_id,
                "params": json.dumps({"task": task, "filter": filter_name}, sort_keys=True),
                "prompt_sha": None if prompt is None else _sha(prompt),
                "prompt": prompt,
                "scale": "nominal",
                **body,
            }
        )
    return rows


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def _same_place(task: str, other: str, place: TaskPlace) -> str:
    """Why two tasks cannot share one place, and what to change in the task map."""
    if place.category == "original":
        return (
            f"task {task!r} maps dataset {place.dataset!r} to category 'original', as task "
            f"{other!r} does; a dataset has one original prompt per model, so map one of the "
            "two to a perturbation category in the task map."
        )
    return (
        f"task {task!r} maps to the same dataset, category and variant as task {other!r}; "
        "give each task its own variant in the map."
    )


def import_lm_eval(
    directory: str | Path, task_map: dict[str, TaskPlace] | None = None
) -> pd.DataFrame:
    """Read every lm-eval results file under ``directory`` and its samples into one table.

    Parameters
    ----------
    directory
        An lm-eval ``--output_path`` folder (searched recursively for ``results_*.json``).
    task_map
        Task -> place (:func:`robustness.importers.task_map.read_task_map`); None: each task
        its own objective dataset, category ``original``.

    Returns
    -------
    pandas.DataFrame
        The long table (columns :data:`robustness.importers.rows.ROW_COLUMNS`; ``logliks``
        holds the logged log-likelihoods of a multiple-choice row as JSON).
    """
    root = Path(directory)
    if not root.is_dir():
        raise StudyError(f"{root}: not a folder of lm-eval logs.")
    runs = [_read_run(p) for p in sorted(root.rglob("results_*.json"))]
    if not runs:
        raise StudyError(f"{root}: no results_*.json file (run lm-eval with --output_path).")
    by_folder: dict[Path, _Run] = {}
    for run in runs:
        other = by_folder.setdefault(run.path.parent, run)
        if (other.model, other.revision) != (run.model, run.revision):
            raise StudyError(
                f"{run.path}, field 'model_name': {run.model!r} differs from {other.model!r} "
                f"in {other.path.name}; one folder must hold one model's logs."
            )
    rows: list[dict[str, Any]] = []
    places: dict[tuple[str, str, str, str], str] = {}
    for run in runs:
        files = _samples_files(run)
        if not files:
            raise StudyError(f"{run.path}: no samples_*.jsonl beside it (run with --log_samples).")
        for task, path in files:
            if task not in run.output_types:
                raise StudyError(f"{path}: task {task!r} is not in {run.path.name}'s 'configs'.")
            place = place_of(task, task_map, str(path))
            key = (run.model, place.dataset, place.category, place.variant_id)
            if place.category == "original":
                key = (run.model, place.dataset, "original", "")
            if places.setdefault(key, task) != task:
                raise StudyError(f"{path}: {_same_place(task, places[key], place)}")
            rows.extend(_task_rows(task, path, run.output_types[task], place, run))
    return rows_frame(rows, ROW_COLUMNS)
