"""Prompts as token ids, for the backends that hold a Hugging Face tokenizer (hf and vllm).

Everything that decides *what* a local model is asked is here, once, so that the transformers
and the vLLM backends see identical inputs: the chat setting, rendering a prompt through the
model's chat template (or joining its messages), tokenising it with the checks on length, and
the label plan (``label_trie.py``) cached per label set.

A runner mixes :class:`PromptEncoding` in and calls :meth:`PromptEncoding.setup_encoding` from
its constructor with its tokenizer, chat setting, model id and maximum length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robustness.core.errors import ModelError
from robustness.runners.base import (
    Prompt,
    canonical_prompt,
    chat_mode,
    check_label_sets,
    check_labels,
)
from robustness.runners.label_trie import LabelPlan, build_label_plan

__all__ = ["PromptEncoding"]


class PromptEncoding:
    """Rendering and tokenising prompts, and label plans, for a runner with a tokenizer."""

    tokenizer: Any
    chat: str
    has_chat_template: bool
    max_length: int | None
    _plans: dict[tuple[str, ...], LabelPlan]

    #: What the length limit is called, for the too-long message.
    length_setting = "maximum length"

    def setup_encoding(
        self, tokenizer: Any, chat: str | bool, model_id: str, max_length: int | None
    ) -> None:
        """Set the tokenizer, the chat setting and the length limit (``None``: no limit);
        raises ModelError for an unknown chat setting or ``"always"`` without a template."""
        self.tokenizer = tokenizer
        self.chat = chat_mode(chat)
        self.has_chat_template = bool(getattr(tokenizer, "chat_template", None))
        if self.chat == "always" and not self.has_chat_template:
            raise ModelError(f"chat='always' was requested but {model_id} has no chat template.")
        self.max_length = max_length
        self._length_owner = model_id
        self._plans = {}

    @property
    def uses_chat(self) -> bool:
        """Whether prompts should be chat messages: the model has a template, chat not off."""
        return self.has_chat_template and self.chat != "never"

    def render(self, prompt: Prompt) -> tuple[str, bool]:
        """The prompt as the text the model sees, and whether special tokens must be added
        when tokenising it (False when a chat template already wrote them).

        Messages go through the chat template when the model has one and chat is not
        ``"never"``; otherwise their contents are joined by blank lines. Text goes through the
        template as one user message only with ``chat="always"``.
        """
        data = canonical_prompt(prompt)
        if isinstance(data, str):
            if self.chat == "always":
                data = [{"role": "user", "content": data}]
            else:
                return data, True
        if not self.uses_chat:
            return "\n\n".join(m["content"] for m in data), True
        text = self.tokenizer.apply_chat_template(data, tokenize=False, add_generation_prompt=True)
        return str(text), False

    def encode_prompts(self, prompts: Sequence[Prompt]) -> list[list[int]]:
        """Token ids of each prompt as the model sees it; raises ModelError naming an empty or
        too long prompt."""
        rendered = [self.render(p) for p in prompts]
        ids: list[list[int]] = [[] for _ in prompts]
        for special in (True, False):
            positions = [i for i, (_, s) in enumerate(rendered) if s is special]
            if positions:
                encoded = self.tokenizer(
                    [rendered[i][0] for i in positions], add_special_tokens=special
                )["input_ids"]
                for i, row in zip(positions, encoded, strict=True):
                    ids[i] = list(row)
        for i, row in enumerate(ids):
            if not row:
                raise ModelError(f"prompt {i} is empty after tokenisation.")
            if self.max_length is not None and len(row) > self.max_length:
                raise ModelError(
                    f"prompt {i} has {len(row)} tokens, more than the model's "
                    f"{self.max_length} ({self.length_setting} of {self._length_owner!r})."
                )
        return ids

    def encode_label_sets(
        self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]
    ) -> tuple[list[LabelPlan], list[list[int]]]:
        """For ``score_options``: the plan of each prompt's checked label set, and the prompts'
        token ids; raises ModelError naming a bad label set or prompt."""
        check_label_sets(prompts, labels, "score_options")
        plans = [self._plan(check_labels(lab, f"label set {i}")) for i, lab in enumerate(labels)]
        return plans, self.encode_prompts(prompts)

    def _encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _plan(self, labels: tuple[str, ...]) -> LabelPlan:
        """The label plan of one label set, built once per runner."""
        plan = self._plans.get(labels)
        if plan is None:
            plan = build_label_plan(labels, self._encode_text)
            self._plans[labels] = plan
        return plan
