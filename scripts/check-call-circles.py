#!/usr/bin/env python3
"""Finds files of the CH4 glue that call each other in a circle.

A file calls another when it calls a function the other defines (external
functions only: static ones stay inside their file; functions defined in a
header are the header's, not a file's), also through a macro of the
component's headers (MPIDI_NBRMA_TRACE calls MPIDI_NBRMA_trace_line). The files of a circle (a strongly
connected component of the call graph with more than one file) depend on each
other both ways, which the layout rule of ch4_netmod_rma/ch4/README.md
forbids.

    check-call-circles.py [COMPONENT_CH4_DIR]   (default: the checkout's own)

Prints every circle, its files and one call per arrow; exit status 1 if there
is one. Reads the sources as text: no compiler, no MPICH needed. A call
through a function pointer (the engine's transport table, the mailbox's
deliver function) is no arrow: the callee is chosen at run time.
"""
import os
import re
import sys

DEF_RE = re.compile(r'^(?!static\b)[A-Za-z_][\w \*]*?\b(MPI[DXR]?\w*|nbrma_\w+)\s*\(([^;{]*)$')
CALL_RE = re.compile(r'\b((?:MPIDI_NBRMA|MPIR|MPIX|nbrma)_\w+)\s*\(')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def definitions(text):
    """External functions defined at file level: a line starting at column 0
    with a name and '(' whose declaration ends in '{' (not ';')."""
    found = set()
    lines = text.split('\n')
    for i, line in enumerate(lines):
        m = DEF_RE.match(line)
        if not m:
            continue
        rest = line[m.end(1):]
        j = i
        while ';' not in rest and '{' not in rest and j + 1 < len(lines):
            j += 1
            rest += lines[j]
        if '{' in rest and (';' not in rest or rest.index('{') < rest.index(';')):
            found.add(m.group(1))
    return found


MACRO_RE = re.compile(r'^#\s*define\s+(\w+)\(', re.M)


def macro_calls(headers):
    """The functions each function-like macro of the headers calls."""
    calls = {}
    for text in headers:
        joined = text.replace('\\\n', ' ')
        for line in joined.split('\n'):
            m = MACRO_RE.match(line)
            if m:
                calls[m.group(1)] = set(CALL_RE.findall(line[m.end():]))
    return calls


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    args = argv[1:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             '..', 'ch4_netmod_rma', 'ch4')
    root = os.path.normpath(root)
    texts, headers = {}, []
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith('.c') or f.endswith('.h'):
                path = os.path.join(dirpath, f)
                with open(path, encoding='utf-8', errors='replace') as fh:
                    text = strip_comments(fh.read())
                if f.endswith('.c'):
                    texts[os.path.relpath(path, root)] = text
                else:
                    headers.append(text)
    macros = macro_calls(headers)
    owner = {}
    for path, text in texts.items():
        for name in definitions(text):
            owner.setdefault(name, path)
    edges, witness = {}, {}
    for path, text in texts.items():
        called = set(CALL_RE.findall(text))
        for macro in set(re.findall(r'\b(\w+)\s*\(', text)) & set(macros):
            called |= macros[macro]
        for name in called:
            callee = owner.get(name)
            if callee and callee != path:
                edges.setdefault(path, set()).add(callee)
                witness.setdefault((path, callee), name)
    circles = [c for c in sccs(texts.keys(), edges) if len(c) > 1]

    for c in circles:
        print('circle of %d files:' % len(c))
        members = set(c)
        for a in c:
            for b in sorted(edges.get(a, ())):
                if b in members:
                    print('  %s -> %s (%s)' % (a, b, witness[(a, b)]))
    print('call circles: %d (%d files read)' % (len(circles), len(texts)))
    return 1 if circles else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
