"""The run configuration: one typed tree (pydantic), loaded from TOML.

Every section forbids unknown keys, so a typo is an error, not a silently ignored setting.
`load_config` turns every failure (missing file, bad TOML, unknown key, wrong type) into one
`ConfigError` whose message is a single line naming the file and the key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from evolve.errors import EvolveError
from evolve.search.params import DGMParams, GEAParams, HGMCostParams, HGMParams


class ConfigError(EvolveError, ValueError):
    """A configuration that cannot be used; the message names the file and the key."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelConfig(_Section):
    """Which model serves one role (diagnose, modify or solve)."""

    provider: Literal[
        "embedded", "openai-compatible", "vllm", "openai", "anthropic", "scripted", "replay"
    ] = "embedded"
    """`embedded`: a bundled model on llama.cpp (CPU, no key): Qwen2.5-Coder-0.5B, or with `model =
    "qwen2.5-coder-1.5b-instruct"` the 1.5B (fetched by `evolve models fetch-embedded --model ...`).
    `openai-compatible`: any OpenAI-style server (vLLM, SGLang, llama.cpp, Ollama) at `base_url`. `vllm`: the
    engine starts `vllm serve <model>` on this machine's GPUs. `openai`/`anthropic`: hosted APIs, key from
    `api_key_env`. `scripted`/`replay`: for tests and re-runs only."""
    model: str = "qwen2.5-coder-0.5b-instruct"
    """The model name sent to the server; for `embedded`, which bundled model (evolve/llm/embedded.py)."""
    base_url: str | None = None
    """Server address for `openai-compatible` (e.g. http://gpu-node:8000/v1)."""
    replica_urls: tuple[str, ...] = ()
    """`openai-compatible`: several servers of the same model (e.g. one vLLM per GPU node), used
    instead of `base_url`; the gateway sends each request to the least-loaded live one."""
    api_key_env: str | None = None
    """Name of the host environment variable holding the API key; the key never enters a sandbox."""
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    """Sampling temperature (not sent where the model family takes none: OpenAI reasoning models,
    Anthropic's current SDK)."""
    max_tokens: int | None = Field(None, gt=0)
    """Cap on tokens generated per request; default by family (1024 local, 4096 hosted chat, 25000
    for OpenAI reasoning models, whose hidden reasoning counts against it)."""
    timeout_s: float | None = Field(None, gt=0)
    """Per-attempt timeout; default by family (120 s, 600 s embedded, 300 s Anthropic, 600 s reasoning
    models)."""
    retry_window_min: float = Field(10.0, gt=0)
    """Rate limits, 5xx/529 and connection errors are retried (with the server's Retry-After, else
    jittered backoff) until this many minutes have passed since the first attempt."""
    max_retries: int | None = Field(None, ge=0)
    """An extra cap on retries within the window (default: as many as the window allows)."""
    price_input_per_mtok: float | None = Field(None, ge=0)
    """Hosted models: US dollars per million input tokens (overrides the dated table)."""
    price_output_per_mtok: float | None = Field(None, ge=0)
    """Hosted models: US dollars per million output tokens."""
    price_cached_input_per_mtok: float | None = Field(None, ge=0)
    """Hosted models: US dollars per million input tokens read from the prompt cache (default: input
    price)."""
    replicas: int = Field(1, ge=1)
    """`vllm`: server replicas; the gateway spreads requests over them."""
    tensor_parallel: int = Field(1, ge=1)
    """`vllm`: GPUs per replica (tensor parallelism)."""
    gpu_memory_fraction: float = Field(0.9, gt=0.0, le=1.0)
    """`vllm`: fraction of each GPU's memory the server may take."""
    gpus: tuple[int, ...] | None = None
    """`vllm`: GPU indices to use, replicas x tensor_parallel of them (default: the next unused ones,
    so two vLLM roles with different models get different GPUs)."""
    tool_call_parser: str | None = None
    """`vllm`: `--tool-call-parser` (default by model family, see evolve/llm/servers.py; "none": no
    server-side tool parsing)."""
    max_model_len: int | None = Field(None, gt=0)
    """`vllm`: `--max-model-len` (context length; default: the model's own)."""
    served_model_name: str | None = None
    """`vllm`: `--served-model-name`, the name requests use (default: `model`)."""
    extra_args: tuple[str, ...] = ()
    """`vllm`: more `vllm serve` flags, passed as given."""
    startup_timeout_s: float = Field(1200.0, gt=0)
    """`vllm`: how long a replica may take to load before the run gives up."""
    threads: int | None = Field(None, ge=1)
    """`embedded`: generation threads (default: the cores the run leaves free, sandbox CPUs x
    concurrency, at most half the machine, at least 1; evolve/llm/threads.py). Roles on the same
    embedded model share one server: the first of them (diagnose, modify, solve) sets its threads."""
    threads_batch: int | None = Field(None, ge=1)
    """`embedded`: prompt-reading threads (default: `threads`)."""
    prompt_cache_mb: int = Field(400, ge=0)
    """`embedded`: memory for saved contexts, so interleaved jobs keep their prompt prefixes (0: none)."""

    @model_validator(mode="after")
    def _fits_the_agent_wait(self) -> ModelConfig:
        from evolve.models.capabilities import AGENT_WAIT_S, capabilities, worst_case_s

        timeout = self.timeout_s or capabilities(self.provider, self.model).default_timeout_s
        worst = worst_case_s(self.retry_window_min * 60, timeout)
        if worst > AGENT_WAIT_S:
            raise ValueError(
                f"retry_window_min x 60 + timeout_s = {worst:.0f} s exceeds the agent's wait for "
                f"one answer ({AGENT_WAIT_S:.0f} s): the agent would re-send a request still retried"
            )
        if self.provider == "embedded":
            from evolve.models.catalog import EMBEDDED

            if self.model not in EMBEDDED:
                raise ValueError(
                    f"model {self.model!r} is no embedded model (choose one of: {', '.join(EMBEDDED)})"
                )
        if (self.price_input_per_mtok is None) != (self.price_output_per_mtok is None):
            raise ValueError("give both price_input_per_mtok and price_output_per_mtok, or neither")
        return self

    def price(self):  # -> evolve.models.pricing.Price | None (imported lazily: config stays light)
        """The configured price, or None when the config gives none."""
        from evolve.models.pricing import Price

        if self.price_input_per_mtok is None or self.price_output_per_mtok is None:
            return None
        return Price(self.price_input_per_mtok, self.price_output_per_mtok, self.price_cached_input_per_mtok)


