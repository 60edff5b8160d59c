"""Run a study: items -> variants -> every model -> one long table on disk.

``run`` asks models a list of variants and returns the table; ``run_study``
does the whole study of a :class:`~robustness.study.StudyConfig` and writes the
Parquet table with the toolkit version and the study configuration in its
metadata.  Every model call goes through the SQLite cache, which stores each
batch as it completes: a run killed at any point and started again gives the
complete table with no row lost and none duplicated, and a repeated run makes
no model call at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from robustness.answers import Progress, answer_rows, prompt_for, rows_to_table
from robustness.budget import select_budget
from robustness.core.errors import StudyError
from robustness.core.items import Item, per_dataset
from robustness.core.prompts import Exemplar, PromptSpec, default_spec
from robustness.core.seeding import family_rng
from robustness.core.table import ANALYSIS_COLUMNS, validate, write_csv, write_parquet
from robustness.core.variants import Variant
from robustness.executors import Executor, Local, Ray
from robustness.perturb import perturb
from robustness.progress import auto_progress
from robustness.runners.base import Prompt, Runner
from robustness.study import ModelConfig, StudyConfig, load_study_items


def exemplars_for(
    items: Sequence[Item], shots: int, seed: int, pool: Sequence[Item] | None = None
) -> dict[tuple[str, str], PromptSpec]:
    """Base specs with ``shots`` solved exemplars for each objective item.

    Exemplars are drawn, with a generator seeded from (seed, item), from ``pool``
    (default: ``items``): the other items of the same dataset with the same number
    of options, never the item itself.  A study draws from every item of its files,
    so with ``items_per_dataset`` the items left out are the held-out pool.
    Subjective items have no gold answer to show and get no exemplars.
    """
    if shots <= 0:
        return {}
    pools: dict[tuple[str, int], list[Item]] = {}
    for item in pool if pool is not None else items:
        if item.answer is not None:
            pools.setdefault((item.dataset, item.n_options), []).append(item)
    out: dict[tuple[str, str], PromptSpec] = {}
    for item in items:
        if item.answer is None:
            continue
        pool = [o for o in pools.get((item.dataset, item.n_options), []) if o.key != item.key]
        if not pool:
            continue
        rng = family_rng(seed, item, "shots")
        picks = rng.choice(len(pool), size=min(shots, len(pool)), replace=False)
        exemplars = [
            Exemplar(pool[int(i)].question, pool[int(i)].options, int(pool[int(i)].answer))
            for i in picks
        ]  # type: ignore[arg-type]
        out[item.key] = default_spec(item, exemplars)
    return out


def uses_chat(runner: Runner) -> bool:
    """Whether prompts should go to ``runner`` as chat messages (its ``uses_chat``)."""
    return bool(runner.uses_chat)


def run(
    variants: Sequence[Variant],
    models: Sequence[ModelConfig] = (ModelConfig(),),
    *,
    cache: str | Path | None = None,
    study: str = "study",
    seed: int = 0,
    progress: Progress | None = None,
    runners: Mapping[str, Runner] | None = None,
    noise_floor: int = 0,
    info: dict[str, Any] | None = None,
    executor: Executor | None = None,
    budget: float = 1.0,
) -> pd.DataFrame:
    """Ask every model every variant; return the long table (one row per model x variant).

    Parameters
    ----------
    variants
        From :func:`robustness.perturb`.
    models
        Model configs (:func:`robustness.model`).
    cache
        SQLite file: answers found there are reused and new ones stored as each batch
        completes, so an interrupted run resumes where it stopped. None: an in-memory cache
        for this call only.
    progress
        ``progress(model_name, done, total)`` after each batch. None: a progress bar on
        standard error when it is interactive (a terminal, Jupyter), nothing otherwise.
    runners
        Ready runners by model name (tests, or a model already in memory); the caller keeps
        them (they are not closed).
    noise_floor
        With ``K > 0``, re-score K sampled prompts of each choice-mode model alone and in
        shuffled batches, bypassing the cache (see ``robustness.runners.noise``).
    info
        A dict that receives, per model name, the runner's identity (dtype, batch size,
        device ...), whether it got chat messages, the cache's hit/miss counts, the noise
        floor, and for Ray the shard counts.
    executor
        Where each model's runner lives: :class:`~robustness.executors.Local` (default, this
        process) or :class:`~robustness.executors.Ray` (sharded over Ray workers; the same
        table).
    budget
        The fraction of the prompts to ask (``0 < budget <= 1``; 1: all): every item's original
        and a seeded, stratified sample of the other cells that sees every variant
        (:mod:`robustness.budget`, seeded by ``seed``; a larger budget asks a superset). Every
        model is asked the same cells; the design goes into ``table.attrs["budget"]``.

    Returns
    -------
    pandas.DataFrame
        The long table (``robustness.core.table``): one row per model x asked variant, in model
        then variant order.

    Examples
    --------
    Not run by the doctests (it loads the embedded model; ``tests/test_run.py`` runs it):

    >>> import robustness as rb  # doctest: +SKIP
    >>> vs = rb.perturb(rb.demo_items()[:3], families="option_order", n=2)  # doctest: +SKIP
    >>> models = [rb.model("embedded", mode="choice")]  # doctest: +SKIP
    >>> table = rb.run(vs, models, cache="runs.sqlite")  # doctest: +SKIP
    """
    from robustness.core.cache import Cache
    from robustness.runners.cached import MemoryCache

    design = None
    if budget != 1:
        variants, design = select_budget(variants, budget, seed)
    executor = executor if executor is not None else Local()
    store: Cache | MemoryCache = Cache(cache) if cache is not None else MemoryCache()
    rows: list[dict[str, Any]] = []
    try:
        with executor.session(), auto_progress(progress) as report:
            for model in models:
                given = (runners or {}).get(model.name)
                runner = given if given is not None else executor.open(model)
                try:
                    rows.extend(
                        _ask_model(
                            runner,
                            store,
                            variants,
                            model,
                            executor=executor,
                            study=study,
                            seed=seed,
                            progress=report,
                            noise_floor=noise_floor,
                            info=info,
                        )
                    )
                finally:
                    if given is None:
                        runner.close()
    finally:
        store.close()
    table = rows_to_table(rows)
    if design is not None:
        table.attrs["budget"] = design
    return table


def _ask_model(
    runner: Runner,
    store: Any,
    variants: Sequence[Variant],
    model: ModelConfig,
    *,
    executor: Executor,
    study: str,
    seed: int,
    progress: Progress | None,
    noise_floor: int,
    info: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """One model's rows, through the cache; fills ``info[model.name]``."""
    from robustness.runners.cached import CachedRunner

    asked = CachedRunner(runner, store)
    chat = uses_chat(runner)
    rows = answer_rows(asked, variants, model, study=study, seed=seed, chat=chat, progress=progress)
    if info is not None:
        entry = info.setdefault(model.name, {})
        entry["runner"] = runner.identity()
        entry["chat"] = chat
        entry["cache"] = asdict(asked.stats)
        where = executor.describe(runner)
        if where is not None:
            entry["ray"] = where
        if noise_floor and model.mode == "choice":
            prompts, labels = noise_inputs(variants, chat)
            entry["noise_floor"] = executor.noise_floor(
                runner, prompts, labels, noise_floor, noise_rng(seed)
            )
    return rows


