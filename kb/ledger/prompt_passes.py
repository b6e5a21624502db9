"""A step's prompt tokens as one composed pass (kb/data/end-to-end.json `step_prompt_pass`).

finite_run's step rule prices a step's p prompt tokens as D(p), D(k*I) the composed
prefill pass of k prompts per replica less the per-layer overhead L*t_o (a step pays
that once, in its decode step or alone): kb.ledger.scenario.outcome at batch k*dp, whose
request reads the rank's weights once, runs the matmuls at M = k*I and each prompt's
attention at I, and all-reduces k*I tokens. `PromptPasses` asks the composed ledger for
each k once (the scenario memo keeps the outcome across rows) and keeps what it asked,
for the row's note. Pure but for the composed ledger it asks.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.ledger.scenario import Scenario, ScenarioError, outcome

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


class PromptPasses:
    """k -> D(k*I) for one scenario, each k asked of the composed ledger once."""

    def __init__(self, kb: KnowledgeBase, scenario: Scenario, overhead: Fraction) -> None:
        self.kb, self.scenario, self.overhead = kb, scenario, overhead
        self.found: dict[int, Fraction] = {}

    def __call__(self, prompts: int) -> Fraction:
        """D at `prompts` whole prompts; ValueError when kb cannot price that pass."""
        if prompts not in self.found:
            self.found[prompts] = self._priced(prompts)
        return self.found[prompts]

    def _priced(self, prompts: int) -> Fraction:
        s = self.scenario
        try:
            found = outcome(replace(s, batch=s.dp * prompts), self.kb)
        except ScenarioError as exc:
            raise ValueError(f"the pass of {prompts} prompts: {exc}") from None
        if found.ttft is None:
            problems = "; ".join(found.problems) or "no prefill pass"
            raise ValueError(f"no pass of {prompts} prompts: {problems}")
        return found.ttft - self.overhead

    def note(self, one: Fraction) -> str:
        """What the run asked: the largest k, its D, and k x one prompt's D `one` (the old rule)."""
        if not self.found:
            return "step_prompt_pass: no step held more than one prompt's tokens"
        most = max(self.found)
        against = f" against {most} x {float(one) * 1e3:.4g} ms"
        return (
            f"step_prompt_pass: a step's prompt tokens are one composed pass ({len(self.found)} "
            f"prompt counts priced; {most} prompts: {float(self.found[most]) * 1e3:.4g} ms"
            f"{against})"
        )
