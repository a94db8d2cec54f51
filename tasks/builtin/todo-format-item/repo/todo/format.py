"""How items look on the terminal."""

from todo.models import Item


def format_item(item: Item) -> str:
    """One line: '[x] 3 (p1) Buy milk #home #shop' -- '[x]' when done, '[ ]' when not, then the id,
    the priority as 'p<N>' in parentheses, the title, and each tag prefixed with '#'."""
    raise NotImplementedError


def format_summary(items: list[Item]) -> str:
    """'N items, M done'."""
    done = sum(item.done for item in items)
    return f"{len(items)} items, {done} done"
