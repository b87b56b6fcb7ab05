"""One family of errors: every exception the package defines derives from :class:`ExtractbenchError`.

``except ExtractbenchError`` catches anything the package raises on purpose. Each class keeps the builtin
base its callers already catch (``ValueError``, ``RuntimeError``, ``OSError``, ``LookupError``), so both
spellings work. The tree, by layer::

    ExtractbenchError
    ├── UsageProblem               the run cannot start or go on as asked: an option, a file, no model
    │   └── RunDirError            a run directory that cannot be made or locked (core/rundir.py)
    │       └── RunDocError        a run document (metrics.json, samples.jsonl, a baseline, a cassette, a
    │           │                  journal) that cannot be read, or of a format version this release does not read (core/rundoc.py)
    │           └── BaselineError  no stored baseline by the name or number asked for (gating/baseline.py)
    ├── ExtractbenchWarning        (UserWarning) a dataset or predictions problem that did not stop the run
    ├── JsonInputError             (ValueError) a JSON or JSONL input past its limits or not JSON (core/jsonio.py)
    ├── YamlLimitError             (yaml.MarkedYAMLError) a YAML document past its limits (core/yamlio.py)
    ├── NotAFile                   (OSError) a path that is a FIFO, device or directory (core/userfiles.py)
    ├── OutputWriteError           a report or run file that cannot be written (core/files.py)
    ├── scoring: EvalSchemaError (ValueError), EvalSchemaWarning (UserWarning), PatternError (ValueError),
    │   ComparatorError, NoBackendsError (RuntimeError)
    ├── dataset: DatasetSourceError, DocumentError (ValueError) a row's PDF or image that cannot be used,
    │   DatasetChangedError a JSONL dataset's line no longer what was loaded (dataset/rowfile.py)
    ├── live: BackendError (RuntimeError) > EmbeddedServerError > MissingExtraError, ModelNotFoundError
    │   (LookupError), ServerStartError; ConnectionCheckError (RuntimeError), PromptTemplateError (ValueError),
    │   GGUFError (ValueError), JudgeError (RuntimeError), EmbeddingError (RuntimeError),
    │   RemoteAnswerError (ValueError)
    ├── gating: SubsetConfigError (ValueError)
    ├── run: UnknownMetric (KeyError) a name RunResult.metric() does not know
    ├── tracks: BreakageError (ValueError)
    ├── config: ConfigError
    └── plugin: SampleFailure (an item's failure as pytest shows it)

One exception stays outside on purpose: ``scoring.budget.ScoringTimeout`` derives from ``BaseException``
only, so that no ``except Exception`` in a comparator can swallow the scoring deadline.
``tests/unit/test_errors.py`` checks that every other exception class derives from :class:`ExtractbenchError`.
"""

from __future__ import annotations

__all__ = ["ExtractbenchError", "ExtractbenchWarning", "UsageProblem"]


class ExtractbenchError(Exception):
    """The base of every exception pytest-extractbench defines (see the tree above)."""


class UsageProblem(ExtractbenchError):
    """The run was asked for something it cannot do: a bad option, a missing file, no model.

    Its message is for the user as it is (it names the option, file or sample); the pytest adapter shows it
    as a usage error, :func:`pytest_extractbench.evaluate` lets it propagate."""


class ExtractbenchWarning(ExtractbenchError, UserWarning):
    """A problem with the dataset or predictions that did not stop the run."""
