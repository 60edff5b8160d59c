"""The perturbation library: one module per family, one registry."""
