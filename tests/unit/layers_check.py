#!/usr/bin/env python3
"""layers_check.py LIBDIR -- checks lib/README's include rule.

Reads the layer table of LIBDIR/README (the first indented block after
the paragraph that starts "Layers, bottom up.": a layer name in columns
3-14, a file name from column 15, descriptions after it)
and checks every #include "..." of every LIBDIR/*.cc and *.h against it:
a file includes only files of its own layer or below.  Prints one line per
broken include or per file the table does not name, and exits 1 if there
is any; exits 2 when the table cannot be read.
"""

import os
import re
import sys

TABLE_START = "Layers, bottom up."
NAME_COLUMN = 2   # where a layer's name starts
FILE_COLUMN = 14  # where a file name starts


def expand(spec):
    """'util.h/.cc' -> ['util.h', 'util.cc']; 'api.cc' -> ['api.cc']."""
    first, *more = spec.split("/")
    stem = first.rsplit(".", 1)[0]
    return [first] + [stem + ext for ext in more]


def read_layers(readme):
    """{file name: layer index}, [layer names]; raises ValueError."""
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith(TABLE_START))
    except StopIteration:
        raise ValueError("no line starting '%s'" % TABLE_START)
    layer_of, names = {}, []
    start = next((i for i in range(start, len(lines)) if lines[i].strip() == ""), len(lines))
    for line in lines[start + 1:]:
        if line.strip() == "":
            if names:
                break  # the blank line after the table
            continue
        if not line.startswith("  "):
            raise ValueError("unindented line inside the table: %r" % line)
        name_part = line[NAME_COLUMN:FILE_COLUMN].strip()
        rest = line[FILE_COLUMN:]
        spec = rest.split()[0] if rest and not rest[0].isspace() else None
        if spec is not None and name_part:
            names.append(name_part)  # a new layer starts with its first file
        elif name_part:
            if not names:
                raise ValueError("layer name without a file: %r" % line)
            names[-1] += " " + name_part  # a name on two lines
        if spec is not None:
            if not names:
                raise ValueError("file before any layer: %r" % line)
            for f in expand(spec):
                layer_of[f] = len(names) - 1
    if not names:
        raise ValueError("empty layer table")
    return layer_of, names


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main(argv):
    if len(argv) != 2:
        print("usage: layers_check.py LIBDIR", file=sys.stderr)
        return 2
    libdir = argv[1]
    try:
        layer_of, names = read_layers(os.path.join(libdir, "README"))
    except (OSError, ValueError) as e:
        print("%s/README: cannot read the layer table: %s" % (libdir, e))
        return 2
    broken = 0
    sources = sorted(f for f in os.listdir(libdir) if f.endswith((".cc", ".h")))
    for src in sources:
        if src not in layer_of:
            print("lib/%s: not in lib/README's layer table" % src)
            broken += 1
            continue
        with open(os.path.join(libdir, src), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if inc not in layer_of:
                    print('lib/%s:%d: #include "%s": not in lib/README\'s layer table'
                          % (src, n, inc))
                    broken += 1
                elif layer_of[inc] > layer_of[src]:
                    print('lib/%s:%d: #include "%s": %s includes %s, a layer above'
                          % (src, n, inc, names[layer_of[src]], names[layer_of[inc]]))
                    broken += 1
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
