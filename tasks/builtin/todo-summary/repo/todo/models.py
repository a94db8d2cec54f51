"""The to-do item."""

from dataclasses import dataclass, field


@dataclass
class Item:
    id: int
    title: str
    done: bool = False
    priority: int = 3
    """1 (most urgent) .. 5."""
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "done": self.done, "priority": self.priority,
                "tags": list(self.tags)}

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        return cls(id=data["id"], title=data["title"], done=data.get("done", False),
                   priority=data.get("priority", 3), tags=list(data.get("tags", [])))
