"""Live requests of the tracks: a track's own request (tools, prompts), N runs per sample, token logprobs.

:class:`TrackLiveSource` is the live pipeline (:class:`~pytest_extractbench.live.pipeline.LiveSource`:
requests ahead of items, journal, cache, resume) with three changes: the request comes
from the track (:meth:`Track.build_request`; the extraction request when there is no
track), every sample is asked ``repeats`` times (run ``r`` uses seed ``decoding_seed + r``
and is journalled as ``<sample id>#run<r>``), and ``logprobs`` can be requested. The
session uses it only when one of those is asked for, so plain extraction runs are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..dataset.documents import DocumentError
from ..dataset.responses import ModelResponse
from ..dataset.samples import Sample
from ..live.pipeline import LiveSource, _Request, held_messages, prompt_size
from .base import Track

if TYPE_CHECKING:
    from ..live.client import ExtractionClient


@dataclass
class _TrackRequest(_Request):
    fields: dict[str, Any] = field(default_factory=dict)


def run_id(sample_id: str, run: int) -> str:
    """The id a run is journalled under: the sample id for the first run."""
    return sample_id if run == 0 else f"{sample_id}#run{run}"


class TrackLiveSource(LiveSource):
    """The live pipeline for tracks, repeats and logprobs (implements ``OutputSource`` and ``responses``)."""

    def __init__(
        self, *args: Any, track: Track | None, repeats: int = 1, logprobs: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.track = track
        self.repeats = max(1, repeats)
        self.logprobs = logprobs

    # -- OutputSource -------------------------------------------------------------------------

    def _admissions(self, model: str, sample: Sample) -> list[_Request]:
        # every run of a sample before the next sample, so items find their runs done in order
        found = (self._admit_run(model, sample, run) for run in range(self.repeats))
        return [request for request in found if request is not None]

    def response(self, model: str, sample: Sample) -> ModelResponse:
        return self._result(model, sample, 0)

    def responses(self, model: str, sample: Sample, n: int) -> list[ModelResponse]:
        """The first ``n`` runs of one sample (at most ``repeats``)."""
        return [self._result(model, sample, run) for run in range(min(n, self.repeats))]

    def _result(self, model: str, sample: Sample, run: int) -> ModelResponse:
        pair = (model, run_id(sample.id, run))
        if pair not in self._futures:
            request = self._admit_run(model, sample, run)
            if request is not None:
                self._submit([request])
        return self._futures[pair].result()

    # -- requests -----------------------------------------------------------------------------

    def _admit(self, model: str, sample: Sample) -> _Request | None:
        return self._admit_run(model, sample, 0)

    def request(self, sample: Any, run: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages and request fields of one run of one sample."""
        from ..live.client import structured_output_fields
        from ..live.prompts import sample_messages

        mode = self.live.structured_output
        if self.track is None:
            messages = sample_messages(sample, self.templates)
            fields = structured_output_fields(mode, sample.schema)
        else:
            messages, fields = self.track.build_request(sample)
            if self.track.json_answer:
                fields = {**structured_output_fields(mode, sample.schema), **fields}
        if self.logprobs:
            fields["logprobs"] = True
        if run:
            fields["seed"] = self.live.decoding_seed + run
        return messages, fields

    def _admit_run(self, model: str, sample: Sample, run: int) -> _Request | None:
        """As :meth:`LiveSource._admit`, for one run, with the track's request."""
        from ..live.client import cache_key

        pair = (model, run_id(sample.id, run))
        if pair in self._futures:
            return None
        try:
            messages, fields = self.request(sample, run)
        except DocumentError as exc:  # the document changed or vanished since the dataset was read
            self._unaskable(pair, exc)
            return None
        track = self.track.name if self.track is not None else "extraction"
        key = cache_key(
            model,
            messages,
            {"track": track, "request": fields},
            {**self._params, "run": run},
            self.server_identity(model),
        )
        held, (chars, image_tokens) = held_messages(messages), prompt_size(messages)
        return self._admit_pair(
            pair,
            key,
            lambda future: _TrackRequest(
                model,
                pair[1],
                held,
                sample.schema or {},
                key,
                future,
                rebuild=lambda: self.request(sample, run)[0],
                chars=chars,
                image_tokens=image_tokens,
                fields=fields,
            ),
        )

    async def _send(self, client: ExtractionClient, served_model: str, request: _Request) -> ModelResponse:
        """As :meth:`LiveSource._send`, with the track's request fields through ``ExtractionClient.complete``."""
        fields = request.fields if isinstance(request, _TrackRequest) else {}
        return await client.complete(served_model, request.messages, **fields)