class ModelsConfig(_Section):
    """One model per role; the roles are configured separately."""

    diagnose: ModelConfig = ModelConfig()
    """Reads a node's failures and writes improvement instructions."""
    modify: ModelConfig = ModelConfig()
    """Drives the agent while it edits its own code."""
    solve: ModelConfig = ModelConfig()
    """Drives the agent while it solves benchmark tasks."""


class SandboxConfig(_Section):
    """Where and under which limits agent code runs."""

    backend: Literal["docker", "process"] = "docker"
    """`docker` isolates; `process` runs local subprocesses and isolates nothing (development only)."""
    image: str = "evolve-base:latest"
    """The base image agents run in."""
    cpus: float = Field(1.0, gt=0)
    """CPU quota per sandbox, in cores."""
    memory: str = Field("2g", pattern=r"^[0-9]+[kmgKMG]?$")
    """Memory limit per sandbox (docker syntax: 512m, 2g)."""
    pids: int = Field(256, gt=0)
    """Process/thread limit per sandbox (stops fork bombs)."""
    timeout_s: float = Field(900.0, gt=0)
    """Wall-clock limit of one agent job; the container is killed at it."""
    output_limit_bytes: int = Field(1_000_000, gt=0)
    """Cap on captured stdout/stderr per command."""
    disk: str = Field("1g", pattern=r"^([0-9]+[kmgKMG]?|none)$")
    """Most each writable place of a Docker sandbox may hold (work dir, /tmp, /var/tmp, home: tmpfs on a
    read-only root, charged to `memory`, so together at most 3/4 of it: evolve.sandbox.docker_spec
    `mount_sizes`); `none` leaves the root writable with no quota."""
    layer_disk: str = Field("10g", pattern=r"^[0-9]+[kmgKMG]?$")
    """Where the root stays writable (`disk = "none"`, or a SWE-bench instance's image): the most a
    sandbox's writable layer may hold, measured by the host every second; over it the agent is killed."""
    copy_limit_bytes: int = Field(64 * 1024 * 1024, gt=0)
    """Cap on one copy out of a sandbox (a transcript, a log, a child's code): a bigger file is cut with
    a note, a bigger directory is refused."""


