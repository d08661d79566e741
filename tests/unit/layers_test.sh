#! /usr/bin/env atf-sh
# layers_test — lib/README's rule "a file includes only files of its own
# layer or below", checked by layers_check.py against every #include "..."
# of lib/*.cc and lib/*.h; and the checker itself, on copies of lib/ with
# the rule broken, so that it cannot pass by reading nothing.

check_script() { echo "$(atf_config_get top_srcdir)/tests/unit/layers_check.py"; }
lib_dir() { echo "$(atf_config_get top_srcdir)/lib"; }

# A copy of lib/'s README and sources in ./lib, to break.
copy_lib() {
	mkdir lib
	cp "$(lib_dir)/README" "$(lib_dir)"/*.cc "$(lib_dir)"/*.h lib/
}

atf_test_case lib_follows_the_layer_table
lib_follows_the_layer_table_head() {
	atf_set "descr" "every include in lib/ is of its own layer or below, every file is in the table"
	atf_set "require.progs" "python3"
}
lib_follows_the_layer_table_body() {
	atf_check -o empty -e empty python3 "$(check_script)" "$(lib_dir)"
}

atf_test_case upward_include_fails
upward_include_fails_head() {
	atf_set "descr" "an include of a higher layer is named, with its file and line"
	atf_set "require.progs" "python3"
}
upward_include_fails_body() {
	copy_lib
	echo '#include "allocator.h"' >>lib/chunk.cc
	n=$(wc -l <lib/chunk.cc)
	atf_check -s exit:1 \
	    -o inline:"lib/chunk.cc:$n: #include \"allocator.h\": core includes API, a layer above\n" \
	    python3 "$(check_script)" lib
}

atf_test_case file_missing_from_table_fails
file_missing_from_table_fails_head() {
	atf_set "descr" "a file of lib/ that the table does not name fails, and so does an include of it"
	atf_set "require.progs" "python3"
}
file_missing_from_table_fails_body() {
	copy_lib
	printf '// new.h\n' >lib/new.h
	printf '#include "new.h"\n' >>lib/util.cc
	n=$(wc -l <lib/util.cc)
	atf_check -s exit:1 -o match:"^lib/new.h: not in lib/README's layer table\$" \
	    -o match:"^lib/util.cc:$n: #include \"new.h\": not in lib/README's layer table\$" \
	    python3 "$(check_script)" lib
}

atf_test_case unreadable_table_fails
unreadable_table_fails_head() {
	atf_set "descr" "a README without the layer table is an error, not a pass"
	atf_set "require.progs" "python3"
}
unreadable_table_fails_body() {
	copy_lib
	sed 's/^Layers, bottom up\./Layers:/' "$(lib_dir)/README" >lib/README
	atf_check -s exit:2 -o match:"cannot read the layer table" python3 "$(check_script)" lib
}

atf_init_test_cases() {
	atf_add_test_case lib_follows_the_layer_table
	atf_add_test_case upward_include_fails
	atf_add_test_case file_missing_from_table_fails
	atf_add_test_case unreadable_table_fails
}
