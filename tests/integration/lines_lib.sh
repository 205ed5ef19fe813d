# tests/integration/lines_lib.sh: helpers of the test_lines*.sh tests (sourced after lib.sh).
# shellcheck shell=bash
#
# Source lines (issue 32) are resolved by kprofd through its kprof-lines helpers and read back
# with `go tool pprof`: the tests need go and clang (hotline.c built again with a build id of its
# own: kprofd caches lines by build id, so a copy of build/hotline would be answered from it).
for t in go clang; do
	if ! command -v $t >/dev/null; then skip "lines" "$t not installed"; exit 0; fi
done
export GOCACHE=$TDIR/gocache HOME=$TDIR
HOTLINE=$(readlink -f "$BUILD/hotline")
SRC=$(readlink -f tests/fixtures/lines/hotline.c)
HOT=$(grep -n "/\* HOT \*/" "$SRC" | cut -d: -f1)
WARM=$(grep -n "/\* WARM \*/" "$SRC" | cut -d: -f1)
[ -x "$HOTLINE" ] && [ -x "$BUILD/kprof-lines" ] || { fail "setup" "make all builds hotline and kprof-lines"; exit 1; }

# lines_conf [KEY = VALUE...]: the daemon's config ($TDIR/kprofd.conf), [lines] with these keys,
# after $CONF_HEAD (other sections).
lines_conf() {
	printf '%b[lines]\n' "${CONF_HEAD:-}" >"$TDIR/kprofd.conf"
	for k in "$@"; do echo "$k" >>"$TDIR/kprofd.conf"; done
}
# lines_reload [KEY = VALUE...]: lines_conf, then SIGHUP, waited for.
reloads() { [ "$(grep -c "reloaded the settings" "$TDIR/kprofd.log")" -gt "$1" ]; }
lines_reload() {
	local n
	lines_conf "$@"
	n=$(grep -c "reloaded the settings" "$TDIR/kprofd.log")
	kill -HUP "$DAEMON_PID"
	wait_for 10 reloads "$n" || fail "reload" "$(tail -3 "$TDIR/kprofd.log")"
}
# profile EXE NAME [ARGS]: run EXE (60 s, or ARGS) and profile it until it has $NSAMPLES samples
# (400); sets HP.
profile() {
	local exe=$1 name=$2
	shift 2
	"$exe" "${@:-60}" >/dev/null &
	HP=$!
	PIDS+=("$HP")
	ctl attach "$HP" --freq 999 >/dev/null || { fail "$name: attach" "$(ctl list --all)"; return 1; }
	wait_for 40 at_least_samples "$HP" "${NSAMPLES:-400}" || { fail "$name: samples" "$(ctl list --all)"; return 1; }
}
# comment FILE: the profile's "kprof lines: N of M ..." comment; notes FILE: its other ones.
comment() { go tool pprof -raw "$1" 2>/dev/null | grep -o 'kprof lines: [0-9][^"]*' | head -1; }
notes() { go tool pprof -raw "$1" 2>/dev/null | grep -o 'kprof lines: [^0-9][^"]*'; }
# first_line FILE: the first row of `go tool pprof -lines -top`.
first_line() { go tool pprof -lines -top "$1" 2>&1 | grep -m1 -E "^ +[0-9.]+(ms|s|us) "; }
# build NAME [CC ARGS]: hotline.c built as $TDIR/NAME with a build id of its own.
build() {
	local name=$1
	shift
	clang -std=gnu11 -O2 -g -fno-omit-frame-pointer "-Wl,--build-id=0x$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
		-o "$TDIR/$name" "$SRC" "$@"
}
# build_id FILE: its GNU build id in hex.
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'; }
