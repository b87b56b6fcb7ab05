"""The chat messages of one sample: the system and user prompt templates, filled with the text and schema.

The defaults are the benchmark's own prompts; ``--extractbench-system-prompt`` and
``--extractbench-user-prompt`` replace them with files (``PromptTemplates.from_files``).

With ``--extractbench-input image`` or ``both`` (``PromptTemplates.input``), a sample's document also goes in the
user message as OpenAI image content parts, ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,
..."}}`` after the text part: the shape OpenAI, vLLM and llama-server (multimodal) accept. In ``image`` mode
``{text}`` becomes a line saying the document is attached; in ``both`` it is the document's page text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import userfiles
from ..core.errors import ExtractbenchError
from .dialects import model_schema

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TEMPLATES",
    "DEFAULT_USER_PROMPT",
    "IMAGE_ONLY_TEXT",
    "PromptTemplateError",
    "PromptTemplates",
    "build_messages",
    "sample_messages",
]


DEFAULT_SYSTEM_PROMPT = (
    "You are a precise data extraction assistant. Extract information from the provided text according "
    "to the given JSON schema. Only extract information explicitly stated in the text. If information for "
    "a field is not present, omit the field or use null as appropriate."
)
DEFAULT_USER_PROMPT = (
    "Text:\n{text}\n\nExtract information according to this JSON schema:\n{schema}\n\n"
    "Output valid JSON matching the schema exactly."
)
_PLACEHOLDERS = ("{text}", "{schema}")
IMAGE_ONLY_TEXT = "(The document is attached as {count} image(s), one per page, in order.)"


class PromptTemplateError(ExtractbenchError, ValueError):
    """A prompt template file is unreadable or lacks a placeholder; the message names the file."""


@dataclass(frozen=True)
class PromptTemplates:
    """The system and user templates. ``{text}`` and ``{schema}`` are replaced; any other
    brace stays as written, so templates may show JSON examples. ``{text}`` must be in the user
    template and ``{schema}`` in either; an empty system template sends no system message."""

    system: str = DEFAULT_SYSTEM_PROMPT
    user: str = DEFAULT_USER_PROMPT
    system_source: str | None = field(default=None, compare=False)  # file names, for error messages
    user_source: str | None = field(default=None, compare=False)
    input: str = "text"  # what a model gets of a sample's document: "text", "image" (page images) or "both"

    def __post_init__(self) -> None:
        user = self.user_source or "the user prompt template"
        if "{text}" not in self.user:
            raise PromptTemplateError(f"{user} lacks the {{text}} placeholder where the document goes")
        if "{schema}" not in self.user and "{schema}" not in self.system:
            where = user if self.system_source is None else f"{user} (nor {self.system_source})"
            raise PromptTemplateError(f"{where} lacks the {{schema}} placeholder where the JSON schema goes")

    @classmethod
    def from_files(
        cls, system_path: str | os.PathLike[str] | None = None, user_path: str | os.PathLike[str] | None = None
    ) -> PromptTemplates:
        """Templates read from UTF-8 files; a path left out keeps the default."""
        system, system_source = _read_template(system_path, "system", DEFAULT_SYSTEM_PROMPT)
        user, user_source = _read_template(user_path, "user", DEFAULT_USER_PROMPT)
        return cls(system, user, system_source, user_source)

    def render(self, text: str, schema: Any) -> list[dict[str, str]]:
        """The chat messages for one document and schema."""
        values = {"{text}": text, "{schema}": json.dumps(model_schema(schema), indent=2, ensure_ascii=False)}
        messages = []
        system = _fill(self.system, values)
        if system.strip():
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": _fill(self.user, values)})
        return messages


DEFAULT_TEMPLATES = PromptTemplates()


def _read_template(path: str | os.PathLike[str] | None, role: str, default: str) -> tuple[str, str | None]:
    if path is None:
        return default, None
    where = f"{role} prompt template {os.fspath(path)}"
    try:
        text = userfiles.read_text(path, userfiles.TEXT_LIMIT)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PromptTemplateError(f"cannot read the {where}: {reason}") from None
    return text.rstrip("\r\n"), where


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Replace placeholders in one pass, so a document that contains "{schema}" stays as it is."""
    out, i = [], 0
    while i < len(template):
        for key, value in values.items():
            if template.startswith(key, i):
                out.append(value)
                i += len(key)
                break
        else:
            j = template.find("{", i + 1)
            j = len(template) if j < 0 else j
            out.append(template[i:j])
            i = j
    return "".join(out)


def build_messages(text: str, schema: Any, templates: PromptTemplates = DEFAULT_TEMPLATES) -> list[dict[str, str]]:
    """The chat messages that ask for `schema` to be filled from `text`."""
    return templates.render(text, schema)


def sample_messages(sample: Any, templates: PromptTemplates = DEFAULT_TEMPLATES) -> list[dict[str, Any]]:
    """The chat messages of one sample: its text, and its document's images when ``templates.input`` asks for them.

    Raises ``DocumentError`` when the document cannot be rendered (checked when the dataset was loaded)."""
    document = getattr(sample, "document", None)
    if templates.input == "text" or document is None:
        return list(templates.render(sample.text, sample.schema))
    from ..dataset.documents import data_url

    images = document.images()
    text = sample.text if templates.input == "both" else IMAGE_ONLY_TEXT.format(count=len(images))
    messages: list[dict[str, Any]] = list(templates.render(text, sample.schema))
    parts: list[dict[str, Any]] = [{"type": "text", "text": messages[-1]["content"]}]
    parts += [{"type": "image_url", "image_url": {"url": data_url(mime, data)}} for mime, data in images]
    messages[-1] = {"role": "user", "content": parts}
    return messages
