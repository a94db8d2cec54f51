"""The embedded model's context: a `llama_cpp.Llama` that keeps interleaved conversations' prefixes
(`evolve.llm.prefix_cache`), counts the prompt tokens it really read, and returns every byte
(`evolve.llm.llama_fix`). Imported only where llama-cpp-python is installed (the model server)."""

from __future__ import annotations

import ctypes
from collections.abc import Generator, Sequence
from typing import Any

import llama_cpp

from evolve.llm.llama_fix import fix_model
from evolve.llm.prefix_cache import PrefixCache, SavedContext, common_prefix

SAVE_AT_LEAST = 64
"""A context is saved before it is overwritten only when this many of its tokens would be lost."""
CHUNK = 64
"""Prompts are read in batches of this many tokens from positions that are multiples of it, and a reused
prefix is cut back to such a position: a token's keys and values then come from the same batch whether
the prompt is read from scratch or after a reused prefix (llama.cpp's results depend on the batch, and a
seeded run must sample alike on a server that has seen it before)."""


class CachingLlama(llama_cpp.Llama):
    """One llama.cpp context plus saved contexts; `prompt_read` is what the last request evaluated."""

    def __init__(self, *args: Any, cache: PrefixCache, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fix_model(self._model)
        self.prefix_cache = cache
        self.prompt_read = 0
        self.restored = 0
        self._reading_prompt = False

    def generate(  # type: ignore[override]  # the same keywords, passed on
        self, tokens: Sequence[int], **kwargs: Any
    ) -> Generator[int, Sequence[int] | None, None]:
        tokens = list(tokens)
        self._switch_context(tokens)
        reused = common_prefix(self.input_ids[: self.n_tokens].tolist(), tokens[:-1])
        self.n_tokens = reused - reused % CHUNK
        self._reading_prompt = True
        self.prompt_read = 0
        return super().generate(tokens, **kwargs)

    def eval(self, tokens: Sequence[int]) -> None:
        if self._reading_prompt:  # generate's first eval is the prompt's unread suffix
            self._reading_prompt = False
            self.prompt_read = len(tokens)
        super().eval(tokens)

    def _switch_context(self, tokens: list[int]) -> None:
        """Save the live context if this request would overwrite much of it, and bring back a saved
        one that shares more of `tokens` than the live one does."""
        live_tokens = self.input_ids[: self.n_tokens].tolist()
        live = common_prefix(live_tokens, tokens)
        match = self.prefix_cache.best(tokens)
        if self.n_tokens - live >= SAVE_AT_LEAST:
            self.prefix_cache.save(self._snapshot(live_tokens))
        if match is not None and match.shared > live:
            self._restore(match.saved)

    def _snapshot(self, tokens: list[int]) -> SavedContext:
        size = llama_cpp.llama_state_seq_get_size(self._ctx.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self._ctx.ctx, buffer, size, 0)
        return SavedContext(tuple(tokens), ctypes.string_at(buffer, written))

    def _restore(self, saved: SavedContext) -> None:
        self._ctx.kv_cache_clear()
        self.n_tokens = 0
        self._requires_eval = True
        buffer = (ctypes.c_uint8 * len(saved.state)).from_buffer_copy(saved.state)
        if llama_cpp.llama_state_seq_set_data(self._ctx.ctx, buffer, len(saved.state), 0) == 0:
            self._ctx.kv_cache_clear()  # a state llama.cpp refuses: read the prompt from scratch
            return
        self.input_ids[: len(saved.tokens)] = saved.tokens
        self.n_tokens = len(saved.tokens)
        self.restored += 1
