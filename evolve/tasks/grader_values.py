"""Checks against a literal, taken out of the tested process (standard library only: it runs in the grading
sandbox as root beside grader_script.py, before the tests run; the host imports it in its tests).

Root rewrites each hidden pytest file before the tests get it: a check of a value against a literal at the
top of a test's body (`assert A == C`, `A != C`, `A is True/False/None`, `A is not ...`; unittest's
`assertEqual`, `assertNotEqual`, `assertIsNone`, `assertIsNotNone`, `assertIs(A, True/False/None)`)
becomes `_evolve_value(A)`: the test computes A and sends it, as plain data, over the results pipe
(grader_script's plugin); the literal and the comparison stay with root, which compares after the run
(`judge`). `with pytest.raises(E): A` (one expression, no `as`) is sent the same way: the exception
computing A raised is the answer. The file the tests read holds no expected value of those checks, so
code in the test process
that forges a pass must produce the right value itself, as HumanEval's out-of-process checks already ask;
a real test and a forged one read the same.

Only tests whose every top-level statement runs when they pass are rewritten (as for canaries:
`parametrize` the only decorator, no `return`, `yield`, `await` or skip in them), so a test reported
passed sent exactly one value per check: a passed test with any other number of values was reported by
the tested code itself (`forged`). Other checks (truth tests, `in`, `pytest.raises`, assertions in loops or
helpers, expected values from `parametrize`) stay in the process, as pytest runs them.
"""

import ast
import re

if __package__:  # imported on the host; in the sandbox it sits beside this module
    from evolve.tasks import grader_calls as calls
else:
    import grader_calls as calls  # type: ignore[import-not-found,no-redef]

NAME = "_evolve_value"
IMPORT = f"from evolve_results import value as {NAME}"
"""What a rewritten file imports (the results plugin, on pytest's path for the run)."""
_SKIPS = frozenset({"skip", "skipTest", "xfail", "importorskip", "skipif"})
_UNITTEST = {
    "assertEqual": "eq",
    "assertEquals": "eq",
    "assertNotEqual": "ne",
    "assertNotEquals": "ne",
    "assertIs": "is",
    "assertIsNot": "isnot",
}
_OPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Is: "is", ast.IsNot: "isnot"}


def take(source, rel, prefix="test"):
    """(`source` rewritten, {test id: its checks in the order the test sends them}); ids `rel::name` /
    `rel::Class::name`; a check {"op", "literal"}, {"op", "rows"} where the expected value is a parameter,
    or {"op": "raises", "names", "match"}. A file with nothing to take, or that does not parse, is kept as
    it is.

    Every check is sent the same way, `_evolve_value(lambda: A)`, and in a parametrized test with the
    case's row, `_evolve_value(lambda: A, ROW)` (ROW a column of row numbers: the expected column where
    there is one, renamed, else a column added), so the form of a check tells neither its expected value
    nor whether it expects a value or an exception."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source, {}
    taken: dict[str, list] = {}
    for scope, fn in _tests(tree, prefix):
        checks: list[dict] = []
        table = _table(fn)
        rows_column = None
        for at, stmt in enumerate(fn.body):
            found = _check(stmt, table if rows_column is None else {}) or _raises(stmt)
            if found is None:
                continue
            value, op, expected = found
            if isinstance(expected, ast.Name):  # the expected values are a column of the parametrize table
                rows_column = table[expected.id]
                checks.append({"op": op, "rows": [literal(elts[k])[1] for elts, k in rows_column]})
                for n, (elts, k) in enumerate(rows_column):  # the column keeps the case's row, not its value
                    elts[k] = ast.Constant(n)
                _rename_parameter(fn, expected.id)
            elif op == "raises":
                checks.append({"op": op, **expected})
            else:
                checks.append({"op": op, "literal": expected})
            thunk = ast.Lambda(ast.arguments([], [], None, [], [], None, []), value)
            fn.body[at] = ast.copy_location(ast.Expr(ast.Call(ast.Name(NAME, ast.Load()), [thunk], [])), stmt)
        if not checks:
            continue
        if _parametrize(fn) is not None and (rows_column is not None or _add_rows(fn)):
            for stmt in fn.body:
                if _is_sent(stmt):
                    stmt.value.args.append(ast.Name(ROW, ast.Load()))
        taken["::".join([rel, *([scope.name] if isinstance(scope, ast.ClassDef) else []), fn.name])] = checks
    if not taken:
        return source, {}
    tree.body.insert(_after_preamble(tree), ast.parse(IMPORT).body[0])
    return (ast.unparse(ast.fix_missing_locations(tree)) + "\n").encode(), taken


ROW = "case"
"""The parameter a parametrized test's checks are sent with (its row in the table)."""


