"""``spiral-plugin``: inspect the plugins a process registers (list, graph, dot, explain, validate).

The registry lives in the process, so the command first loads plugins from the entry-point groups
given with ``--load-entrypoints`` and from Python files or directories given with ``--load-path`` (each file's ``plugins`` list, ``plugin`` object or
``create_plugins()`` factory; ``--load-strict`` fails on a path without plugins). Exit status: 0
fine, 1 ``validate`` found problems, 2 an error.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import plugin

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """The ``spiral-plugin`` command (``argv`` defaults to ``sys.argv[1:]``): loads the plugins named
    by ``--load-entrypoints``/``--load-path``, then lists, graphs or explains them or validates their
    dependencies. Returns the exit status: 0, 1 when ``validate`` finds a problem, 2 on an error."""
    ap = argparse.ArgumentParser(prog="spiral-plugin", description=__doc__.splitlines()[0])
    ap.add_argument("--load-entrypoints", action="append", default=[], metavar="GROUP",
                    help="load the plugins installed distributions advertise in this entry-point group (repeatable)")
    ap.add_argument("--load-path", action="append", default=[], help="a plugin .py file or directory (repeatable)")
    ap.add_argument("--no-recursive", action="store_true", help="do not descend into subdirectories")
    ap.add_argument("--load-strict", action="store_true",
                    help="fail when a --load-path holds no .py file or a module exposes no plugin")
    sub = ap.add_subparsers(dest="verb", required=True)
    p_list = sub.add_parser("list", help="registered plugin ids")
    p_list.add_argument("--json", action="store_true")
    p_graph = sub.add_parser("graph", help="dependency graph as JSON")
    p_graph.add_argument("--internal-only", action="store_true")
    p_dot = sub.add_parser("dot", help="dependency graph as Graphviz DOT")
    p_dot.add_argument("--internal-only", action="store_true")
    p_dot.add_argument("--no-missing", action="store_true")
    p_dot.add_argument("--rankdir", default="LR")
    p_explain = sub.add_parser("explain", help="one plugin's metadata, dependencies and dependents")
    p_explain.add_argument("plugin_id")
    p_val = sub.add_parser("validate", help="missing dependencies and cycles")
    p_val.add_argument("--internal-only", action="store_true")
    p_val.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        for group in args.load_entrypoints:
            plugin.load_entrypoints(group)
        for path in args.load_path:
            plugin.load_path(path, recursive=not args.no_recursive, strict=args.load_strict)
        if args.verb == "list":
            ids = plugin.list_plugins()
            print(json.dumps(ids) if args.json else "\n".join(ids))
        elif args.verb == "graph":
            print(json.dumps(plugin.dependency_graph(internal_only=args.internal_only), indent=2))
        elif args.verb == "dot":
            print(plugin.dependency_dot(internal_only=args.internal_only, show_missing=not args.no_missing,
                                        rankdir=args.rankdir), end="")
        elif args.verb == "explain":
            print(json.dumps(plugin.explain(args.plugin_id), indent=2))
        else:
            report = plugin.validate_dependencies(internal_only=args.internal_only)
            if args.json:
                print(json.dumps(report))
            else:
                print("ok" if report["ok"] else "invalid")
                print(f"missing: {len(report['missing'])} plugin(s)")
                print(f"cycles: {len(report['cycles'])}")
            return 0 if report["ok"] else 1
        return 0
    except Exception as exc:  # the exit status carries it; the message says what
        print(f"spiral-plugin: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
