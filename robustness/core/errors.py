"""Exceptions raised on bad input: each carries one sentence naming what and where."""

from __future__ import annotations


class RobustnessError(Exception):
    """Base class for every error the toolkit raises on purpose."""


class ItemError(RobustnessError, ValueError):
    """A malformed item file: the message names the file, the line and the field."""


class TableError(RobustnessError, ValueError):
    """A long table that breaks the schema: the message names the column and the value."""


class StudyError(RobustnessError, ValueError):
    """A study file or study configuration that cannot run."""


class ModelError(RobustnessError, RuntimeError):
    """A model that cannot be loaded or called as configured."""


class AnalysisError(RobustnessError, ValueError):
    """An analysis asked for what it cannot compute: a bad argument or a degenerate input."""
