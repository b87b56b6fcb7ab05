"""Outputs of a run: terminal text and machine-readable files."""
