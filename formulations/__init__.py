"""CVXPY ground-truth oracles for max-margin problems."""
