"""The conversation: offer the tools, carry out each call, hand back its result, until finish or the cap."""
import json
import os
from pathlib import Path

from agent import actions, briefs, gateway


class Session:
    def __init__(self, tree: Path, turns: int, record: Path | None = None):
        self.tree = tree
        self.turns = turns
        self.record = record
        self.room = int(os.environ.get("EVOLVE_CONTEXT_CHARS", "60000"))
        self.history: list[dict] = [{"role": "system", "content": briefs.ROLE}]

    def remember(self, message: dict) -> None:
        self.history.append(message)
        if self.record is not None:
            with self.record.open("a") as out:
                out.write(json.dumps(message) + "\n")

    def fit(self) -> None:
        """Blank the oldest tool results until the history fits its room (calls and results stay paired)."""
        for message in self.history:
            if sum(len(m.get("content") or "") for m in self.history) <= self.room:
                return
            if message["role"] == "tool":
                message["content"] = briefs.ELIDED

    def converse(self, opening: str) -> str:
        """Why the session ended."""
        self.remember({"role": "user", "content": opening})
        for _ in range(self.turns):
            self.fit()
            try:
                message = gateway.complete(self.history, actions.FUNCTIONS)
            except gateway.Refused as exc:
                return f"the model is unavailable: {exc}"
            calls = message.get("tool_calls") or []
            self.remember({"role": "assistant", "content": message.get("content") or "", "tool_calls": calls}
                          if calls else {"role": "assistant", "content": message.get("content") or ""})
            if not calls:
                self.remember({"role": "user", "content": briefs.NO_CALL})
            for call in calls:
                name = call["function"]["name"]
                if name == "finish":
                    return "finished"
                report = actions.perform(self.tree, name, call["function"].get("arguments") or "{}")
                self.remember({"role": "tool", "tool_call_id": call["id"], "content": report})
        return f"the turn cap ({self.turns}) was reached"