def _is_sent(stmt):
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Name)
        and stmt.value.func.id == NAME
    )


def _rename_parameter(fn, name):
    """The test's parameter `name` (the expected column) renamed ROW: in the table's names, its signature
    and the one check that used it."""
    names_node = _parametrize(fn).args[0]
    if isinstance(names_node, ast.Constant):
        old = str(names_node.value).split(",")
        names_node.value = ", ".join(ROW if n.strip() == name else n.strip() for n in old)
    else:
        for e in names_node.elts:
            if isinstance(e, ast.Constant) and e.value == name:
                e.value = ROW
    for arg in fn.args.args:
        if arg.arg == name:
            arg.arg = ROW
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == name:
            node.id = ROW


def _add_rows(fn):
    """A column of row numbers added to the test's table (and its signature); False where it cannot be."""
    call = _parametrize(fn)
    names_node, cases = call.args
    if any(a.arg == ROW for a in fn.args.args) or not isinstance(cases, (ast.List, ast.Tuple)):
        return False
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        count = len([n for n in names_node.value.split(",") if n.strip()])
        names_node.value = names_node.value.rstrip(", ") + ", " + ROW
    elif isinstance(names_node, (ast.List, ast.Tuple)):
        count = len(names_node.elts)
        names_node.elts.append(ast.Constant(ROW))
    else:
        return False
    for n, row in enumerate(cases.elts):
        if count == 1:
            cases.elts[n] = ast.Tuple([row, ast.Constant(n)], ast.Load())
        elif isinstance(row, (ast.Tuple, ast.List)):
            row.elts.append(ast.Constant(n))
        else:
            return False  # (checked before any change: `_table` accepted this table)
    fn.args.args.append(ast.arg(ROW))
    return True


def _raises(stmt):
    """(the call, "raises", {"names", "match"}) for `with pytest.raises(E[, match=literal]): <one expression>`
    (no `as`), else None."""
    if not (
        isinstance(stmt, ast.With)
        and len(stmt.items) == 1
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Expr)
        and stmt.items[0].optional_vars is None
    ):
        return None
    call = stmt.items[0].context_expr
    if not (
        isinstance(call, ast.Call)
        and len(call.args) == 1
        and (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "raises"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "pytest"
        )
    ):
        return None
    kinds = call.args[0].elts if isinstance(call.args[0], ast.Tuple) else [call.args[0]]
    names = [
        k.attr if isinstance(k, ast.Attribute) else k.id if isinstance(k, ast.Name) else None for k in kinds
    ]
    match = [k for k in call.keywords if k.arg == "match"]
    if (
        None in names
        or len(match) != len(call.keywords)
        or match
        and not (isinstance(match[0].value, ast.Constant) and isinstance(match[0].value.value, str))
    ):
        return None
    pattern = match[0].value if match else None
    body = stmt.body[0]
    assert isinstance(body, ast.Expr)  # checked above
    return (
        body.value,
        "raises",
        {"names": names, "match": pattern.value if isinstance(pattern, ast.Constant) else None},
    )


def matches(value, op, literal):
    """Whether a value sent by a test meets the check (`value`: decoded plain data)."""
    if op == "eq":
        return _equal(value, literal)
    if op == "ne":
        return not _equal(value, literal)
    same = value is literal or (type(value) is type(literal) and value == literal)  # True/False/None
    return same if op == "is" else not same


def _equal(value, literal):
    try:
        return bool(value == literal)
    except Exception:  # noqa: BLE001 - plain data compares; anything else fails the check
        return False


