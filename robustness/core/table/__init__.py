"""The long table: one row per model x item x category x variant.

The schema is the contract between the runners that write answers and the analyses that read
them. ``validate`` checks any table, also one made by another tool, and names the exact column,
row and value that is wrong. Parquet files carry the toolkit version and the study configuration
in their metadata; CSV is offered for R users.

This package gathers the table's public names; each job has its own module:
``schema`` (the columns), ``checks`` (validation), ``values`` (conversion of cells) and ``io``
(files).

Examples
--------
>>> from robustness.core.table import COLUMNS, KEY_COLUMNS
>>> COLUMNS["answer"].kind, KEY_COLUMNS[-1]
('int', 'variant_id')
"""

from __future__ import annotations

from robustness.core.errors import TableError  # re-exported: analyses import it here
from robustness.core.table.checked import is_checked
from robustness.core.table.checks import (
    MAX_DEPTH,
    checked_or_validate,
    normalize,
    table_warnings,
    validate,
)
from robustness.core.table.io import read_metadata, read_table, write_csv, write_parquet
from robustness.core.table.schema import (
    ANALYSIS_COLUMNS,
    COLUMNS,
    DATASET_TYPES,
    KEY_COLUMNS,
    METADATA_KEY,
    MODES,
    OPTIONAL_EXTRAS,
    REPEAT_COLUMNS,
    SCALES,
    Column,
)

__all__ = [
    "ANALYSIS_COLUMNS",
    "COLUMNS",
    "DATASET_TYPES",
    "KEY_COLUMNS",
    "MAX_DEPTH",
    "METADATA_KEY",
    "MODES",
    "OPTIONAL_EXTRAS",
    "REPEAT_COLUMNS",
    "SCALES",
    "Column",
    "TableError",
    "checked_or_validate",
    "is_checked",
    "normalize",
    "read_metadata",
    "read_table",
    "table_warnings",
    "validate",
    "write_csv",
    "write_parquet",
]
