"""Models: one client interface (`client.ChatModel`), the host-side gateway sandboxes call
(`gateway.Gateway`), and local model servers (`servers.LlamaCppServer`, `servers.VLLMServer`).

Entry points for the engine:
- `stack.ModelStack(config.models)`: starts the servers the config needs; `.models[role]`.
- `gateway.Gateway(models, exchanges_dir=run.path / "exchanges", usage_sink=run)`, then
  `open_job(job_id, node_id, role, token_budget) -> JobChannel` (`socket_path`, `sandbox_env()`),
  `close_job(job_id) -> JobReport` (usage, requests served, upstream failures).
  `Gateway(replay_from=...)` re-runs recorded jobs with no model.
"""
