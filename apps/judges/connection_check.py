"""Test connection: one small call to a judge's model with its stored settings, through
the same client and address-safety layer as a run (providers.py), so a lead sees at
once whether the model answers and, when it does not, why and at which address.

The call is made in the lead's request: it waits at most TEST_TIMEOUT_S, whatever the
judge's own timeout. It is not logged with a run's calls and costs no budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .models import Judge
from .providers import call_model, endpoint
from .services import model_settings

TEST_SYSTEM = "You are checking that a connection works. Answer in one short line."
TEST_USER = "Reply with the word OK."
TEST_MAX_OUTPUT_TOKENS = 32
TEST_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ConnectionReport:
    """What came back: the model's answer, or the error; always the address called."""

    ok: bool
    address: str
    model: str
    answer: str = ""
    failure: str = ""
    error: str = ""
    latency_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def sentence(self) -> str:
        if self.ok:
            answer = repr(self.answer.strip()[:200]) if self.answer.strip() else "an empty answer"
            return (
                f"{self.model} at {self.address} answered {answer} in {self.latency_ms} ms "
                f"({self.input_tokens} tokens in, {self.output_tokens} out)."
            )
        return f"{self.model} at {self.address} could not be reached: {self.failure}: {self.error}"


def check_connection(judge: Judge) -> ConnectionReport:
    """Ask the judge's model one small question (see the module's docstring)."""
    settings = model_settings(judge)
    settings = replace(
        settings,
        timeout_s=min(settings.timeout_s, TEST_TIMEOUT_S),
        max_output_tokens=TEST_MAX_OUTPUT_TOKENS,
        structured=False,
    )
    outcome = call_model(settings, TEST_SYSTEM, TEST_USER)
    address = endpoint(settings.protocol, settings.base_url)
    return ConnectionReport(
        ok=outcome.failure is None,
        address=address,
        model=settings.model,
        answer=outcome.text if outcome.failure is None else "",
        failure=outcome.failure.value if outcome.failure else "",
        error=outcome.error,
        latency_ms=outcome.latency_ms,
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
    )
