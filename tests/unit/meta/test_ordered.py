"""Where an agent builds the conversation it sent out of order (evolve.meta.ordered)."""

from __future__ import annotations

from evolve.meta.evidence import TaskRun, Turn
from evolve.meta.ordered import misordered

# The result of each action is never added: the model's replies follow one another.
CHAT = """class Chat:
    def __init__(self, client, system):
        self.client = client
        self.history = [{"role": "system", "content": system}]

    def turn(self, reply, result):
        self.history.append({
            "role": "assistant", "content": reply,
        })
        return self.client.create(model="m", messages=self.history)


def body(history):
    request = {}
    request["messages"] = history
    return request
"""


def _run(task: str, outcome: str, *disorders: str) -> TaskRun:
    return TaskRun(task, outcome, tuple(Turn("```bash\nls\n```", disorder=d) for d in disorders))


def test_the_lines_building_or_sending_the_conversation_rank_by_the_failures_out_of_order(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "chat.py").write_text(CHAT)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_chat.py").write_text(CHAT)  # the agent's tests are no place
    runs = [
        _run("a", "fail", "", "the model's replies twice in a row"),
        _run("b", "fail", ""),
        _run("c", "pass", "the model's replies twice in a row"),  # a pass is not counted
    ]
    found = misordered(tmp_path, runs)
    assert [(x.path, x.line, x.score) for x in found] == [
        ("agent/chat.py", 4, 0.5),
        ("agent/chat.py", 8, 0.5),
        ("agent/chat.py", 10, 0.5),
        ("agent/chat.py", 15, 0.5),
    ]
    assert found[0].evidence.startswith(
        "1 of 2 failed evaluations sent the model a request out of the chat's order "
        '("the model\'s replies twice in a row")'
    )
    assert misordered(tmp_path, runs[1:]) == []  # no failed evaluation sent one
