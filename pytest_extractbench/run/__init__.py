"""One benchmark run as a library: no pytest in it.

A :class:`~.context.RunContext` holds what a run reads (settings, run directory, dataset, models,
problems, baseline) and where its answers come from (recorded predictions, a replayed journal, a live
server, or a Python callable). :mod:`.items` scores one (model, sample); :mod:`.finish` turns the records
into aggregates, gate verdicts, metrics.json, samples.jsonl and the reports, and returns a
:class:`~.result.RunResult`. :func:`.api.evaluate` drives all of it in-process; the pytest plugin drives the
same objects from its hooks, one test item per (model, sample).
"""