def noise_inputs(variants: Sequence[Variant], chat: bool) -> tuple[list[Prompt], list[list[str]]]:
    """The prompts and label sets of ``variants``, as the noise floor re-scores them."""
    return [prompt_for(v, chat) for v in variants], [list(v.spec.labels) for v in variants]


def noise_rng(seed: int) -> np.random.Generator:
    """The noise floor's generator: its own stream of the study seed."""
    return np.random.default_rng(np.random.SeedSequence([seed, 0x4E4F4953]))


def all_study_items(config: StudyConfig) -> list[Item]:
    """Every item of the study's files (the bundled demo items when it names none)."""
    return load_study_items(config)


def study_items(
    config: StudyConfig, limit: int | None = None, pool: Sequence[Item] | None = None
) -> list[Item]:
    """The items the study asks: ``items_per_dataset`` of each dataset, then the first ``limit``."""
    items = per_dataset(
        pool if pool is not None else all_study_items(config), config.items_per_dataset
    )
    return items[:limit] if limit else items


def study_variants(
    config: StudyConfig, items: Sequence[Item], pool: Sequence[Item] | None = None
) -> list[Variant]:
    """Every variant of the study's items, with exemplars from ``pool`` when ``shots > 0``
    and the study's single instruction, when it sets one, in every base prompt."""
    base = exemplars_for(items, config.shots, config.seed, pool=pool)
    if config.instruction:
        base = {
            item.key: (base.get(item.key) or default_spec(item)).with_(
                instruction=config.instruction
            )
            for item in items
        }
    return perturb(
        items,
        families=config.families,
        n=config.n_variants,
        seed=config.seed,
        options=config.perturbations,
        base=base,
    )


