"""Takes functions and constants out of a script that runs in the
emulated host only (the bench), as they are, to test them here."""
import ast
import sys


def lift(path, names):
    """{name: object} for the top-level functions and assignments `names`
    of the script at `path`; a missing one bails out of the TAP run."""
    tree = ast.parse(open(path).read())
    kept = [node for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name in names)
            or (isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) in names for t in node.targets))]
    found = {getattr(node, "name", None) or node.targets[0].id for node in kept}
    if found != set(names):
        print(f"Bail out! {path} lacks {sorted(set(names) - found)}")
        sys.exit(1)
    scope = {}
    exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), scope)
    return scope
