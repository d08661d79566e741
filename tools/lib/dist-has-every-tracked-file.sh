#!/bin/sh
# tools/lib/dist-has-every-tracked-file.sh SRCDIR DISTDIR
#
# Run by `make dist' (dist-hook in Makefile.am) on the tree it is about to
# pack.  Fails, naming them, when files that git tracks in SRCDIR are
# missing from DISTDIR: a file added to the repository but to no
# Makefile.am.inc list (_SOURCES, _HEADERS, EXTRA_DIST, ...) would
# otherwise leave the release tarball silently incomplete.
#
# Left out on purpose: .gitignore files (git's own bookkeeping; the
# directories they keep, such as tools/bench/results/, are made by the
# tools that write there).
#
# Does nothing where SRCDIR is not the top of a git work tree (a tree
# unpacked from the tarball, as distcheck's own `make dist' is) or git is
# not installed.

srcdir=$1 distdir=$2
[ -n "$srcdir" ] && [ -n "$distdir" ] || {
	echo "usage: $0 SRCDIR DISTDIR" >&2
	exit 2
}
command -v git >/dev/null 2>&1 || exit 0
top=$(git -C "$srcdir" rev-parse --show-toplevel 2>/dev/null) || exit 0
# A tarball unpacked inside a work tree (distcheck's) is not that tree.
[ "$(cd "$srcdir" && pwd -P)" = "$(cd "$top" && pwd -P)" ] || exit 0

missing=$(git -C "$srcdir" ls-files | while IFS= read -r f; do
	case $f in
	.gitignore | */.gitignore) continue ;;
	esac
	# Deleted in the work tree but not yet in a commit: nothing to ship.
	[ -e "$srcdir/$f" ] || continue
	[ -e "$distdir/$f" ] || printf '  %s\n' "$f"
done)

if [ -n "$missing" ]; then
	echo "make dist: files git tracks are missing from $distdir:" >&2
	printf '%s\n' "$missing" >&2
	echo "add each to the Makefile.am.inc of its directory (a _SOURCES or _HEADERS list, or EXTRA_DIST), or to the exclusions of $0" >&2
	exit 1
fi
exit 0
