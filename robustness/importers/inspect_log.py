"""inspect_ai eval logs (``.eval`` and ``.json``) in, the long table out.

Each log is read with inspect_ai's own ``read_eval_log`` (the optional extra ``inspect``).  A
sample becomes one row: its ``id`` the item id, its ``choices`` the options (displayed as
A, B, C, ... as inspect_ai's ``multiple_choice`` solver shows them), its ``target`` the gold
(a letter or the option text), the answer the scorer's ``answer`` when it is a displayed
label, else our answer parser on the completion (inspect_ai's ``choice`` scorer reads only
``ANSWER: X`` and scores a bare ``B) 4`` wrong, with no answer), and ``correct`` answer == gold
as everywhere in the long table; the scorer's own verdict is kept beside it as
``inspect_score`` (``C``/``I``).  With ``epochs`` > 1 each epoch is one more variant of the prompt
(``category/variant/epochN``); for a task mapped to ``original`` the first epoch is the
reference and the others are category ``resample`` (``resample/0/epochN``), since an item has
one reference prompt: repeated samples of the same prompt, whose agreement is the
model's sampling noise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from robustness.core.answer_parser import parse_answer
from robustness.core.errors import StudyError
from robustness.importers.rows import ROW_COLUMNS, rows_frame
from robustness.importers.task_map import TaskPlace, place_of

__all__ = ["SUPPORTED_LOG_VERSION", "import_inspect"]

#: The eval-log format version this reader knows (inspect_ai's ``EvalLog.version``).
SUPPORTED_LOG_VERSION = 2
_LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TRUE_SCORES = {"C", "c", "1", "1.0", "True", "true"}
_FALSE_SCORES = {"I", "i", "0", "0.0", "False", "false", "P", "N"}


#: The reference category, and the category of an original task's later epochs.
REFERENCE = "original"
RESAMPLE = "resample"


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ModuleNotFoundError:
        raise StudyError(
            "importing inspect logs needs inspect_ai: pip install 'robustness[inspect]'."
        ) from None
    if not path.is_file():
        raise StudyError(f"{path}: no such log file.")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises its own errors, pydantic's, zip's and json's
        lines = str(exc).strip().splitlines()
        reason = lines[0][:200] if lines else type(exc).__name__
        raise StudyError(f"{path}: not an inspect_ai eval log ({reason}).") from None


def _file_version(path: Path) -> object:
    """The ``version`` a log file declares, read before inspect_ai migrates it on loading."""
    import zipfile

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
                member = "header.json" if "header.json" in names else "_journal/start.json"
                if member not in names:
                    return None
                data = json.loads(archive.read(member))
        else:
            data = json.loads(path.read_bytes())
    except (OSError, ValueError, NotImplementedError, zipfile.BadZipFile):
        return None  # unreadable here (a zstd .eval): inspect_ai's version check stands
    return data.get("version") if isinstance(data, dict) else None


def _correct(scores: dict[str, Any] | None, where: str) -> tuple[bool | None, str | None]:
    """(correct, the scorer's answer) from the sample's first score."""
    if not scores:
        return None, None
    score = next(iter(scores.values()))
    value, answer = score.value, score.answer
    text = str(value)
    if isinstance(value, bool):
        return value, answer
    if text in _TRUE_SCORES:
        return True, answer
    if text in _FALSE_SCORES:
        return False, answer
    raise StudyError(f"{where}, field 'scores': {value!r} is not a correct/incorrect score.")


def _gold(target: object, labels: list[str], options: list[str], where: str) -> int:
    if isinstance(target, list):
        if len(target) != 1:
            raise StudyError(f"{where}, field 'target': {target!r} is not one answer.")
        target = target[0]
    text = str(target).strip()
    if text in labels:
        return labels.index(text)
    stripped = [o.strip() for o in options]
    if text in stripped:
        return stripped.index(text)
    raise StudyError(f"{where}, field 'target': {target!r} names no choice.")


def _sample_row(
    sample: Any, where: str, place: TaskPlace, model: str, epochs: int
) -> dict[str, Any]:
    choices = sample.choices
    if not choices or len(choices) < 2:
        raise StudyError(f"{where}, field 'choices': a sample needs two or more choices.")
    options = [str(c) for c in choices]
    labels = list(_LETTERS[: len(options)])
    gold = _gold(sample.target, labels, options, where)
    correct, scored = _correct(sample.scores, where)
    completion = sample.output.completion if sample.output is not None else None
    if isinstance(scored, str) and scored.strip() in labels:
        label: str | None = scored.strip()
        answer: int | None = labels.index(scored.strip())
        reason = None
    else:
        parsed = parse_answer(completion, labels, options)
        label = parsed.label if parsed.valid else None
        answer = parsed.position if parsed.valid else None
        reason = None if parsed.valid else parsed.reason
    score = None if correct is None else ("C" if correct else "I")
    category, variant_id = place.category, place.variant_id
    if epochs > 1 and category == REFERENCE and sample.epoch > 1:
        # the reference prompt is asked once per item: later epochs are resamples of it
        category, variant_id = RESAMPLE, f"{RESAMPLE}/{place.variant}"
    if epochs > 1 and category != REFERENCE:
        variant_id += f"/epoch{sample.epoch}"
    prompt = sample.input if isinstance(sample.input, str) else None
    return {
        "study": "inspect",
        "model": model,
        "dataset": place.dataset,
        "dataset_type": place.dataset_type,
        "item_id": str(sample.id),
        "category": category,
        "variant_id": variant_id,
        "params": json.dumps({"epoch": sample.epoch}, sort_keys=True),
        "prompt_sha": None if prompt is None else hashlib.sha256(prompt.encode()).hexdigest(),
        "mode": "generate",
        "raw_output": completion,
        "label": label,
        "answer": answer,
        "valid": answer is not None,
        "invalid_reason": reason,
        "gold": gold,
        "correct": (answer == gold) if answer is not None else None,
        "option_probs": None,
        "scale": "nominal",
        "n_options": len(options),
        "prompt": prompt,
        "logliks": None,
        "inspect_score": score,
    }


def _log_rows(
    path: Path, task_map: dict[str, TaskPlace] | None, epochs_allowed: bool
) -> tuple[str, str, list[dict[str, Any]]]:
    log = _read(path)
    declared = _file_version(path)
    for version in (declared, log.version):
        if version is not None and version != SUPPORTED_LOG_VERSION:
            raise StudyError(
                f"{path}, field 'version': eval-log format {version!r} is not the "
                f"format {SUPPORTED_LOG_VERSION} this importer reads."
            )
    if log.status != "success":
        raise StudyError(f"{path}, field 'status': the eval ended {log.status!r}, not 'success'.")
    task = str(log.eval.task).split("/")[-1]
    place = place_of(task, task_map, str(path))
    epochs = int(getattr(log.eval.config, "epochs", None) or 1)
    if epochs > 1 and not epochs_allowed:
        raise StudyError(
            f"{path}, field 'eval.config.epochs': {epochs} epochs; pass epochs=True to import "
            "each epoch as one more variant."
        )
    model = str(log.eval.model)
    if not log.samples:
        raise StudyError(f"{path}, field 'samples': the log holds no samples.")
    rows = [
        _sample_row(s, f"{path}, sample {s.id!r} epoch {s.epoch}", place, model, epochs)
        for s in log.samples
    ]
    return task, model, rows


def import_inspect(
    logs: Sequence[str | Path],
    task_map: dict[str, TaskPlace] | None = None,
    epochs: bool = True,
) -> pd.DataFrame:
    """Read inspect_ai eval logs into one long table.

    Parameters
    ----------
    logs
        ``.eval`` or ``.json`` log files.
    task_map
        Task name -> place (:func:`robustness.importers.task_map.read_task_map`); None: each
        task its own objective dataset, category ``original``.
    epochs
        Import each epoch of a multi-epoch eval as one more variant (True), or refuse such
        logs (False).

    Returns
    -------
    pandas.DataFrame
        The long table (columns :data:`robustness.importers.rows.ROW_COLUMNS`).
    """
    if not logs:
        raise StudyError("no inspect log given.")
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str, str], Path] = {}
    seen_task: dict[tuple[str, str, str, str], str] = {}
    for raw in logs:
        path = Path(raw)
        task, model, log_rows = _log_rows(path, task_map, epochs)
        if log_rows:
            first = log_rows[0]
            original = first["category"] == REFERENCE
            key = (
                model,
                first["dataset"],
                first["category"],
                "" if original else first["variant_id"],
            )
            if key in seen and original and seen_task[key] != task:
                raise StudyError(
                    f"{path}: task {task!r} with model {model!r} maps dataset "
                    f"{first['dataset']!r} to category 'original', as {seen[key]} does; a "
                    "dataset has one original prompt per model, so map one of the two to a "
                    "perturbation category in the task map."
                )
            if key in seen:
                raise StudyError(
                    f"{path}: task {task!r} with model {model!r} lands on the same dataset, "
                    f"category and variant as {seen[key]}; give each task its own variant."
                )
            seen[key], seen_task[key] = path, task
        rows.extend(log_rows)
    return rows_frame(rows, (*ROW_COLUMNS, "inspect_score"))
