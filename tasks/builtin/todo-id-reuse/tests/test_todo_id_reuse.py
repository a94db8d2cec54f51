from todo.store import Store


def test_ids_unique_after_remove(tmp_path):
    store = Store(tmp_path / "t.json")
    store.add("a")
    store.add("b")
    store.remove(1)
    third = store.add("c")
    assert third.id == 3
    assert sorted(i.id for i in store.items) == [2, 3]