class TasksConfig(_Section):
    """The benchmark the search runs on."""

    suite: str = "builtin"
    """Task suite name (builtin, humaneval, polyglot, swebench-verified, ...)."""
    split: str = "dev"
    """Split used by the search."""
    heldout_split: str = "heldout"
    """Split used only to score the final agent."""
    ids: list[str] | None = Field(None, min_length=1)
    """Search on only these tasks of `split`, in this order (`limit` then keeps the first N of them)."""
    limit: int | None = Field(None, gt=0)
    """Search on only the first N tasks of `split` (in suite order, or of `ids`)."""
    heldout_limit: int | None = Field(None, gt=0)
    """Score the final agent on only the first N tasks of `heldout_split` (in suite order)."""
    heldout_seed: bool = False
    """Score the seed on the held-out tasks too, so the final agent is compared with it on the same tasks
    (`evolve compare RUN:ROOT RUN:FINAL --split heldout`)."""
    polyglot_dir: Path | None = None
    """Checkout of the polyglot benchmark (suite `polyglot`)."""


class PolicyConfig(_Section):
    """Which node to grow next."""

    name: Literal["hgm", "dgm", "greedy", "random", "hgm_cost", "gea"] = "hgm"
    """The selection policy (`hgm_cost`: HGM with priced expansions, docs/search.md "Search that pays for what
    it spends"; `gea`: Group-Evolving Agents, docs/search.md "DGM, HGM and GEA")."""
    hgm: HGMParams = HGMParams()
    """HGM's parameters (evolve.search.params.HGMParams, the class the policy takes)."""
    hgm_cost: HGMCostParams = HGMCostParams()
    """The cost-aware HGM's parameters: HGM's plus `price_exponent` and `reserve` (HGMCostParams); the
    price of an expansion is measured by the run, never set here."""
    dgm: DGMParams = DGMParams()
    """DGM's parent selection and the staged evaluation of DGM, greedy and random (DGMParams)."""
    gea: GEAParams = GEAParams()
    """GEA's group size K, neighbours M and its own staged evaluation (GEAParams)."""


class BudgetConfig(_Section):
    """Whichever budget ends first stops new work; the expansion budget stops only expansions (the search
    then spends the evaluations left on the nodes it has, so every new child gets results)."""

    evaluations: int = Field(800, gt=0)
    """Task evaluations (the policy's B)."""
    expansions: int | None = Field(None, gt=0)
    """Self-modification steps; once spent, no new expansion starts but evaluations go on."""
    tokens: int | None = Field(None, gt=0)
    """Model tokens across all roles."""
    dollars: float | None = Field(None, gt=0)
    """Spend on hosted APIs."""
    cpu_hours: float | None = Field(None, gt=0)
    """Compute spent by evaluations and expansions alike: each job's wall time (start to end, from the
    engine's job rows) times `sandbox.cpus`, summed, in hours (evolve.archive.compute)."""
    wall_clock_s: float | None = Field(None, gt=0)
    """Wall-clock time of the run."""
    job_tokens: int = Field(200_000, gt=0)
    """Token budget of one job, enforced by the gateway."""
    agent_steps: int = Field(30, gt=0)
    """Step cap of one agent run on a task."""
    improve_steps: int = Field(12, gt=0)
    """Step cap of one self-modification run."""
    invalid_streak: int | None = Field(20, gt=0)
    """Stop the run after this many invalid expansions in a row with no evaluation between them
    (the models keep failing and there is nothing left to evaluate); none: never."""
    stop_when_solved: bool = False
    """Stop the search once a valid node has passed every search task: no node can rank above it there,
    so the expansions left could only tie it (the final agent is the same; its held-out scoring follows)."""


class GatewayConfig(_Section):
    """What one job may make the host-side gateway take in (besides its token budget)."""

    max_request_bytes: int = Field(4 * 1024 * 1024, ge=64 * 1024)
    """Body cap of one model request; a larger one is refused (413) before it is read."""
    bytes_per_token: int = Field(64, ge=8)
    """A job's byte budget is this times `budget.job_tokens`: every byte it sends the gateway (request
    lines, headers, bodies, refused requests too) plus every byte of its exchange log."""
    in_flight_bytes: int = Field(8 * 1024 * 1024, ge=64 * 1024)
    """Bytes of one job's requests being read or answered at once (bounds the gateway's memory per job)."""

    @model_validator(mode="after")
    def _a_request_fits_in_flight(self) -> GatewayConfig:
        if self.in_flight_bytes < self.max_request_bytes:
            raise ValueError("in_flight_bytes must be at least max_request_bytes")
        return self