def judge(records, taken, same):
    """(why the run is forged, or None; {reported test id: why its checks failed}) for the tests reported
    passed. `records`: the run's records (values as {"value_of": test id, "value": plain data} or
    {"value_of", "unplain": why}); `taken`: from `take`; `same(reported, test)` as grader_canaries'."""
    failed: dict[str, str] = {}
    sent: dict[str, list] = {}
    seen: dict[tuple, set] = {}
    for record in records:
        if "value_of" in record:
            sent.setdefault(str(record["value_of"]), []).append(record)
    for record in records:
        if "test" not in record or record.get("outcome") != "passed" or record.get("when", "call") != "call":
            continue
        test = str(record["test"])
        checks = next((c for t, c in taken.items() if same(test, t)), None)
        if checks is None:
            continue
        values = sent.get(test, [])
        if len(values) != len(checks):
            return (
                f"test {test} was reported passed with {len(values)} of its {len(checks)} checked values "
                "sent: the tested code wrote its own verdict"
            ), {}
        for n, (value, check) in enumerate(zip(values, checks), 1):
            why = _wrong(value, check)
            if why:
                failed[test] = f"check {n}: {why}"
                break
            if "rows" in check:
                seen.setdefault((test.split("[", 1)[0], n), set()).add(value.get("row"))
    for (test, n), rows in seen.items():  # every case of a parametrized check, each under its own row
        check = next(c for t, c in taken.items() if same(test, t))[n - 1]
        if len(rows) != len(check["rows"]) and test not in failed:
            failed[test] = f"check {n}: {len(rows)} of its {len(check['rows'])} cases reported passed"
    return None, failed


def _wrong(value, check):
    """Why a value sent for `check` fails it, or None."""
    if check["op"] == "raises" or "raised" in value:
        return _wrong_exception(value, check)
    if "unplain" in value:
        return f"the value is not plain data ({str(value['unplain'])[:200]})"
    try:
        got = calls.decode(value.get("value"))
    except (ValueError, TypeError, KeyError, RecursionError, AttributeError) as exc:
        return f"the value sent is not plain data ({exc})"
    expected = check.get("literal")
    if "rows" in check:
        row = value.get("row")
        if type(row) is not int or not 0 <= row < len(check["rows"]):
            return f"no case of the table sent it (row {str(row)[:50]})"
        expected = check["rows"][row]
    if matches(got, check["op"], expected):
        return None
    return f"{_short(got)} {_SHOWN[check['op']]} {_short(expected)} is false"


_SHOWN = {"eq": "==", "ne": "!=", "is": "is", "isnot": "is not"}


def _wrong_exception(value, check):
    """Why a value or exception sent for a check fails it (an exception where a value is expected, or a
    value, another exception or message where one is), or None."""
    raised = value.get("raised")
    if check["op"] != "raises":
        return f"raised {str(raised[0] if isinstance(raised, list) and raised else raised)[:100]}"
    want = " or ".join(check["names"])
    if not isinstance(raised, list):
        return f"DID NOT RAISE {want}"
    if not any(name in raised for name in check["names"]):
        return f"raised {str(raised[0] if raised else '?')[:100]}, not {want}"
    message = str(value.get("message", ""))
    try:
        found = check["match"] is None or re.search(check["match"], message) is not None
    except re.error:
        found = False  # a pattern pytest would have refused: no pass by it
    return None if found else f"{want} raised, but its message does not match {check['match']!r}"


def _short(value):
    text = repr(value)
    return text if len(text) <= 300 else text[:150] + "..." + text[-100:]


def _tests(tree, prefix):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _whole(node, prefix):
            yield tree, node
        elif isinstance(node, ast.ClassDef) and not node.decorator_list:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and _whole(item, prefix):
                    yield node, item


def _whole(fn, prefix):
    """A test whose every top-level statement runs whenever it passes."""
    if not fn.name.startswith(prefix) or any(not _is_parametrize(d) for d in fn.decorator_list):
        return False
    for node in ast.walk(fn):
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.AsyncFunctionDef, ast.Await)):
            return False
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _SKIPS
            or isinstance(node, ast.Name)
            and node.id in _SKIPS
        ):
            return False
        if isinstance(node, ast.Name) and node.id == NAME:
            return False  # a file that names ours already: left as it is
    return True


def _is_parametrize(decorator):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "parametrize"


