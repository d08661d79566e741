#!/usr/bin/env python3
"""Checks malloc_stats_print(..., "J") output against jemalloc 5.3's layout.

usage: jemalloc_compat_json.py FILE [NARENAS]
       jemalloc_compat_json.py --letters FILE

FILE is what jemalloc_compat -j wrote.  The keys checked are those a
consumer written for jemalloc 5.3's JSON reads first: the "jemalloc"
object; version, config, opt, arenas (with the bin and lextent lists),
stats and "stats.arenas" with its "merged" totals (or its one arena).  With NARENAS,
opt.narenas must equal it (set by MALLOC_CONF).  With --letters, the
files FILE.Jg, FILE.Ja... (malloc_stats_print with "J" and one letter)
must leave out what jemalloc(3) says the letter omits.  Prints one line
per problem; exit status 1 if there is any.
"""
import json
import sys

problems = []


def lookup(doc, path):
    """doc's value at a dotted path ("stats.arenas" is one key: '/')."""
    value = doc
    for key in path.split('/'):
        if isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return KeyError
    return value


def need(doc, path, kind):
    value = lookup(doc, path)
    if value is KeyError:
        problems.append('missing %s' % path)
        return None
    # bool is an int in Python: keep the two apart.
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        problems.append('%s is %r, not %s' % (path, value, kind.__name__))
        return None
    return value


def check(doc, narenas):
    top = need(doc, 'jemalloc', dict)
    if top is None:
        return
    if list(doc.keys()) != ['jemalloc']:
        problems.append('top-level keys %s, not just "jemalloc"' % list(doc.keys()))
    need(top, 'version', str)
    for flag in ('debug', 'fill', 'stats', 'prof', 'utrace', 'xmalloc'):
        need(top, 'config/' + flag, bool)
    got = need(top, 'opt/narenas', int)
    if narenas is not None and got is not None and got != narenas:
        problems.append('opt.narenas is %d, MALLOC_CONF set %d' % (got, narenas))
    need(top, 'opt/tcache', bool)
    need(top, 'opt/dirty_decay_ms', int)
    need(top, 'opt/thp', str)
    if lookup(top, 'config/fill') is True:
        need(top, 'opt/junk', str)
        need(top, 'opt/zero', bool)

    for name in ('narenas', 'quantum', 'page', 'nbins', 'nlextents'):
        need(top, 'arenas/' + name, int)
    nbins = lookup(top, 'arenas/nbins')
    bins = need(top, 'arenas/bin', list)
    if bins is not None and isinstance(nbins, int):
        if len(bins) != nbins:
            problems.append('arenas.bin has %d entries, arenas.nbins is %d'
                            % (len(bins), nbins))
        previous = 0
        for index, entry in enumerate(bins):
            for field in ('size', 'nregs', 'slab_size'):
                need(entry, field, int)
            size = lookup(entry, 'size')
            if isinstance(size, int) and size <= previous:
                problems.append('arenas.bin[%d].size %d after %d' % (index, size, previous))
                break
            if isinstance(size, int):
                previous = size
    lextents = need(top, 'arenas/lextent', list)
    if lextents and isinstance(lookup(top, 'arenas/nlextents'), int):
        if len(lextents) != top['arenas']['nlextents']:
            problems.append('arenas.lextent has %d entries, arenas.nlextents is %d'
                            % (len(lextents), top['arenas']['nlextents']))
        need(lextents[0], 'size', int)

    if lookup(top, 'config/stats') is not True:
        return
    for name in ('allocated', 'active', 'metadata', 'resident', 'mapped', 'retained'):
        need(top, 'stats/' + name, int)
    # jemalloc prints "merged" when more than one arena is in use, else
    # only the arena itself (keyed by its index).
    arenas = need(top, 'stats.arenas', dict)
    if arenas is None:
        return
    if 'merged' in arenas:
        merged = need(arenas, 'merged', dict)
    elif len(arenas) == 1:
        merged = need(arenas, next(iter(arenas)), dict)
    else:
        problems.append('stats.arenas: %d arenas and no "merged"' % len(arenas))
        return
    if merged is None:
        return
    for name in ('nthreads', 'pactive', 'pdirty', 'mapped', 'retained', 'resident'):
        need(merged, name, int)
    for kind in ('small', 'large'):
        for name in ('allocated', 'nmalloc', 'ndalloc', 'nrequests'):
            need(merged, kind + '/' + name, int)
    small = lookup(merged, 'small/allocated')
    large = lookup(merged, 'large/allocated')
    total = lookup(top, 'stats/allocated')
    if all(isinstance(v, int) for v in (small, large, total)) and small + large != total:
        problems.append('stats.allocated %d, merged small + large %d' % (total, small + large))
    merged_bins = need(merged, 'bins', list)
    if merged_bins is not None and bins is not None and len(merged_bins) != len(bins):
        problems.append('stats.arenas.merged.bins has %d entries, arenas.bin %d'
                        % (len(merged_bins), len(bins)))
    if merged_bins:
        for field in ('nmalloc', 'ndalloc', 'nrequests', 'curregs', 'curslabs'):
            need(merged_bins[0], field, int)
    merged_lextents = need(merged, 'lextents', list)
    if merged_lextents:
        need(merged_lextents[0], 'curlextents', int)


def load(path):
    try:
        with open(path) as stream:
            return json.load(stream)
    except (OSError, ValueError) as error:
        problems.append('%s: %s' % (path, error))
        return None


def every_arena(top, indices_only=False):
    """stats.arenas's objects (only those keyed by an arena index)."""
    arenas = lookup(top, 'stats.arenas')
    if not isinstance(arenas, dict):
        return []
    return [v for k, v in arenas.items()
            if isinstance(v, dict) and (k.isdigit() or not indices_only)]


# Per letter: what the full output must have and the lettered one must not.
LETTERS = {
    'g': ('general information (config, opt)',
          lambda top: 'config' in top and 'opt' in top),
    'a': ('per-arena statistics', lambda top: bool(every_arena(top, True))),
    'm': ('merged statistics',
          lambda top: isinstance(lookup(top, 'stats.arenas'), dict)
          and 'merged' in top['stats.arenas']),
    'b': ('bins statistics', lambda top: any('bins' in a for a in every_arena(top))),
    'l': ('large class statistics',
          lambda top: any('lextents' in a for a in every_arena(top))),
    'x': ('mutex statistics',
          lambda top: isinstance(lookup(top, 'stats'), dict) and 'mutexes' in top['stats']
          or any('mutexes' in a for a in every_arena(top))),
}


def check_letters(path):
    full = load(path)
    if full is None:
        return
    full_top = full.get('jemalloc', {})
    for letter, (what, present) in LETTERS.items():
        doc = load('%s.J%s' % (path, letter))
        if doc is None:
            continue
        top = doc.get('jemalloc') if isinstance(doc, dict) else None
        if not isinstance(top, dict):
            problems.append('"J%s": no "jemalloc" object' % letter)
            continue
        if letter in 'gam' and not present(full_top):
            problems.append('"J": no %s to leave out' % what)
        if lookup(top, 'stats.arenas') is KeyError:
            problems.append('"J%s": no stats.arenas' % letter)
        elif present(top):
            problems.append('"J%s" still has the %s' % (letter, what))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--letters':
        check_letters(sys.argv[2])
    elif len(sys.argv) in (2, 3):
        doc = load(sys.argv[1])
        if doc is not None:
            check(doc, int(sys.argv[2]) if len(sys.argv) == 3 else None)
    else:
        sys.exit(__doc__)
    for problem in problems:
        print(problem)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
