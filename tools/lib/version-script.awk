# Turn lib/Symbol.map (FreeBSD style, named version nodes) into the
# anonymous version script that links the stand-alone libarenalloc.so:
#     { global: malloc; free; ...; local: *; };
#
# Why: a program linked against glibc refers to malloc@GLIBC_2.2.5; the
# dynamic linker binds such a reference to a preloaded library's definition
# only when that definition is unversioned.  Exported as malloc@@ARENALLOC_1.0
# it is skipped and LD_PRELOAD silently has no effect.  (FreeBSD's rtld
# matches versions the same way.)  Inside a libc, Symbol.map is used as is.
#
# Input: one or more maps (Symbol.map, and on glibc Symbol.glibc.map), of
# nodes `NAME { global: sym; ... local: *; } [PARENT];', with
# /* ... */ and # comments.  Output: every symbol of every global: section,
# each preceded by the value of the awk variable prefix (-v prefix=arena_
# for a library built with that symbol prefix; empty by default).

{
	line = $0
	sub(/#.*/, "", line)
	text = text " " line
}

END {
	# Drop /* ... */ comments (possibly spanning lines).
	while ((s = index(text, "/*")) > 0) {
		rest = substr(text, s + 2)
		e = index(rest, "*/")
		if (e == 0) {
			print "version-script.awk: unterminated comment" > "/dev/stderr"
			exit 1
		}
		text = substr(text, 1, s - 1) " " substr(rest, e + 2)
	}
	gsub(/[{}:;]/, " & ", text)
	n = split(text, tok, /[ \t\n]+/)
	mode = ""
	nsyms = 0
	for (i = 1; i <= n; i++) {
		t = tok[i]
		if (t == "")
			continue
		if (t == "{") {
			mode = "global"		# the default inside a node
		} else if (t == "}") {
			mode = ""
		} else if ((t == "global" || t == "local") && tok[i + 1] == ":") {
			mode = t
			i++
		} else if (mode == "global" && t != ";") {
			if (!(t in seen)) {
				seen[t] = 1
				syms[++nsyms] = t
			}
		}
	}
	if (nsyms == 0) {
		print "version-script.awk: no global symbols found" > "/dev/stderr"
		exit 1
	}
	maps = ""
	for (i = 1; i < ARGC; i++) {
		f = ARGV[i]
		sub(/.*\//, "lib/", f)
		maps = maps (maps == "" ? "" : " and ") f
	}
	print "/* Generated from " maps " by tools/lib/version-script.awk. */"
	print "{"
	print "global:"
	for (i = 1; i <= nsyms; i++)
		print "\t" prefix syms[i] ";"
	print "local:"
	print "\t*;"
	print "};"
}
