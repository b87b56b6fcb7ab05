"""The request layer against the real embedded llama-server (gemma3-270m, the session's shared one), no mocks.

Needs the `local` extra; without it the tests skip with the install command, except under CI
(CI=true), where a missing extra is a failure.
"""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest

from pytest_extractbench.dataset import BUNDLED, Sample, load_dataset
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.live.backends.llama_process import EmbeddedServer
from pytest_extractbench.live.client import (
    ClientConfig,
    ConnectionCheckError,
    ExtractionClient,
    build_messages,
    model_schema,
    run_check,
)

pytestmark = pytest.mark.llm


@pytest.fixture(scope="module")
def server(gemma_server: EmbeddedServer) -> EmbeddedServer:
    """Plumbing, not quality: the fast model's server, shared with the other integration tests."""
    return gemma_server


@pytest.fixture(scope="module")
def sample() -> Sample:
    """The bundled dataset's first worked example (appendix-a-1)."""
    samples = {s.id: s for s in load_dataset(BUNDLED).samples}
    return samples["appendix-a-1"]


def test_check_sees_the_embedded_model(server: EmbeddedServer) -> None:
    config = ClientConfig(server.base_url)
    assert run_check(config, [server.model]) == [server.model]
    with pytest.raises(ConnectionCheckError, match=f"it serves: {server.model}$"):
        run_check(config, ["not-a-model"])


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
def test_extract_returns_schema_valid_json(server: EmbeddedServer, sample: Sample, mode: str) -> None:
    config = ClientConfig(server.base_url, structured_output=mode, max_tokens=512, timeout_s=300)

    async def go() -> ModelResponse:
        async with ExtractionClient(config) as client:
            return await client.extract(server.model, build_messages(sample.text, sample.schema), sample.schema)

    response = asyncio.run(go())
    assert response.ok, (response.error_class, response.error)
    assert response.finish_reason == "stop" and response.attempts == 1
    assert response.usage["prompt_tokens"] > 0 and response.usage["completion_tokens"] > 0
    parsed = json.loads(response.content)
    jsonschema.validate(parsed, model_schema(sample.schema))
    assert parsed, "the grammar allows {} but the model should extract something"