class ExecutorConfig(_Section):
    """Where jobs run."""

    kind: Literal["local", "ray"] = "local"
    """`local`: a thread pool on this machine; `ray`: Ray tasks on a cluster."""
    concurrency: int = Field(2, ge=1)
    """Jobs in flight at once."""
    ray_address: str | None = None
    """Ray cluster address (kind = "ray"), e.g. ray://head:10001 or auto."""


class MetaConfig(_Section):
    """How a node is improved (the meta step)."""

    style: Literal["compact", "dgm"] = "compact"
    """`compact`: evolve's short diagnosis (a systematic problem or a failed task, transcript tails, a
    short schema), sized for small models. `dgm`: the Darwin Gödel Machine's procedure (DGM's branch
    choice, the agent's whole code and lineage patches, DGM's diagnosis schema and child prompt)."""
    show_test_results: bool = False
    """`dgm`: also show the diagnoser the grader's output of the chosen task, as DGM did. Off by default:
    that output comes from hidden tests, and the child could be tuned to them rather than improved."""
    compiled_check: bool = False
    """DGM's "compiled" check (is_compiled_self_improve), any style: once a child (not a root) has results
    on every task of its first evaluation stage, it is marked invalid, with the reason, unless at least
    one of those attempts left a non-empty patch (the engine's own `diff.patch` of the job), so no policy
    grows it further; its results stay recorded. The stage is `policy.dgm.stages[0]` tasks (10 by default)
    for every policy, HGM's included (HGM has no stages; it uses the same count), capped at the number
    of search tasks. Infra attempts are run again by the engine, so the stage is complete once each of
    its tasks has a counted result. DGM keeps such a child out of its archive."""
    procedure: Literal["engine", "agent"] = "engine"
    """Who chooses the problem and writes the child's instructions. `engine`: the host, by `style`.
    `agent` (DGM-H, docs/agent.md "The agent-side meta procedure"): the node's own agent, as the third command
    of the agent contract, `python -m agent diagnose --material DIR --out FILE`, in a sandbox with the
    `diagnose` model; children may rewrite it, and the validation gate checks it too."""

    candidates: int = Field(1, ge=1, le=16)
    """Candidate children sampled per expansion: the parent's `improve` runs this many times, each at its own
    temperature (`temperature`), and each candidate goes through the cheap filters (its edit applies, its
    files compile, its syntax tree differs from the parent's; evolve.meta.candidates) and then the gate,
    until one passes all: that one is the child. Every candidate's verdict is kept (`evolve show`). Their
    tokens and time count like any job's (each has its own model channels)."""
    temperature: tuple[float, float] = (0.2, 1.0)
    """The lowest and highest sampling temperature of the candidates, spread evenly (one candidate: the
    lowest). Reaches the agent as the hint `EVOLVE_TEMPERATURE` (the seed honours it)."""
    require_code: bool = False
    """Refuse a candidate (and so a child) whose edit is not a code edit: only prompt text, a lesson or
    cosmetic changes (evolve.archive.edits)."""
    spectra: int = Field(0, ge=0, le=8)
    """Execution spectra for the diagnosis (`compact` style, engine procedure): up to this many of the node's
    failed and as many passed search evaluations are re-run against their recorded model replies under line
    coverage (sandboxes, no model; evolve.engine.spectra), and so are the agent's own tests (each test a
    run); the agent's lines they ran, ranked by the Ochiai formula, join the ranked locations
    (evolve.meta.locate) that the diagnosis reads, with the failing own tests and how they failed as
    evidence. 0: off. Costs each expansion up to 2n solves with instant replies and their grading, and one
    run of the own tests, before its diagnosis."""
    replays: int = Field(0, ge=0, le=8)
    """A candidate that passed the cheap filters re-runs this many of the parent's failed search tasks
    against the parent's recorded model replies (sandboxes, no model; evolve.engine.behaviour); one that
    acts exactly as its parent on all of them (the very same requests, the same change, the same failure) is
    refused at `behaviour` before the gate. With `spectra`, the failures whose traced run went through a line
    its edit touched come first, and a traced one that did not is never replayed (there it can only act as
    its parent). 0: off. Costs each such candidate up to n solves with instant replies and their grading."""
    templates: int = Field(0, ge=0, le=32)
    """Template candidates per ranked location, besides the model's `candidates`: the fix patterns of
    template-based repair (a literal, a call, an operator, a comparison, a condition or a slice changed, a
    statement dropped, a keyword argument or a call statement restored from elsewhere in the agent;
    evolve.meta.templates), made without a model at the top `locations` the diagnosis ranked (its
    `instructions.json`; none ranked: none made), nearest to the ranked line first, in a seeded order. With
    templates or `rerun`, every candidate runs its own tests before the replayed behaviour. 0: off."""
    locations: int = Field(2, ge=1, le=16)
    """How many of the top-ranked locations the templates are made at."""
    test_templates: int = Field(0, ge=0, le=32)
    """Template candidates per ranked location where the parent fails some of its own tests (as `spectra`
    found them), in place of `templates`: there each candidate's own tests refuse it in seconds unless it
    fixes them, so many can be tried for the price of a few live re-runs. 0: `templates` always."""
    test_locations: int = Field(0, ge=0, le=16)
    """How many of the top-ranked locations those are made at (0: `locations`)."""
    screen: int = Field(0, ge=0, le=1000)
    """Where the parent fails some of its own tests (with `spectra`): up to this many template edits at the
    lines its failing tests ran, most suspicious first and far deeper than `test_locations`, each tried on a
    copy of the agent against the failing tests, then every own test, in the sandbox the spectra ran them in
    (evolve.engine.screen: a test run per edit, no container); the first few that pass them all head the
    ranking and are the expansion's first candidates. 0: off. Costs each such expansion up to this many runs
    of the failing tests."""
    rerun: int = Field(0, ge=0, le=8)
    """A candidate that passed the cheaper stages solves this many of the parent's failed search tasks again,
    live, through the evaluation pipeline (the solve model: its tokens count in the run's budget), and
    `rerun_passed` of its passed ones; it must pass at least one of the failed and every passed one, else
    it is refused at `rerun`. The survivors go to the gate in order of how many failures they fixed, and the
    first it passes is the child; one that fixed all ends the sampling. 0: off (the first candidate the gate
    passes is the child)."""
    rerun_passed: int = Field(1, ge=0, le=8)
    """The parent's passed search tasks a candidate re-runs live (with `rerun`) and must still pass."""
    repairs: int = Field(0, ge=0, le=8)
    """Model repairs at each of the top `repair_locations` ranked lines (evolve.engine.repair): the code
    around the line (its function, or the statement there) goes to the `modify` model with the evidence that
    ranked it, the rewrite is spliced back in and checked like every candidate, and each next attempt at the
    line is told why the ones before were refused (ChatRepair's conversation). Made after the templates,
    before the improve step's `candidates`, at the `temperature` spread. 0: off."""
    repair_locations: int = Field(2, ge=1, le=16)
    """How many of the top-ranked locations get repairs (two lines of one function count once)."""
    line_repairs: int = Field(0, ge=0, le=16)
    """Model samples of each of the top `line_locations` ranked lines itself (evolve.engine.repair): the
    `modify` model sees the line's function with its lines numbered, the evidence that ranked the line and
    a failing test that runs it, and writes what the line should be (or the line and one missing after it);
    the reply replaces the line alone, and the candidate is checked like every candidate. Independent
    samples at the `temperature` spread; one that makes a change made before counts as no change. Made
    after the templates, before the `repairs`. 0: off."""
    line_locations: int = Field(4, ge=1, le=16)
    """How many of the top-ranked lines get line repairs (two lines of one function count twice)."""
    diagnosis: Literal["model", "evidence"] = "model"
    """`compact` style, engine procedure. `model`: the diagnosis model reads the computed evidence, the ranked
    locations (evolve.meta.locate) and the map, and names the target and the change; the data decides only
    when it gives no usable reply. `evidence`: the top-ranked location in the agent's map decides whenever
    there is one (its symbol is the target, its evidence the change; no model call), the model only otherwise:
    for small diagnosis models, which name a plausible target with an unrelated change (for replies cut at
    their token limit: "add a try-except block")."""

    @model_validator(mode="after")
    def _spread(self) -> MetaConfig:
        low, high = self.temperature
        if not 0 <= low <= high <= 2:
            raise ValueError(
                "meta.temperature must be [low, high] with 0 <= low <= high <= 2, not "
                f"{list(self.temperature)}"
            )
        return self

    @model_validator(mode="after")
    def _one_procedure(self) -> MetaConfig:
        if self.procedure == "agent" and self.style == "dgm":
            raise ValueError(
                'meta.style = "dgm" is a procedure the engine runs; with meta.procedure = "agent" '
                "the agent's own diagnose command is the procedure: choose one"
            )
        return self

    @model_validator(mode="after")
    def _screen_under_spectra(self) -> MetaConfig:
        if self.screen and not self.spectra:
            raise ValueError(
                f"meta.screen = {self.screen} tries edits against the own tests the spectra run; "
                "set meta.spectra too (or screen = 0)"
            )
        return self

    @model_validator(mode="after")
    def _spectra_for_the_compact_diagnosis(self) -> MetaConfig:
        if self.spectra and (self.style != "compact" or self.procedure != "engine"):
            raise ValueError(
                f"meta.spectra ranks lines for the engine's compact diagnosis; with meta.style = "
                f'"{self.style}" and meta.procedure = "{self.procedure}" nothing reads them: set spectra = 0'
            )
        return self


