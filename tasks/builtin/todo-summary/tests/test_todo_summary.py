from todo.format import format_summary
from todo.models import Item


def test_summary():
    assert format_summary([Item(1, "a", True), Item(2, "b"), Item(3, "c")]) == "3 items, 1 done"
    assert format_summary([]) == "0 items, 0 done"
