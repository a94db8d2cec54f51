"""What a failed model call was, in the terms the engine acts on (one classification, used by the
retry layer, the gateway's status mapping and the balancer).

- `request`: the provider refused this request (invalid arguments, a too-large body); the agent's
  failure, passed back to it as a 4xx with the provider's message.
- `context`: the prompt does not fit the model's context window; also the agent's failure.
- `auth`: the engine's own key or account is refused (401, 403, 402, `insufficient_quota`, an
  unknown model); no retry helps, so the run stops on the first one.
- `unavailable`: the service failed (5xx, 529, 408/409/429 after the retry window, connection
  errors, timeouts): `infra`.
- `internal`: the client itself broke (an exception that is no API error, or an argument the model
  does not support, which the capability table should have left out): `infra`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from evolve.errors import EvolveError

if TYPE_CHECKING:
    import anthropic
    import openai

FailureKind = Literal["request", "context", "auth", "unavailable", "internal"]

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Besides every 5xx (529 included): what both providers document as worth retrying."""

ENGINE_PARAMS = frozenset(
    {"max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "reasoning_effort"}
)
"""Top-level arguments the capability table decides (an agent's other fields, e.g. tools, are its own)."""

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "prompt is too long",
    "context window",
    "maximum context length",
)


class ModelError(EvolveError):
    """A model call that failed for good (after retries, or a request the server refuses)."""

    def __init__(
        self,
        message: str,
        kind: FailureKind = "unavailable",
        status: int | None = None,
        provider_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.status = status
        self.provider_message = provider_message or message


def status_error(exc: BaseException) -> openai.APIStatusError | anthropic.APIStatusError | None:
    import anthropic  # the SDKs load with the first model call, not with every `evolve` command
    import openai

    return exc if isinstance(exc, openai.APIStatusError | anthropic.APIStatusError) else None


def error_code(exc: openai.APIStatusError | anthropic.APIStatusError) -> str:
    """The provider's machine-readable code (`insufficient_quota`, `context_length_exceeded`, ...)."""
    code = getattr(exc, "code", None) or getattr(exc, "error_code", None)
    if code is None and isinstance(exc.body, dict):
        inner = exc.body.get("error", exc.body)
        code = inner.get("code") if isinstance(inner, dict) else None
    return str(code or "")


def provider_message(exc: BaseException) -> str:
    """The provider's own explanation, without the SDK's wrapping."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", None) or exc)


def retryable(exc: BaseException) -> bool:
    """Worth another try within the window: 408, 409, 429 (not a spent quota), 5xx/529, connection errors."""
    import anthropic  # the SDKs load with the first model call, not with every `evolve` command
    import openai

    error = status_error(exc)
    if error is not None:
        if error.status_code == 429 and error_code(error) == "insufficient_quota":
            return False  # billing, not load: waiting does not help
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | anthropic.APIConnectionError)


def classify(exc: BaseException) -> FailureKind:
    """The kind of a final failure (after the retry layer gave up or did not retry)."""
    import anthropic  # the SDKs load with the first model call, not with every `evolve` command
    import openai

    error = status_error(exc)
    if error is None:
        if isinstance(exc, openai.APIConnectionError | anthropic.APIConnectionError):
            return "unavailable"
        return "internal"
    status, code, text = error.status_code, error_code(error), provider_message(error).lower()
    if status in (401, 402, 403) or code == "insufficient_quota":
        return "auth"
    if status == 404:
        return "auth"  # the configured model does not exist for this key: no agent can fix that
    if retryable(error):
        return "unavailable"
    if (
        code in ("unsupported_parameter", "unsupported_value")
        and getattr(error, "param", None) in ENGINE_PARAMS
    ):
        # an argument the capability table should not have sent: the engine's bug, not the agent's
        return "internal"
    if code == "context_length_exceeded" or any(marker in text for marker in _CONTEXT_MARKERS):
        return "context"
    return "request"


def untranslatable(exc: Exception) -> ModelError:
    """A request that cannot be put in the provider's terms: built from the agent's input, so its fault."""
    return ModelError(
        f"the request cannot be sent: {type(exc).__name__}: {exc}",
        "request",
        400,
        f"the request cannot be sent to the model: {exc}",
    )


def model_error(exc: BaseException) -> ModelError:
    """The `ModelError` of a final failure, keeping the provider's status and message."""
    error = status_error(exc)
    kind = classify(exc)
    status = error.status_code if error is not None else None
    return ModelError(f"model call failed: {type(exc).__name__}: {exc}", kind, status, provider_message(exc))
