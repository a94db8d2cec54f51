"""From the `[models]` config to running servers and one `ChatModel` per role.

Roles that name the same local server share it (one embedded llama.cpp process, one set of vLLM
replicas per model). `ModelStack` is a context manager: servers stop when it closes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Self, TypedDict

from evolve.config import ModelConfig, ModelsConfig
from evolve.llm.balancer import LeastLoaded
from evolve.llm.client import (
    AnthropicModel,
    ChatModel,
    ModelError,
    OpenAICompatible,
    OpenAIModel,
    RetryPolicy,
    host_key,
)
from evolve.llm.servers import LlamaCppServer, ModelServer, VLLMServer
from evolve.llm.threads import machine_cores, thread_plan
from evolve.llm.types import ROLES, Role
from evolve.models.catalog import embedded_spec

ClientFactory = Callable[[ModelConfig], ChatModel]
"""A role's config -> its client, for a provider the stack does not build itself: the stand-in providers
(`provider = "scripted"`) the commands pass in (evolve.cli.standins); the engine knows none of them."""
ServerFactory = Callable[[ModelConfig, float], ModelServer]
"""A role's config and the CPUs the run keeps busy beside the server -> the server (not started)."""


class _ClientSettings(TypedDict):
    """The settings every client takes from a role's config."""

    temperature: float
    max_tokens: int | None
    timeout_s: float | None
    retry: RetryPolicy


def embedded_server(config: ModelConfig, beside_cpus: float = 0.0) -> LlamaCppServer:
    """The embedded server with its thread plan: the run keeps `beside_cpus` busy beside it."""
    plan = thread_plan(machine_cores(), beside_cpus, config.threads, config.threads_batch)
    return LlamaCppServer(
        spec=embedded_spec(config.model), threads=plan, prompt_cache_mb=config.prompt_cache_mb
    )


def default_server(config: ModelConfig, beside_cpus: float = 0.0) -> ModelServer:
    """The local server a role needs (embedded llama.cpp or vLLM on this machine's GPUs)."""
    if config.provider == "embedded":
        return embedded_server(config, beside_cpus)
    return vllm_server(config)


def vllm_server(config: ModelConfig) -> VLLMServer:
    """The vLLM replicas a `vllm` role asks for (not started)."""
    return VLLMServer(
        config.model,
        replicas=config.replicas,
        tensor_parallel=config.tensor_parallel,
        gpu_memory_fraction=config.gpu_memory_fraction,
        gpus=config.gpus,
        extra_args=config.extra_args,
        startup_timeout_s=config.startup_timeout_s,
        tool_parser=config.tool_call_parser,
        max_model_len=config.max_model_len,
        served_model_name=config.served_model_name,
    )


def gpu_plan(config: ModelsConfig) -> dict[Role, ModelConfig]:
    """Each role's config with its vLLM GPUs filled in: roles that share a server share its GPUs;
    a server without `gpus` takes the lowest indices no other server uses (not all of them GPU 0)."""
    roles = {role: getattr(config, role) for role in ROLES}
    taken = {g for c in roles.values() if c.provider == "vllm" and c.gpus is not None for g in c.gpus}
    assigned: dict[tuple[object, ...], tuple[int, ...]] = {}
    for role, model in roles.items():
        if model.provider != "vllm" or model.gpus is not None:
            continue
        key = _server_key(model)
        if key not in assigned:
            free = (g for g in range(10_000) if g not in taken)
            assigned[key] = tuple(next(free) for _ in range(model.replicas * model.tensor_parallel))
            taken.update(assigned[key])
        roles[role] = model.model_copy(update={"gpus": assigned[key]})
    return roles


def _server_key(config: ModelConfig) -> tuple[object, ...]:
    if config.provider == "embedded":
        return ("embedded", config.model)  # roles on the same embedded model share one server
    return (
        "vllm",
        config.model,
        config.replicas,
        config.tensor_parallel,
        config.gpu_memory_fraction,
        config.gpus,
        config.tool_call_parser,
        config.max_model_len,
        config.served_model_name,
        config.extra_args,
    )