class PlanConfig(_Section):
    """What `evolve run` does with the plan of a new run (`evolve plan CONFIG` prints it in full)."""

    confirm_above_dollars: float | None = Field(25.0, ge=0)
    """Ask before starting a run whose plan costs more than this many dollars (`--yes` skips the question;
    without a terminal the run is refused); none: never ask."""


class SeedConfig(_Section):
    """The agent at the root of the tree."""

    path: Path | None = None
    """A directory that meets the agent contract (docs/agent.md, "The agent contract"; check it with
    `evolve agent check DIR`), relative to the current directory; none: the bundled agent named by `agent`."""
    agent: Literal["seed", "bare"] = "seed"
    """Which bundled agent is the root when `path` is not set. `seed`: the tuned seed (evolve/seed/). `bare`:
    a DGM-style initial agent (evolve/seeds/bare/: one loop, a shell and a file editor, plain prompts, none of
    the seed's repairs for weak models), a low start for a lineage to climb from."""

    @model_validator(mode="after")
    def _one_source(self) -> SeedConfig:
        if self.path is not None and self.agent != "seed":
            raise ValueError(
                f'seed.path and seed.agent = "{self.agent}" both name the root agent: choose one'
            )
        return self


class WandbTracking(_Section):
    """Weights & Biases (the `tracking` extra installs it)."""

    enabled: bool = False
    """Send the run's metrics and artifacts to W&B."""
    project: str = "evolve"
    """The W&B project."""
    entity: str | None = None
    """The W&B entity (team or user; default: the key's own)."""
    mode: Literal["auto", "online", "offline"] = "auto"
    """`auto`: online when `WANDB_API_KEY` is set, else offline (files under the run's `tracking/wandb/`
    that a later `wandb sync` uploads)."""


