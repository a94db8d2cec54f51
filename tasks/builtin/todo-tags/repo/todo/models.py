"""The to-do item."""

from dataclasses import dataclass


@dataclass
class Item:
    id: int
    title: str
    done: bool = False
    priority: int = 3
    """1 (most urgent) .. 5."""

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "done": self.done, "priority": self.priority}

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        return cls(id=data["id"], title=data["title"], done=data.get("done", False),
                   priority=data.get("priority", 3))
