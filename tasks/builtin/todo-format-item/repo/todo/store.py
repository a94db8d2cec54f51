"""Items kept in a JSON file."""

import json
from pathlib import Path

from todo.models import Item


class NotFound(KeyError):
    pass


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[Item] = []
        if path.exists():
            self.items = [Item.from_dict(d) for d in json.loads(path.read_text())]

    def save(self) -> None:
        self.path.write_text(json.dumps([item.to_dict() for item in self.items], indent=2))

    def add(self, title: str, priority: int = 3, tags: list[str] | None = None) -> Item:
        """A new item with an id one higher than any id ever in the list (ids are never reused)."""
        if not 1 <= priority <= 5:
            raise ValueError("priority must be between 1 and 5")
        next_id = max((item.id for item in self.items), default=0) + 1
        item = Item(next_id, title, priority=priority, tags=list(tags or []))
        self.items.append(item)
        return item

    def get(self, item_id: int) -> Item:
        for item in self.items:
            if item.id == item_id:
                return item
        raise NotFound(item_id)

    def complete(self, item_id: int) -> Item:
        item = self.get(item_id)
        item.done = True
        return item

    def remove(self, item_id: int) -> Item:
        item = self.get(item_id)
        self.items.remove(item)
        return item

    def listing(self, pending_only: bool = False, tag: str | None = None) -> list[Item]:
        """Items sorted by priority (1 first), then by id."""
        chosen = [i for i in self.items if not (pending_only and i.done) and (tag is None or tag in i.tags)]
        return sorted(chosen, key=lambda item: (item.priority, item.id))