class MlflowTracking(_Section):
    """MLflow (the `tracking` extra installs it)."""

    enabled: bool = False
    """Send the run's metrics and artifacts to MLflow."""
    uri: str | None = None
    """The tracking server (e.g. http://127.0.0.1:5000); default: MLflow's own (`MLFLOW_TRACKING_URI`, else
    `./mlruns`)."""
    experiment: str = "evolve"
    """The experiment the run is logged under (created when missing)."""


class TrackingConfig(_Section):
    """Experiment trackers that follow the run as it happens (docs/tracking.md). Off by default; a tracker
    that fails is reported in one warning line and dropped, and the run goes on. `evolve run --resume`
    continues the same tracked run (its id is kept in the run's `tracking/` directory)."""

    wandb: WandbTracking = WandbTracking()
    """Weights & Biases."""
    mlflow: MlflowTracking = MlflowTracking()
    """MLflow."""
    artifacts: bool = True
    """When the run ends, also send its config, its report and its bundle (without job logs)."""


class RunSection(_Section):
    """Identity of the run."""

    name: str = Field("run", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """Directory name under `archive_dir`."""
    seed: int = 0
    """Seed of every random choice in the run."""
    archive_dir: Path = Path("archive")
    """Where runs live."""


class RunConfig(_Section):
    """The whole configuration of one evolution run."""

    run: RunSection = RunSection()
    models: ModelsConfig = ModelsConfig()
    sandbox: SandboxConfig = SandboxConfig()
    tasks: TasksConfig = TasksConfig()
    policy: PolicyConfig = PolicyConfig()
    budget: BudgetConfig = BudgetConfig()
    gateway: GatewayConfig = GatewayConfig()
    executor: ExecutorConfig = ExecutorConfig()
    meta: MetaConfig = MetaConfig()
    seed: SeedConfig = SeedConfig()
    plan: PlanConfig = PlanConfig()
    tracking: TrackingConfig = TrackingConfig()

    @model_validator(mode="after")
    def _hosted_models_have_prices(self) -> RunConfig:
        # A model the price table does not know would count as $0, so a dollar budget could never trip.
        from evolve.models.pricing import known_price

        if self.budget.dollars is None:
            return self
        for role in ("diagnose", "modify", "solve"):
            model: ModelConfig = getattr(self.models, role)
            if (
                model.provider in ("openai", "anthropic")
                and model.price() is None
                and known_price(model.model) is None
            ):
                raise ValueError(
                    f"models.{role}: no price known for {model.model!r} and budget.dollars is set; "
                    "give price_input_per_mtok and price_output_per_mtok"
                )
        return self


def _describe(error: ErrorDetails, path: Path) -> str:
    key = ".".join(str(part) for part in error["loc"]) or "(top level)"
    if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):  # the latter: a params dataclass
        return f"{path}: unknown key `{key}`"
    if error["type"] == "missing":
        return f"{path}: missing key `{key}`"
    if error["type"] == "value_error":  # a check across keys (a model_validator) names its keys itself
        message = error["msg"].removeprefix("Value error, ")
        return f"{path}: {message}" if not error["loc"] else f"{path}: [{key}] {message}"
    got = error.get("input")
    got_text = f" (got {got!r})" if not isinstance(got, dict) else ""
    return f"{path}: key `{key}`: {error['msg']}{got_text}"


