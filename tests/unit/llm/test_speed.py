"""Speed measurement on a scripted model and a scripted clock."""

from __future__ import annotations

from evolve.llm.speed import measure_speed, round_trip
from evolve.llm.types import ChatRequest, ChatResponse, Usage
from evolve.standins.models import ScriptedModel


class TimedModel:
    """Takes 0.02 s per prompt token and 0.05 s per generated token on the scripted clock."""

    name = "timed"

    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def complete(self, request: ChatRequest) -> ChatResponse:
        prompt = 100 if "Read this code" in (request.messages[0].content or "") else 10
        generated = request.max_tokens or 1
        self.now += prompt * 0.02 + generated * 0.05
        return ChatResponse(
            message=ScriptedModel(["x"]).complete(request).message,
            model=self.name,
            usage=Usage(prompt_tokens=prompt, completion_tokens=generated),
        )


def test_prompt_and_generation_rates_are_separated():
    model = TimedModel()
    report = measure_speed(model, nonce="n", generate_tokens=40, clock=model.clock)
    # the prefill call also generated one token, so its prompt rate is slightly under 50/s
    assert 45 < report.prompt_tokens_per_s < 50
    assert 19 < report.generation_tokens_per_s < 21
    assert report.as_json()["model"] == "timed"


def test_round_trip_reports_the_reply():
    trip = round_trip(ScriptedModel(["ready"]))
    assert trip.reply == "ready" and trip.completion_tokens == 1
