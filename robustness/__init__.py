"""robustness: prompt-robustness studies of language models, and their statistics."""

from __future__ import annotations

__version__ = "0.1.0"
