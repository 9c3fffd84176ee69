"""Per-conversation calibration of the token estimator against the provider's real counts.

A conversation's provider may count more or fewer tokens than the estimator (a different
tokenizer, a different chat template). Each pair of consecutive usage reports says how many
tokens the messages added between them really cost; dividing by what the estimator said gives a
ratio. ``Calibration`` keeps an exponentially weighted mean of those ratios, in log space, weighted
by the sample's size (a 2,000-token observation says more than a 20-token one), starting from a
small prior (1.0, or a model's published ratio) that decays like any sample, and bounded, so one
odd report cannot swing it far. It is a plain immutable
value: ``update`` returns a new one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Bounds of the factor, and of any single sample's ratio: a tokenizer that counts half or twice
#: as many tokens as o200k on the same text is already extreme.
MIN_FACTOR = 0.5
MAX_FACTOR = 2.0
#: Weight (in estimated tokens) of the starting belief (factor 1.0, or a model's prior); it decays
#: like any sample, so evidence takes over after a few reports.
PRIOR_WEIGHT = 200.0
#: Each new sample multiplies the weight of everything learned before by this.
DECAY = 0.85
#: A sample's weight is its estimated size, capped so that no single sample dominates for long.
MAX_SAMPLE_WEIGHT = 4_000.0
#: Samples smaller than this (in estimated tokens) are too noisy to learn from.
MIN_SAMPLE_TOKENS = 16

#: Characters per token of ``o200k_base`` (which the estimator imitates) on English prose, measured
#: on the Python documentation and licence texts (4.4 to 4.7; ``bench/tokens.py``, class "prose").
O200K_ENGLISH_CHARS_PER_TOKEN = 4.4
#: Providers whose tokenizer is not available offline, with their own published rule of thumb in
#: characters per English token. Google: "For Gemini models, a token is equivalent to about 4
#: characters" (Gemini API documentation, "Understand and count tokens"). A model whose name
#: contains the key starts its calibration from O200K_ENGLISH_CHARS_PER_TOKEN / that value.
PUBLISHED_CHARS_PER_TOKEN: tuple[tuple[str, float], ...] = (("gemini", 4.0),)


def model_prior(model: str | None) -> float:
    """The starting calibration factor for ``model``: 1.0 unless its provider publishes a
    chars-per-token rule (see ``PUBLISHED_CHARS_PER_TOKEN``).

    >>> model_prior("google/gemini-3-pro-preview"), model_prior("gpt-4o")
    (1.1, 1.0)
    """
    name = (model or "").lower()
    for key, chars_per_token in PUBLISHED_CHARS_PER_TOKEN:
        if key in name:
            return round(O200K_ENGLISH_CHARS_PER_TOKEN / chars_per_token, 4)
    return 1.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """The learned ratio real/estimated for one conversation; ``factor`` is 1.0 until it learns.

    >>> c = Calibration().update(real=1_200, estimated=1_000)
    >>> 1.0 < c.factor < 1.2, c.samples
    (True, 1)
    """

    log_ratio_sum: float = 0.0
    weight: float = PRIOR_WEIGHT
    samples: int = 0

    @property
    def factor(self) -> float:
        """The multiplier to apply to estimates: exp(weighted mean log ratio), bounded."""
        if self.weight <= 0:
            return 1.0
        value = math.exp(self.log_ratio_sum / self.weight)
        return min(MAX_FACTOR, max(MIN_FACTOR, value))

    @classmethod
    def with_factor(cls, factor: float, weight: float = PRIOR_WEIGHT) -> Calibration:
        """A calibration that starts from a known ``factor`` (for example, carried over from an
        earlier session of the same model), worth ``weight`` estimated tokens of evidence."""
        factor = min(MAX_FACTOR, max(MIN_FACTOR, factor))
        weight = max(float(weight), 1e-9)
        return cls(math.log(factor) * weight, weight, 0)

    @classmethod
    def for_model(cls, model: str | None) -> Calibration:
        """The calibration a conversation with ``model`` starts from (see ``model_prior``)."""
        prior = model_prior(model)
        return cls() if prior == 1.0 else cls.with_factor(prior)

    def update(self, real: int, estimated: int) -> Calibration:
        """Learn from one observation: the provider counted ``real`` where we estimated
        ``estimated``. Observations that carry no information (non-positive or tiny) are ignored;
        a non-positive ``real`` is the provider's count going down, which is noise, not a ratio.
        """
        if estimated < MIN_SAMPLE_TOKENS or real <= 0:
            return self
        ratio = min(MAX_FACTOR, max(MIN_FACTOR, real / estimated))
        w = min(float(estimated), MAX_SAMPLE_WEIGHT)
        return Calibration(
            log_ratio_sum=self.log_ratio_sum * DECAY + w * math.log(ratio),
            weight=self.weight * DECAY + w,
            samples=self.samples + 1,
        )

    def apply(self, estimated: float) -> int:
        """``estimated`` scaled by the factor, rounded to whole tokens."""
        return round(estimated * self.factor)
