"""A prefix tree of words."""


class Trie:
    def __init__(self) -> None:
        self._root: dict = {}
        self._size = 0

    def insert(self, word: str) -> None:
        node = self._root
        for ch in word:
            node = node.setdefault(ch, {})
        if "$" not in node:
            node["$"] = True
            self._size += 1

    def __contains__(self, word: str) -> bool:
        node = self._find(word)
        return node is not None and "$" in node

    def __len__(self) -> int:
        return self._size

    def starts_with(self, prefix: str) -> bool:
        return self._find(prefix) is not None

    def words_with_prefix(self, prefix: str) -> list[str]:
        """All stored words that start with `prefix`, sorted."""
        node = self._find(prefix)
        found: list[str] = []
        if node is not None:
            self._collect(node, prefix, found)
        return sorted(found)

    def remove(self, word: str) -> bool:
        """Remove `word`; True if it was there. Branches left without words are pruned."""
        path = [self._root]
        for ch in word:
            if ch not in path[-1]:
                return False
            path.append(path[-1][ch])
        if "$" not in path[-1]:
            return False
        del path[-1]["$"]
        self._size -= 1
        for i in range(len(word), 0, -1):
            if path[i]:
                break
            del path[i - 1][word[i - 1]]
        return True

    def _find(self, prefix: str) -> dict | None:
        node = self._root
        for ch in prefix:
            if ch not in node:
                return None
            node = node[ch]
        return node

    def _collect(self, node: dict, prefix: str, found: list[str]) -> None:
        for key, child in node.items():
            if key == "$":
                found.append(prefix)
            else:
                self._collect(child, prefix + key, found)
