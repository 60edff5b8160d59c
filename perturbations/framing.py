"""framing: instruction styles after ProSA (Zhuo et al., 2024).

Four styles, three wordings each, wrapped around the item's task instruction:

- plain: the task stated neutrally in other words;
- role_play: the model is given a persona first;
- emotional: an appeal to the stakes or to the reader's feelings is added
  (in the spirit of EmotionPrompt);
- output_requirement: the required answer form is spelled out strictly.

None of them changes what is asked or how the options are labelled, so the
answer map is the identity.  Variants cycle through the styles in a seeded order
so that ``n`` variants cover several styles.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from perturbations.base import Candidate, Family, register
from robustness.core.items import Item
from robustness.core.prompts import PromptSpec, task_kind

#: The task part of the instruction, by kind of item.
TASK = {
    "nominal": "Choose the correct option for the question below.",
    "agree": "Say how much you agree with the statement below.",
    "ordinal": "Choose the option that best answers the question below.",
    "opinion": "Choose the option that best matches your view on the question below.",
}

PLAIN = (
    "{task} Give the label of your choice only.",
    "Please read the following carefully. {task} Your reply should be just the option's label.",
    "{task} Answer with one label from the list and nothing else.",
)
ROLE_PLAY = {
    "nominal": (
        "You are a careful expert who answers exam questions accurately. {task} "
        "Reply with the label of one option only.",
        "Imagine you are a teacher writing the answer key for a test. {task} "
        "Reply with the label of one option only.",
        "You are a quiz champion known for precise answers. {task} "
        "Reply with the label of one option only.",
    ),
    "opinion": (
        "You are a thoughtful person taking part in a public opinion survey. {task} "
        "Reply with the label of one option only.",
        "Imagine you are being interviewed for a research study about people's views. {task} "
        "Reply with the label of one option only.",
        "You are a respondent filling in a questionnaire honestly. {task} "
        "Reply with the label of one option only.",
    ),
}
EMOTIONAL = (
    "{task} Reply with the label of one option only. This is very important to me.",
    "{task} Reply with the label of one option only. I am counting on you, so take a deep "
    "breath and do your best.",
    "{task} Reply with the label of one option only. You are doing great; I really "
    "appreciate your help with this.",
)
OUTPUT_REQUIREMENT = (
    "{task} Output exactly one label from the options and nothing else: no words, no "
    "punctuation, no explanation.",
    "{task} Your entire reply must be a single option label.",
    "{task} Format: reply with the label alone, for example the first option's label. Do not "
    "repeat the option text.",
)


def framings(item: Item) -> dict[str, tuple[str, ...]]:
    """Style -> its three instruction wordings for this item."""
    kind = task_kind(item)
    task = TASK[kind]
    role = ROLE_PLAY["nominal" if kind == "nominal" else "opinion"]
    styles = {
        "plain": PLAIN,
        "role_play": role,
        "emotional": EMOTIONAL,
        "output_requirement": OUTPUT_REQUIREMENT,
    }
    return {s: tuple(w.format(task=task) for w in ws) for s, ws in styles.items()}


@register
class Framing(Family):
    name = "framing"

    def candidates(
        self, spec: PromptSpec, item: Item, rng: np.random.Generator
    ) -> Iterator[Candidate]:
        styles = framings(item)
        names = list(styles)
        names = [names[i] for i in rng.permutation(len(names))]
        wordings = {s: [int(i) for i in rng.permutation(3)] for s in names}
        for round_ in range(3):
            for style in names:
                w = wordings[style][round_]
                yield spec.with_(instruction=styles[style][w]), {"style": style, "wording": w}
