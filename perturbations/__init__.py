"""The perturbation library: one module per family, one registry.

>>> from perturbations import FAMILY_ORDER, make_family
>>> make_family("option_order").name
'option_order'
"""

from perturbations import (  # noqa: F401  (each module registers its family)
    formatting,
    framing,
    label_substitution,
    lexical_substitution,
    logical_equivalence,
    option_order,
    paraphrase,
    spelling_noise,
)
from perturbations.base import REGISTRY, Family, make_family, register
from robustness.core.names import FAMILY_ORDER

__all__ = ["FAMILY_ORDER", "REGISTRY", "Family", "make_family", "register"]
