"""The command line."""

import argparse
import sys
from pathlib import Path

from todo.format import format_item, format_summary
from todo.store import NotFound, Store


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("--file", type=Path, default=Path("todo.json"))
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    add.add_argument("--priority", type=int, default=3)
    add.add_argument("--tag", action="append", default=[])
    listing = sub.add_parser("list")
    listing.add_argument("--pending", action="store_true")
    listing.add_argument("--tag")
    for name in ("done", "rm"):
        sub.add_parser(name).add_argument("id", type=int)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = Store(args.file)
    try:
        if args.command == "add":
            item = store.add(args.title, args.priority, args.tag)
            print(f"added {item.id}")
        elif args.command == "list":
            items = store.listing(pending_only=args.pending, tag=args.tag)
            for item in items:
                print(format_item(item))
            print(format_summary(items))
        elif args.command == "done":
            print(format_item(store.complete(args.id)))
        elif args.command == "rm":
            print(f"removed {store.remove(args.id).id}")
    except NotFound as exc:
        print(f"error: no item {exc.args[0]}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store.save()
    return 0
