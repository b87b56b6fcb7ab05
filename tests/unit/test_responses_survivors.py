"""A model response's JSON-able form (``dataset/responses.py``): what it copies and what it shares."""

from __future__ import annotations

from pytest_extractbench.dataset.responses import ModelResponse


def test_a_list_field_s_dicts_are_copied_and_its_other_items_kept_as_they_are() -> None:
    call = {"name": "f", "arguments": {"x": 1}}
    response = ModelResponse(content="{}", tool_calls=[call, "not a call"])
    listed = response.as_dict()["tool_calls"]
    # one level deep: the dict is a new dict with the same items, the text is the same text
    assert listed == [call, "not a call"] and listed[0] is not call
    listed[0]["name"] = "g"  # a reader editing the form leaves the response as it was
    assert response.tool_calls == [{"name": "f", "arguments": {"x": 1}}, "not a call"]
