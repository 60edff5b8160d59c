"""A study as configuration: which items, which families, which models, where the table goes.

A study file is TOML::

    [study]
    name = "types"
    seed = 0
    items = ["items/mmlu.jsonl", "items/pct.jsonl"]   # or the bundled demo items when omitted
    items_per_dataset = 0     # > 0: at most this many items of each dataset, evenly spaced
    families = "all"          # or a list
    n_variants = 5
    shots = 0                 # few-shot exemplars from the same dataset (objective items)
    instruction = "..."       # optional: one instruction for every item (default: by task kind)
    conflict = "ambiguous"    # default of every model's conflict policy (generate mode)

    [perturbations.spelling_noise]   # optional parameters per family
    rate = 0.1

    [[models]]
    name = "smollm2-135m"
    backend = "hf"            # hf | vllm | openai
    model = "embedded"        # or a local path / a Hugging Face model id (downloaded if missing)
    offline = true            # optional: only files already on disk (unset: follow HF_HUB_OFFLINE)
    mode = "choice"           # choice | cloze | generate
    # conflict = "ambiguous"  # generate: "B. Agree" where B is Disagree -> ambiguous | label | text
    batch_size = 16
    dtype = "float32"
    device = "auto"

    [output]
    table = "results/types.parquet"

Relative paths are resolved against the study file's folder.  A key that is not
known stops the load with one sentence naming the section and the closest known
key, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robustness.answer_parser import CONFLICT_POLICIES
from robustness.errors import StudyError
from robustness.names import BACKENDS, DTYPES, MODES
from robustness.perturb import resolve_families


@dataclass(frozen=True)
class ModelConfig:
    """One model of a study and how to ask it."""

    name: str = "smollm2-135m"
    backend: str = "hf"
    model: str = "embedded"
    mode: str = "choice"
    batch_size: int = 16
    dtype: str = "float32"
    device: str = "auto"
    chat: bool | str = "auto"
    max_new_tokens: int = 16
    #: Hub access for ``hf``: True only files on disk, False download, None follow HF_HUB_OFFLINE.
    offline: bool | None = None
    conflict: str = "ambiguous"  # generate mode: a label with another option's text
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise StudyError(
                f"model {self.name!r}: unknown mode {self.mode!r}; use one of {', '.join(MODES)}."
            )
        if self.backend not in BACKENDS:
            raise StudyError(
                f"model {self.name!r}: unknown backend {self.backend!r}; use one of "
                f"{', '.join(BACKENDS)}."
            )
        if self.dtype not in DTYPES:
            raise StudyError(
                f"model {self.name!r}: unknown dtype {self.dtype!r}; use one of "
                f"{', '.join(DTYPES)}."
            )
        if self.offline is not None and not isinstance(self.offline, bool):
            raise StudyError(
                f"model {self.name!r}: offline must be true or false, got {self.offline!r}."
            )
        if self.conflict not in CONFLICT_POLICIES:
            raise StudyError(
                f"model {self.name!r}: unknown conflict policy {self.conflict!r}; use one of "
                f"{', '.join(CONFLICT_POLICIES)}."
            )
        if int(self.batch_size) < 1 or int(self.max_new_tokens) < 1:
            raise StudyError(f"model {self.name!r}: batch_size and max_new_tokens must be >= 1.")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["options"] = dict(self.options)
        return out


def model(model: str = "embedded", **kwargs: Any) -> ModelConfig:
    """A model for :func:`robustness.run`: ``rb.model("embedded", mode="choice")``.

    ``kwargs`` are :class:`ModelConfig` fields, e.g. ``rb.model("org/name", offline=True)``
    to use only files already on disk (``offline`` unset follows ``HF_HUB_OFFLINE``).
    """
    kwargs.setdefault("name", "smollm2-135m" if model == "embedded" else Path(model).name)
    return ModelConfig(model=model, **kwargs)


@dataclass(frozen=True)
class StudyConfig:
    """Everything that determines a study's table."""

    name: str = "study"
    seed: int = 0
    items: tuple[str, ...] = ()
    items_per_dataset: int = 0
    families: tuple[str, ...] = ()
    n_variants: int = 5
    shots: int = 0
    instruction: str | None = None
    perturbations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    models: tuple[ModelConfig, ...] = (ModelConfig(),)
    table: str = "results/study.parquet"
    cache: str | None = None
    base_dir: str = "."

    def path(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else Path(self.base_dir) / p

    @property
    def table_path(self) -> Path:
        return self.path(self.table)

    @property
    def cache_path(self) -> Path:
        if self.cache:
            return self.path(self.cache)
        return self.table_path.with_suffix(".cache.sqlite")

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain data (stored in the table's metadata)."""
        return {
            "name": self.name,
            "seed": self.seed,
            "items": list(self.items),
            "items_per_dataset": self.items_per_dataset,
            "families": list(self.families),
            "n_variants": self.n_variants,
            "shots": self.shots,
            "instruction": self.instruction,
            "perturbations": {k: dict(v) for k, v in self.perturbations.items()},
            "models": [m.to_dict() for m in self.models],
            "table": self.table,
        }


_SECTIONS = {
    "study": (
        "name",
        "seed",
        "items",
        "items_per_dataset",
        "families",
        "n_variants",
        "shots",
        "instruction",
        "conflict",
    ),
    "output": ("table", "cache"),
}
_MODEL_KEYS = tuple(f for f in ModelConfig.__dataclass_fields__ if f != "options")


def _check_keys(where: str, given: Mapping[str, Any], known: Sequence[str], source: str) -> None:
    for key in given:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}."
            raise StudyError(f"{source}: unknown key {key!r} in {where}{hint}")


def _instruction(value: Any, source: str) -> str | None:
    """The study-wide instruction: None (by task kind) or a non-empty text."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise StudyError(f"{source}: [study] instruction must be a non-empty text, got {value!r}.")
    return value.strip()


def load_study(path: str | Path) -> StudyConfig:
    """Read and check a study file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StudyError(f"{path}: no such study file.") from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML ({exc}).") from None
    return study_from_dict(data, source=str(path), base_dir=path.parent.resolve())


def study_from_dict(
    data: Mapping[str, Any], source: str = "study", base_dir: str | Path = "."
) -> StudyConfig:
    """Build a :class:`StudyConfig` from parsed TOML (or any nested dict)."""
    _check_keys("the file", data, ("study", "models", "output", "perturbations"), source)
    study = dict(data.get("study", {}))
    _check_keys("[study]", study, _SECTIONS["study"], source)
    output = dict(data.get("output", {}))
    _check_keys("[output]", output, _SECTIONS["output"], source)
    try:
        families = resolve_families(study.get("families", "all"))
    except ValueError as exc:
        raise StudyError(f"{source}: [study] families: {exc}.") from None
    fam_params = data.get("perturbations", {})
    for fam in fam_params:
        if fam not in families:
            raise StudyError(
                f"{source}: [perturbations.{fam}] names a family the study does not run."
            )
    items = study.get("items", [])
    if isinstance(items, str):
        items = [items]
    models_raw = data.get("models") or [{}]
    if isinstance(models_raw, Mapping):
        models_raw = [models_raw]
    models = []
    for i, m in enumerate(models_raw):
        _check_keys(
            f"[[models]] #{i + 1}",
            {k: v for k, v in m.items() if k != "options"},
            _MODEL_KEYS,
            source,
        )
        if "conflict" in study:  # [study] conflict: the default of every model
            m = {"conflict": study["conflict"], **m}
        models.append(ModelConfig(**m))
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise StudyError(
            f"{source}: two [[models]] share the name "
            f"{next(n for n in names if names.count(n) > 1)!r}; names must differ."
        )
    n_variants, shots, seed, per = (
        study.get(k, d)
        for k, d in (("n_variants", 5), ("shots", 0), ("seed", 0), ("items_per_dataset", 0))
    )
    for key, value in (
        ("n_variants", n_variants),
        ("shots", shots),
        ("seed", seed),
        ("items_per_dataset", per),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise StudyError(f"{source}: [study] {key} must be a whole number >= 0, got {value!r}.")
    name = str(study.get("name", Path(source).stem))
    table = str(output.get("table", f"results/{name}.parquet"))
    if not table.endswith(".parquet"):
        raise StudyError(
            f"{source}: [output] table {table!r} must end in .parquet (the table "
            "keeps its metadata there; run with --csv for a CSV copy)."
        )
    import perturbations  # noqa: F401  (registers the families whose parameters are checked)
    from perturbations.base import REGISTRY

    for fam, params in fam_params.items():
        known = REGISTRY[fam].parameters()
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise StudyError(
                f"{source}: [perturbations.{fam}] has no parameter "
                f"{unknown[0]!r}; it takes {', '.join(sorted(known)) or 'none'}."
            )
    return StudyConfig(
        name=name,
        seed=seed,
        items=tuple(str(p) for p in items),
        items_per_dataset=per,
        families=families,
        n_variants=n_variants,
        shots=shots,
        instruction=_instruction(study.get("instruction"), source),
        perturbations={k: dict(v) for k, v in fam_params.items()},
        models=tuple(models),
        table=table,
        cache=output.get("cache"),
        base_dir=str(base_dir),
    )