def _balanced(config: ModelConfig, urls: tuple[str, ...], **kwargs) -> ChatModel:
    """One client for one server; over several, a least-loaded balancer whose replicas fail fast
    (the balancer retries elsewhere and takes dead ones out)."""
    name = config.served_model_name or config.model
    if len(urls) == 1:
        return OpenAICompatible(urls[0], name, **kwargs)
    fail_fast = {**kwargs, "retry": RetryPolicy(attempts=1)}
    replicas = [OpenAICompatible(url, name, **fail_fast) for url in urls]
    retries = config.max_retries if config.max_retries is not None else 5
    return LeastLoaded(replicas, attempts=len(replicas) + retries, window_s=config.retry_window_min * 60)


def retry_policy(config: ModelConfig, seed: int = 0) -> RetryPolicy:
    """The role's one retry layer (evolve/llm/retries.py); its jitter is drawn from the run's seed."""
    attempts = None if config.max_retries is None else config.max_retries + 1
    return RetryPolicy(window_s=config.retry_window_min * 60, attempts=attempts, seed=seed)


def client_for(
    config: ModelConfig,
    base_urls: tuple[str, ...] = (),
    seed: int = 0,
    standins: Mapping[str, ClientFactory] | None = None,
) -> ChatModel:
    """The client of one role; `base_urls` are the replicas of a server the stack started; `standins` build
    the providers that are no real model (by provider name)."""
    common = _ClientSettings(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout_s=config.timeout_s,
        retry=retry_policy(config, seed),
    )
    if config.provider in ("embedded", "vllm"):
        gpus = config.tensor_parallel if config.provider == "vllm" else 0
        return _balanced(config, base_urls, gpus=gpus, provider=config.provider, **common)
    if config.provider == "openai-compatible":
        urls = config.replica_urls or ((config.base_url,) if config.base_url else ())
        if not urls:
            raise ModelError("provider openai-compatible needs base_url (or replica_urls)")
        return _balanced(config, urls, api_key=host_key(config.api_key_env), **common)
    if config.provider == "openai":
        return OpenAIModel(
            config.model,
            api_key_env=config.api_key_env or "OPENAI_API_KEY",
            price=config.price(),
            base_url=config.base_url,
            **common,
        )
    if config.provider == "anthropic":
        return AnthropicModel(
            config.model,
            api_key_env=config.api_key_env or "ANTHROPIC_API_KEY",
            price=config.price(),
            base_url=config.base_url,
            **common,
        )
    if standins and config.provider in standins:
        return standins[config.provider](config)
    if config.provider == "replay":
        raise ModelError(
            "provider replay is a gateway mode: Gateway(replay_from=<run>/exchanges), not a model"
        )
    raise ModelError(
        f"provider {config.provider} is a stand-in for tests: only the evolve commands and tests can serve it"
    )


class ModelStack:
    """Running servers plus `models[role]`; close it (or leave its `with`) to stop the servers."""

    def __init__(
        self,
        config: ModelsConfig,
        server_factory: ServerFactory = default_server,
        *,
        seed: int = 0,
        beside_cpus: float = 0.0,
        standins: Mapping[str, ClientFactory] | None = None,
    ) -> None:
        self._config = config
        self._standins = standins
        self._seed = seed
        self._beside_cpus = beside_cpus
        self._factory = server_factory
        self._exit = ExitStack()
        self.servers: dict[tuple[object, ...], ModelServer] = {}
        self.models: dict[Role, ChatModel] = {}

    def start(self) -> Self:
        try:
            planned = gpu_plan(self._config)
            for role in ROLES:
                config = planned[role]
                urls: tuple[str, ...] = ()
                if config.provider in ("embedded", "vllm"):
                    key = _server_key(config)
                    if key not in self.servers:
                        server = self._factory(config, self._beside_cpus)
                        server.start()
                        self._exit.callback(server.stop)
                        self.servers[key] = server
                    urls = self.servers[key].base_urls
                self.models[role] = client_for(config, urls, self._seed, self._standins)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        self._exit.close()
        self.servers.clear()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
