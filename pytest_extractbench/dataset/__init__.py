"""Inputs of a run: samples and where they come from, recorded predictions, and the per-sample values
(model responses, scored records) that flow from them."""

from .samples import BUNDLED, Dataset, DatasetProblem, Sample, subsample
from .sources import load_dataset

__all__ = ["BUNDLED", "Dataset", "DatasetProblem", "Sample", "load_dataset", "subsample"]