def literal(node):
    """(True, value) when `node` is a literal (a constant, or a list, tuple, set or dict of them, or integer
    arithmetic on them), else (False, None)."""
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    arithmetic = _arithmetic(node)
    return (True, arithmetic) if arithmetic is not None else (False, None)


_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}


def _arithmetic(node, depth=0):
    """The value of integer arithmetic on literals (`15 * 99 + 900`), kept small; else None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _arithmetic(node.operand, depth + 1)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _arithmetic(node.left, depth + 1), _arithmetic(node.right, depth + 1)
        if left is None or right is None:
            return None
        result = _ARITHMETIC[type(node.op)](left, right)
        return result if abs(result) < 2**63 else None
    return None


def _check(stmt, table=None):
    """(the value the test computes, op, literal) when `stmt` checks a value against a literal, or (..., the
    parameter's Name) against a column of literals of the test's parametrize `table`; else None."""
    table = table or {}
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS):
            return None
        op, left, right = _OPS[type(test.ops[0])], test.left, test.comparators[0]
        for value, name in ((left, right), (right, left)):
            if (
                isinstance(name, ast.Name)
                and name.id in table
                and not any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(value))
            ):
                cells = [literal(elts[k])[1] for elts, k in table[name.id]]
                if op in ("eq", "ne") or all(type(c) is bool or c is None for c in cells):
                    return value, op, name
        return _sides(op, left, right)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if not (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        ):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg != "msg" for k in call.keywords):
            return None
        if func.attr in ("assertIsNone", "assertIsNotNone") and len(call.args) in (1, 2):
            return call.args[0], "is" if func.attr == "assertIsNone" else "isnot", None
        if func.attr in _UNITTEST and len(call.args) in (2, 3):
            return _sides(_UNITTEST[func.attr], call.args[0], call.args[1])
    return None


def _sides(op, left, right):
    (left_is, left_value), (right_is, right_value) = literal(left), literal(right)
    if left_is == right_is:
        return None  # two values, or two literals: nothing to take out
    value, lit = (right, left_value) if left_is else (left, right_value)
    if (
        op in ("is", "isnot")
        and lit not in (True, False, None)
        or op in ("is", "isnot")
        and not isinstance(lit, (bool, type(None)))
    ):
        return None  # `is` against another literal tests identity, which plain data cannot carry
    return value, op, lit


def _parametrize(fn):
    """The test's one `parametrize` call with two positional arguments and no keywords, else None."""
    if len(fn.decorator_list) != 1 or not isinstance(fn.decorator_list[0], ast.Call):
        return None
    call = fn.decorator_list[0]
    return call if not call.keywords and len(call.args) == 2 else None


def _table(fn):
    """{parameter: where its cells are, (list, index)} of the columns of a test's one `parametrize` (names
    as a string or a list of
    strings, the cases a list or tuple of rows, no other argument) whose every cell is a literal and which
    the test's body names exactly once; {} for anything else."""
    if len(fn.decorator_list) != 1 or not isinstance(fn.decorator_list[0], ast.Call):
        return {}
    call = fn.decorator_list[0]
    if call.keywords or len(call.args) != 2:
        return {}
    names_node, cases = call.args
    if not isinstance(cases, (ast.List, ast.Tuple)):
        return {}
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
    elif isinstance(names_node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts
    ):
        names = [str(e.value) for e in names_node.elts if isinstance(e, ast.Constant)]
    else:
        return {}
    rows = [
        row.elts
        for row in cases.elts
        if isinstance(row, (ast.Tuple, ast.List)) and len(row.elts) == len(names)
    ]
    if len(names) == 1:
        columns = {names[0]: [(cases.elts, n) for n in range(len(cases.elts))]}
    elif len(rows) == len(cases.elts):
        columns = {name: [(row, k) for row in rows] for k, name in enumerate(names)}
    else:
        return {}
    uses = [n.id for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)]
    return {
        name: cells
        for name, cells in columns.items()
        if cells and uses.count(name) == 1 and all(literal(elts[k])[0] for elts, k in cells)
    }


def _after_preamble(tree):
    """Where an import may go: after the docstring and `from __future__` imports."""
    at = 0
    body = tree.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        at = 1
    while at < len(body) and isinstance(body[at], ast.ImportFrom) and body[at].module == "__future__":
        at += 1
    return at
