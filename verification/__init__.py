"""Cross-checks of the algorithms against the oracles and the theorems."""
