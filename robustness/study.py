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
    budget = 1.0              # < 1: ask that fraction of the prompts (robustness.budget)

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

Item files that need a column mapping (the keys of :func:`robustness.load_items`) are given as
``[[items]]`` tables, which may stand beside ``[study] items`` (both are read by
:mod:`robustness.study_items`)::

    [[items]]
    path = "items/survey.csv"
    mapping = { question = "statement", options = ["o1", "o2", "o3", "o4", "o5"] }
    dataset = "survey"            # optional defaults for records that do not say
    dataset_type = "subjective"
    split = "train"               # a saved DatasetDict's split

Every value is checked for its type and range when the file is read (``n_variants`` at most
:data:`MAX_VARIANTS`, family parameters of the type of their defaults), so a wrong value stops
the load with one sentence naming the section, the key and the value.

Relative paths are resolved against the study file's folder.  A key that is not
known stops the load with one sentence naming the section and the closest known
key, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robustness.budget import check_budget
from robustness.core.answer_parser import CONFLICT_POLICIES
from robustness.core.errors import StudyError
from robustness.core.names import BACKENDS, CHAT_MODES, DTYPES, MODES
from robustness.core.text_safety import shown
from robustness.perturb import MAX_VARIANTS as PERTURB_MAX_VARIANTS
from robustness.perturb import resolve_families
from robustness.study_checks import (
    MAX_INT,
    as_table,
    as_text,
    as_whole,
    check_keys,
    check_parameter,
)
from robustness.study_items import ItemSource, item_sources, load_study_items

__all__ = [
    "CHAT",
    "MAX_SHOTS",
    "MAX_VARIANTS",
    "ItemSource",
    "ModelConfig",
    "StudyConfig",
    "load_study",
    "load_study_items",
    "model",
    "study_from_dict",
]

CHAT = CHAT_MODES
#: Most variants per family and item: more is never a robustness study, and every variant
#: costs model time (a family stops early when it runs out of distinct variants anyway).
MAX_VARIANTS = PERTURB_MAX_VARIANTS
#: Most few-shot exemplars per prompt.
MAX_SHOTS = 64


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
        name = as_text(self.name, "model name")
        if not name.strip():
            raise StudyError("a model name must not be empty.")
        where = f"model {shown(name)}"
        for key, allowed in (("backend", BACKENDS), ("mode", MODES), ("dtype", DTYPES)):
            as_text(getattr(self, key), where, allowed, key)
        for key in ("model", "device"):
            as_text(getattr(self, key), where, what=key)
        as_whole(self.batch_size, f"{where}: batch_size", 1, 1 << 16)
        as_whole(self.max_new_tokens, f"{where}: max_new_tokens", 1, 1 << 20)
        if not isinstance(self.chat, bool):
            as_text(self.chat, where, CHAT, "chat")
        as_table(self.options, f"{where}: options")
        if self.offline is not None and not isinstance(self.offline, bool):
            raise StudyError(
                f"model {self.name!r}: offline must be true or false, got {self.offline!r}."
            )
        if self.conflict not in CONFLICT_POLICIES:
            raise StudyError(
                f"model {self.name!r}: unknown conflict policy {self.conflict!r}; use one of "
                f"{', '.join(CONFLICT_POLICIES)}."
            )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["options"] = dict(self.options)
        return out