def option_order_schedule(config: StudyConfig) -> dict[str, Any]:
    """The option-order schedule the study used, for the table's metadata and the report."""
    from perturbations.base import make_family
    from perturbations.option_order import SCHEDULE_TEXT

    params = make_family("option_order", **config.perturbations.get("option_order", {})).params
    text = SCHEDULE_TEXT[params["schedule"]]
    if not params["shuffle_ordinal"]:
        text += "; ordinal scales reversed only"
    return {**params, "description": text}


def resolve_model_paths(config: StudyConfig) -> StudyConfig:
    """Model paths relative to the study file become absolute; a missing path stops the run.

    Names that are not paths (``embedded``, a model id in the local Hugging Face cache)
    are left as they are.
    """
    models = []
    for m in config.models:
        if m.backend in ("hf", "vllm") and m.model != "embedded":
            local = config.path(m.model)
            path_like = m.model.startswith((".", "/", "~")) or m.model.count("/") > 1
            if local.exists():
                m = replace(m, model=str(local))
            elif path_like:
                raise StudyError(
                    f"model {m.name!r}: model path {m.model!r} does not exist "
                    f"(relative paths are read from {config.base_dir})."
                )
        models.append(m)
    return replace(config, models=tuple(models))


def run_study(
    config: StudyConfig,
    *,
    limit: int | None = None,
    resume: bool = True,
    noise_floor: int = 0,
    progress: Progress | None = None,
    runners: Mapping[str, Any] | None = None,
    csv: bool = False,
    items: Sequence[Item] | None = None,
    ray: str | None = None,
    workers: int = 2,
    budget: float | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run a whole study and write its table; return the table and its metadata.

    ``resume=False`` starts from an empty cache (the old cache file is removed);
    ``items`` replaces the study's item files (the demo passes a subset).  ``ray``
    (``"local"``, ``"auto"`` or a cluster address) shards the variants over ``workers``
    Ray workers per model (:class:`robustness.executors.Ray`); the table is the same.
    ``budget`` (default: the study's ``budget``) asks that fraction of the prompts
    (:func:`run`); the design goes into the table's metadata (``budget``).
    """
    import robustness

    config = resolve_model_paths(config)
    pool = all_study_items(config) if items is None else list(items)
    items = study_items(config, limit, pool) if items is None else pool
    if not items:
        raise StudyError(
            f"study {config.name!r} has no items to ask (check its item files, "
            "items_per_dataset and --limit)."
        )
    variants = study_variants(config, items, pool)
    fraction = config.budget if budget is None else budget
    design = None
    if fraction != 1:
        design = select_budget(variants, fraction, config.seed, "--budget")[1]
    if not resume:
        for suffix in ("", "-wal", "-shm"):
            Path(str(config.cache_path) + suffix).unlink(missing_ok=True)
    config.cache_path.parent.mkdir(parents=True, exist_ok=True)
    info: dict[str, Any] = {}
    executor: Executor = Local()
    if ray is not None:
        executor = Ray(address=None if ray == "local" else ray, workers=workers)
    table = run(
        variants,
        config.models,
        cache=config.cache_path,
        study=config.name,
        seed=config.seed,
        progress=progress,
        runners=runners,
        noise_floor=noise_floor,
        info=info,
        executor=executor,
        budget=fraction,
    )
    meta: dict[str, Any] = {
        "toolkit": "robustness",
        "version": robustness.__version__,
        "study": config.to_dict(),
        "n_items": len(items),
        "n_variants": design["n_asked"] if design else len(variants),
        "limit": limit,
        "ray": {"address": ray, "workers": workers} if ray is not None else None,
        "models": info,
        "budget": design,
    }
    if any(v.category == "option_order" for v in variants):
        meta["option_order"] = option_order_schedule(config)
    checked = validate(table, ANALYSIS_COLUMNS)  # once: write_parquet and analyze take it as is
    write_parquet(checked, config.table_path, meta)
    if csv:
        write_csv(table, config.table_path.with_suffix(".csv"))
    return checked, meta
