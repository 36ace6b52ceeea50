#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle longer than
three modules (DEVELOPERS.md: "No import circle longer than three files").

Reads the module graph `cargo modules dependencies` prints (DOT; functions,
types, traits and outside crates filtered out, so every item's uses are
counted against the module that holds it) on stdin and looks, in each
strongly connected set of modules, for an elementary cycle of "uses" edges
through more than three modules. Prints the sets and any such cycle.
"""

import re
import sys

MAX_CYCLE = 3
# A bound on the search in one strongly connected set; a set too tangled to
# search within it is reported as a failure too.
SEARCH_BUDGET = 2_000_000

EDGE = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"\s*\[(.*)\]')


def read_graph(text):
    uses = {}
    for line in text.splitlines():
        m = EDGE.match(line)
        if not m or 'label="uses"' not in m.group(3):
            continue
        a, b = m.group(1), m.group(2)
        if a != b:
            uses.setdefault(a, set()).add(b)
            uses.setdefault(b, set())
    return uses


def strongly_connected(graph):
    index, low, on_stack, stack, sets = {}, {}, set(), [], []
    counter = [0]

    def visit(root):
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    members.append(top)
                    if top == node:
                        break
                sets.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sets


def long_cycle(graph, members):
    """An elementary cycle through more than MAX_CYCLE of `members`, or None;
    raises RuntimeError when the search runs out of budget."""
    inside = set(members)
    budget = [SEARCH_BUDGET]
    order = {m: i for i, m in enumerate(members)}
    for start in members:
        # Cycles are found once, from their lowest member.
        path, on_path = [start], {start}

        def search(node):
            budget[0] -= 1
            if budget[0] < 0:
                raise RuntimeError("search budget exhausted")
            for nxt in sorted(graph[node] & inside):
                if order[nxt] < order[start]:
                    continue
                if nxt == start:
                    if len(path) > MAX_CYCLE:
                        return list(path)
                    continue
                if nxt in on_path:
                    continue
                path.append(nxt)
                on_path.add(nxt)
                found = search(nxt)
                if found:
                    return found
                path.pop()
                on_path.discard(nxt)
            return None

        found = search(start)
        if found:
            return found
    return None


def main():
    text = sys.stdin.read()
    if "digraph" not in text:
        print("module_cycles: no module graph on stdin", file=sys.stderr)
        return 2
    graph = read_graph(text)
    failed = False
    for members in strongly_connected(graph):
        if len(members) < 2:
            continue
        try:
            cycle = long_cycle(graph, members)
        except RuntimeError as e:
            print(f"modules in a circle ({len(members)}): {', '.join(members)}: {e}")
            failed = True
            continue
        if cycle:
            failed = True
            print(f"import circle of {len(cycle)} modules: {' -> '.join(cycle + [cycle[0]])}")
        else:
            print(f"ok: {len(members)} modules in circles of at most {MAX_CYCLE}: {', '.join(members)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