def model(model: str = "embedded", **kwargs: Any) -> ModelConfig:
    """A model for :func:`robustness.run`: ``rb.model("embedded", mode="choice")``.

    ``kwargs`` are :class:`ModelConfig` fields, e.g. ``rb.model("org/name", offline=True)``
    to use only files already on disk (``offline`` unset follows ``HF_HUB_OFFLINE``).
    """
    as_text(model, "model", what="path or id")
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
    #: Every item source with its mapping (``items`` lists their paths); empty: the paths of
    #: ``items`` read without a mapping.
    item_sources: tuple[ItemSource, ...] = ()
    #: The fraction of the (variant, item) prompts a run asks (robustness.budget); 1: all.
    budget: float = 1.0

    @property
    def sources(self) -> tuple[ItemSource, ...]:
        """The item sources, one per path of ``items``."""
        return self.item_sources or tuple(ItemSource(p) for p in self.items)

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
            "items": [
                src.path if src == ItemSource(src.path) else src.to_dict() for src in self.sources
            ],
            "items_per_dataset": self.items_per_dataset,
            "families": list(self.families),
            "n_variants": self.n_variants,
            "shots": self.shots,
            "instruction": self.instruction,
            "perturbations": {k: dict(v) for k, v in self.perturbations.items()},
            "models": [m.to_dict() for m in self.models],
            "table": self.table,
            "budget": self.budget,
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
        "budget",
    ),
    "output": ("table", "cache"),
}
_MODEL_KEYS = tuple(f for f in ModelConfig.__dataclass_fields__ if f != "options")


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
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise StudyError(f"{path}: no such study file.") from None
    except IsADirectoryError:
        raise StudyError(f"{path}: is a folder, not a study file.") from None
    except OSError as exc:
        raise StudyError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError as exc:
        raise StudyError(
            f"{path}: byte {exc.start + 1} is not valid UTF-8; save the study file as UTF-8."
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML ({exc}).") from None
    except (RecursionError, ValueError):  # arrays nested too deeply, numbers too long
        raise StudyError(
            f"{path}: not valid TOML (a value is nested too deeply or a number is too long)."
        ) from None
    return study_from_dict(data, source=str(path), base_dir=path.parent.resolve())


def _check_family_parameters(fam_params: Mapping[str, Any], source: str) -> None:
    """Raise :class:`StudyError` for a family parameter the family does not take or a bad value."""
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
        for key, value in params.items():
            check_parameter(f"{source}: [perturbations.{fam}] {key}", key, value, known[key])


def study_from_dict(
    data: Mapping[str, Any], source: str = "study", base_dir: str | Path = "."
) -> StudyConfig:
    """Build a :class:`StudyConfig` from parsed TOML (or any nested dict)."""
    as_table(data, source)
    check_keys("the file", data, ("study", "models", "output", "perturbations", "items"), source)
    study = dict(as_table(data.get("study", {}), f"{source}: [study]"))
    check_keys("[study]", study, _SECTIONS["study"], source)
    output = dict(as_table(data.get("output", {}), f"{source}: [output]"))
    check_keys("[output]", output, _SECTIONS["output"], source)
    raw_families = study.get("families", "all")
    if not isinstance(raw_families, str) and not (
        isinstance(raw_families, list) and all(isinstance(f, str) for f in raw_families)
    ):
        raise StudyError(
            f'{source}: [study] families must be "all", a comma-separated text or a list of '
            f"names, got {shown(raw_families)}."
        )
    try:
        families = resolve_families(raw_families)
    except ValueError as exc:
        raise StudyError(f"{source}: [study] families: {exc}.") from None
    fam_params = as_table(data.get("perturbations", {}), f"{source}: [perturbations]")
    for fam, params in fam_params.items():
        if fam not in families:
            raise StudyError(
                f"{source}: [perturbations.{fam}] names a family the study does not run."
            )
        as_table(params, f"{source}: [perturbations.{fam}]")
    sources = item_sources(study.get("items", []), data.get("items", []), source)
    models_raw = data.get("models") or [{}]
    if isinstance(models_raw, Mapping):
        models_raw = [models_raw]
    if not isinstance(models_raw, list):
        raise StudyError(f"{source}: [[models]] must be tables, got {shown(models_raw)}.")
    models = []
    for i, m in enumerate(models_raw):
        m = as_table(m, f"{source}: [[models]] #{i + 1}")
        check_keys(
            f"[[models]] #{i + 1}",
            {k: v for k, v in m.items() if k != "options"},
            _MODEL_KEYS,
            source,
        )
        if "conflict" in study:  # [study] conflict: the default of every model
            m = {"conflict": study["conflict"], **m}
        try:
            models.append(ModelConfig(**m))
        except StudyError as exc:
            raise StudyError(f"{source}: [[models]] #{i + 1}: {exc}") from None
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
    for key, value, high in (
        ("n_variants", n_variants, MAX_VARIANTS),
        ("shots", shots, MAX_SHOTS),
        ("seed", seed, MAX_INT),
        ("items_per_dataset", per, MAX_INT),
    ):
        as_whole(value, f"{source}: [study] {key}", 0, high)
    name = as_text(study.get("name", Path(source).stem), f"{source}: [study] name")
    table = as_text(output.get("table", f"results/{name}.parquet"), f"{source}: [output] table")
    cache = output.get("cache")
    if cache is not None:
        as_text(cache, f"{source}: [output] cache")
    if not table.endswith(".parquet"):
        raise StudyError(
            f"{source}: [output] table {table!r} must end in .parquet (the table "
            "keeps its metadata there; run with --csv for a CSV copy)."
        )
    _check_family_parameters(fam_params, source)
    return StudyConfig(
        name=name,
        seed=seed,
        items=tuple(src.path for src in sources),
        item_sources=sources,
        items_per_dataset=per,
        families=families,
        n_variants=n_variants,
        shots=shots,
        instruction=_instruction(study.get("instruction"), source),
        perturbations={k: dict(v) for k, v in fam_params.items()},
        models=tuple(models),
        table=table,
        cache=cache,
        base_dir=str(base_dir),
        budget=check_budget(study.get("budget", 1.0), f"{source}: [study] budget"),
    )