def parse_config(text: str, path: Path | str = "<config>") -> RunConfig:
    """Parse TOML text into a `RunConfig`; every failure is a one-line `ConfigError`."""
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ConfigError(_describe(errors[0], path) + more) from None


def load_config(path: Path | str) -> RunConfig:
    """Load and validate a TOML run configuration."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path)


def with_budget(config: RunConfig, assignments: Sequence[str]) -> tuple[RunConfig, dict[str, list]]:
    """`config` with budgets changed by `NAME=VALUE` assignments (`evolve run --resume RUN --budget ...`),
    and what changed: `{name: [old, new]}`. VALUE is a TOML number, or `none` for no limit where the
    budget may have none. Every failure is a one-line `ConfigError` naming the assignment."""
    budget = config.budget.model_dump()
    changes: dict[str, list] = {}
    for assignment in assignments:
        name, equals, text = assignment.partition("=")
        name, text = name.strip().removeprefix("budget."), text.strip()
        if not equals or not name or not text:
            raise ConfigError(f"--budget {assignment!r}: expected NAME=VALUE (e.g. cpu_hours=5.5)")
        if name not in BudgetConfig.model_fields:
            raise ConfigError(
                f"--budget {assignment!r}: no budget `{name}` (one of: "
                f"{', '.join(BudgetConfig.model_fields)})"
            )
        if text.lower() == "none":
            if BudgetConfig.model_fields[name].default is not None:
                raise ConfigError(f"--budget {assignment!r}: budget.{name} cannot be none")
            value = None
        else:
            try:
                value = tomllib.loads(f"value = {text}")["value"]
            except tomllib.TOMLDecodeError:
                raise ConfigError(f"--budget {assignment!r}: {text!r} is not a number") from None
        changes[name] = [budget[name], value]
        budget[name] = value
    data = config.model_dump(mode="json")
    data["budget"] = budget
    try:
        changed = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc.errors()[0], Path("--budget"))) from None
    return changed, {name: pair for name, pair in changes.items() if pair[0] != pair[1]}


def limit_text(value: object) -> str:
    """A budget's limit as people read it (`none` is no limit)."""
    return "no limit" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def dump_config(config: RunConfig) -> str:
    """The TOML text of a config (what a run freezes into its run.toml)."""
    import tomli_w

    return tomli_w.dumps(config.model_dump(mode="json", exclude_none=True))
