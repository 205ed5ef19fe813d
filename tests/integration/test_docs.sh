#!/usr/bin/env bash
# The documentation matches the programs: every verb of `kprofctl --help` has a section in
# kprofctl.1 and is offered by the bash completion; every long option of `kprofctl --help` and
# `kprofd --help` (and every key of systemd/kprofd.conf) is in the man pages; groff renders both
# pages without a warning; `kprofctl VERB --help` (-h, `kprofctl help VERB`) prints the words of
# VERB's section of kprofctl.1 as groff renders it, and option errors name the verb and the
# option; the completion completes verbs, options, formats and PIDs; and every verb gives JSON
# (--json, or export --format json) that parses, against a real daemon.
# Not sanitized: groff, help text and completion checks (about 25 s); each verb's JSON runs
# sanitized in that verb's own tests.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAN1=$ROOT/docs/man/kprofctl.1
MAN8=$ROOT/docs/man/kprofd.8
COMP=$ROOT/cli/kprofctl.bash-completion
CONF=$ROOT/systemd/kprofd.conf

for f in "$MAN1" "$MAN8" "$COMP"; do
	[ -f "$f" ] || { fail "docs exist" "$f is missing"; exit 1; }
done
CTL_HELP=$("$KPROFCTL" --help) || { fail "kprofctl --help" "exit status $?"; exit 1; }
D_HELP=$("$KPROFD" --help) || { fail "kprofd --help" "exit status $?"; exit 1; }
# Verbs: the lines "  VERB  ARGS" of the Verbs section (help text lines are indented further).
VERBS=$(sed -n '/^Verbs:/,/^$/p' <<<"$CTL_HELP" | sed -nE 's/^  ([a-z]+) .*/\1/p')
[ -n "$VERBS" ] || { fail "verbs in kprofctl --help" "none found"; exit 1; }
verb_args() { sed -nE "s/^  $1 +//p" <<<"$CTL_HELP"; }

# complete WORD...: the completion's candidates for the last word, one per line, from a fresh
# bash that sources the completion file (the function is the one `complete -p` names).
complete_words() {
	bash -c '
. "$1" || exit 1
shift
fn=$(complete -p kprofctl 2>/dev/null | sed -nE "s/.*-F ([^ ]+).*/\1/p")
[ -n "$fn" ] || { echo "no complete -F for kprofctl" >&2; exit 1; }
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@"
}
# has LIST WORD: WORD is one of the lines of LIST.
has() { grep -qxF -- "$2" <<<"$1"; }
# roff WORD: WORD as written in the man page source (hyphens escaped).
roff() { printf "%s\n" "${1//-/\\-}"; }
# oneline TEXT: TEXT with its lines joined by spaces, for messages.
oneline() { tr '\n' ' ' <<<"$1"; }

# (a) Verbs and options are documented and completed.
VERB_COMP=$(complete_words kprofctl "")
missing=
for v in $VERBS; do
	grep -qE "^\.SS $v( |$)" "$MAN1" || missing+=" $v(man)"
	has "$VERB_COMP" "$v" || missing+=" $v(completion)"
done
[ -z "$missing" ] && pass "every verb of kprofctl --help has a section in kprofctl.1 and is completed" ||
	fail "verbs documented" "missing:$missing"
extra=
for v in $VERB_COMP; do has "$VERBS" "$v" || extra+=" $v"; done
[ -z "$extra" ] && pass "the completion offers no verb kprofctl --help lacks" || fail "completion verbs" "extra:$extra"

missing=
for o in $(grep -oE -- '--[a-z][a-z-]*' <<<"$CTL_HELP" | sort -u); do
	grep -qF -- "$(roff "$o")" "$MAN1" || missing+=" $o"
done
[ -z "$missing" ] && pass "every long option of kprofctl --help is in kprofctl.1" ||
	fail "kprofctl options in kprofctl.1" "missing:$missing"
missing=
for o in $(grep -oE -- '--[a-z][a-z-]*' <<<"$D_HELP" | sort -u); do
	grep -qF -- "$(roff "$o")" "$MAN8" || missing+=" $o"
done
[ -z "$missing" ] && pass "every long option of kprofd --help is in kprofd.8" ||
	fail "kprofd options in kprofd.8" "missing:$missing"
missing=
for k in $(sed -nE 's/^\[([a-z_]+)\].*/\1/p; s/^([a-z_]+) *=.*/\1/p' "$CONF"); do
	grep -qE "^\.(SS \[$k\]|B $k)\$" "$MAN8" || missing+=" $k"
done
[ -z "$missing" ] && pass "every section and key of systemd/kprofd.conf is in kprofd.8" ||
	fail "config keys in kprofd.8" "missing:$missing"
# Every target a user runs is in `make help`.
HELP=$(make -s -C "$ROOT" help 2>/dev/null)
missing=
for t in $(sed -nE '/^\.PHONY:/,/[^\\]$/p' "$ROOT/Makefile" | sed 's/^\.PHONY://; s/\\$//'); do
	[ "$t" = all ] && t= # plain `make`
	grep -qE "^make ${t}( |$)" <<<"$HELP" || missing+=" ${t:-all}"
done
[ -z "$missing" ] && pass "every phony target of the Makefile is in make help" ||
	fail "make help" "missing:$missing"
# A clean build runs protoc-c once per .proto (one rule makes both of its files).
fresh=$(mktemp -d)
runs=$(make -s -n -C "$ROOT" BUILD="$fresh" all 2>/dev/null | grep -cE "protoc-c .*(kprof|profile)\.proto")
rmdir "$fresh" 2>/dev/null
[ "$runs" -eq 2 ] && pass "a clean build runs protoc-c once for each of the 2 .proto files" ||
	fail "protoc-c runs" "$runs runs for 2 files"
# A section of the shipped config must not be described as missing from it.
wrong=
for k in $(sed -nE 's/^\[([a-z_]+)\].*/\1/p' "$CONF"); do
	awk -v s="$k" '$0 == ".SS [" s "]" { on = 1; next } /^\.S[SH] / { on = 0 }
		on && /not in the shipped/ { found = 1 } END { exit !found }' "$MAN8" && wrong+=" [$k]"
done
[ -z "$wrong" ] && pass "kprofd.8 calls no section of the shipped config missing" ||
	fail "kprofd.8 vs the shipped config" "said to be missing:$wrong"

# Each verb's options (from its usage line) are completed after "kprofctl VERB -".
missing=
for v in $VERBS; do
	opts=$(complete_words kprofctl "$v" -)
	for o in $(verb_args "$v" | grep -oE -- '(^| |\[)-(-[a-z][a-z-]*|[a-z])' | tr -d ' ['); do
		has "$opts" "$o" || missing+=" $v:$o"
	done
done
[ -z "$missing" ] && pass "every verb's options of kprofctl --help are completed" ||
	fail "verb options completed" "missing:$missing"

# (b) groff renders both pages without a warning.
if command -v groff >/dev/null; then
	for page in "$MAN1" "$MAN8"; do
		if warn=$(groff -man -Tutf8 -wall "$page" 2>&1 >/dev/null) && [ -z "$warn" ]; then
			pass "groff renders $(basename "$page") without warnings"
		else fail "groff $(basename "$page")" "$(head -5 <<<"$warn" | tr '\n' ' ')"; fi
	done
else
	skip "groff renders the man pages" "groff not installed"
fi

# (f) Per-verb help: `kprofctl VERB --help`, `kprofctl VERB -h` and `kprofctl help VERB` print
# the same text and exit 0, and its words (after "Usage: kprofctl") are those of VERB's section
# of kprofctl.1 as groff renders it: the help is generated from the page at build time, so this
# fails when either changes alone (or the build is stale). Whitespace and line breaks aside:
# groff fills to its own width (a huge one here, so nothing is hyphenated or broken at a hyphen).
bad=
for v in $VERBS; do
	h=$("$KPROFCTL" "$v" --help 2>&1) || { bad+=" $v(--help: exit $?)"; continue; }
	[ "$("$KPROFCTL" "$v" -h 2>&1)" = "$h" ] || bad+=" $v(-h)"
	[ "$("$KPROFCTL" help "$v" 2>&1)" = "$h" ] || bad+=" $v(help $v)"
	[[ $h == "Usage: kprofctl $v"* ]] || bad+=" $v(no usage line: $(head -1 <<<"$h"))"
done
[ -z "$bad" ] && pass "kprofctl VERB --help, -h and help VERB: the same usage and text, exit 0" ||
	fail "per-verb help" "$bad"
out=$("$KPROFCTL" help 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = "$CTL_HELP" ] && pass "kprofctl help is kprofctl --help" ||
	fail "kprofctl help" "rc=$rc $(head -2 <<<"$out" | tr '\n' ' ')"
out=$("$KPROFCTL" help frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "unknown verb 'frobnicate'" <<<"$out" && pass "kprofctl help UNKNOWN: exit 2" ||
	fail "help of an unknown verb" "rc=$rc $out"
if command -v groff >/dev/null; then
	# words: one word per line; groff's typographic characters as the ASCII the help uses.
	words() {
		sed 's/\xe2\x80\x94/--/g; s/\xe2\x88\x92/-/g; s/\xe2\x80\x90/-/g; '"s/\xe2\x80\x99/'/g"'; s/\xe2\x80[\x9c\x9d]/"/g' |
			tr -s '[:space:]' '\n' | sed '/^$/d'
	}
	# Plain text (grotty: no SGR, no overstrike), one line per paragraph, no hyphenation.
	MAN_TEXT=$(groff -man -Tutf8 -rHY=0 -rLL=5000n -P-c -P-b -P-u "$MAN1" 2>/dev/null)
	# man_words VERB: the words of VERB's section: its .SS heading (3 spaces in) up to the
	# next heading of VERBS or the next section.
	man_words() {
		awk -v v="$1" '/^[^ ]/ { verbs = ($0 == "VERBS"); on = 0; next }
			verbs && /^   [^ ]/ { on = ($1 == v) } on' <<<"$MAN_TEXT" | words
	}
	bad=
	n=0
	for v in $VERBS; do
		h=$("$KPROFCTL" "$v" --help 2>/dev/null | words)
		[ "$(head -2 <<<"$h" | tr '\n' ' ')" = "Usage: kprofctl " ] || { bad+=" $v(no Usage: kprofctl)"; continue; }
		m=$(man_words "$v")
		[ -n "$m" ] || { bad+=" $v(no section in the groff output)"; continue; }
		if [ "$(tail -n +3 <<<"$h")" != "$m" ]; then
			d=$(diff <(tail -n +3 <<<"$h") <(echo "$m") | grep '^[<>]' | head -4 | tr '\n' ' ')
			bad+=" $v(help < > man: $d)"
		fi
		n=$((n + 1))
	done
	[ -z "$bad" ] && pass "the help of each of $n verbs has the words of its section of kprofctl.1 (groff)" ||
		fail "help == man page section" "$bad"
else
	skip "help == man page section" "groff not installed (make deps installs groff-base)"
fi
# The rendering itself: 79 columns at most, .TP tags on their own line with the text under them.
h=$("$KPROFCTL" attach --help)
long=$(awk 'length > 79' <<<"$h")
if [ -z "$long" ] && grep -qxF -- "  --freq, -F HZ" <<<"$h" &&
	grep -qE -- "^      Sampling frequency, 1-4999" <<<"$h"; then
	pass "help text: lines of at most 79 columns, option tags on their own line, text indented"
else fail "help layout" "long: $(head -1 <<<"$long") / $(grep -A1 -- '--freq' <<<"$h" | tr '\n' '|')"; fi
# A construct the converter does not know stops the build rather than vanish from the help.
if ! python3 "$ROOT/cli/manhelp.py" <(printf '.SH VERBS\n.SS x\n.UR http://a\n') >/dev/null 2>&1; then
	pass "cli/manhelp.py refuses a roff request it does not know"
else fail "manhelp.py strict" "accepted .UR"; fi

# (g) Option errors name the verb and the option, hint at the verb's help, exit 2, once.
bad=
for v in $VERBS; do
	out=$("$KPROFCTL" "$v" --no-such-option 1 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "kprofctl $v: unknown option '--no-such-option' (see kprofctl $v --help)" ] ||
		bad+=" [$v: rc=$rc $out]"
done
for a in "attach -x 1|unknown option '-x'" "attach 1 --freq|option '--freq' needs an argument" \
	"attach 1 -F|option '-F' needs an argument" "report 1 --top|option '--top' needs an argument" \
	"export 1 -o|option '-o' needs an argument" "list --json=yes|option '--json' takes no argument" \
	"paths 1 --s|option '--s' is ambiguous (--show, --stop, --session, --structural, --spp-budget, --spp-timeout)"; do
	args=${a%%|*}
	v=${args%% *}
	# shellcheck disable=SC2086
	out=$("$KPROFCTL" $args 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "kprofctl $v: ${a#*|} (see kprofctl $v --help)" ] || bad+=" [$args: rc=$rc $out]"
done
out=$("$KPROFCTL" --no-such-option 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$out" = "kprofctl: unknown option '--no-such-option' (see kprofctl --help)" ] ||
	bad+=" [global: rc=$rc $out]"
[ -z "$bad" ] && pass "option errors: 'kprofctl VERB: unknown option ...' or '... needs an argument' (see kprofctl VERB --help), exit 2" ||
	fail "option errors" "$bad"

# (e) The design documents are in the tree: every `ARCHITECTURE.md §N[.M]` or `ALGORITHMS.md
# §N[.M]` a source file cites (also `ALGORITHMS.md §1, §6` and `ALGORITHMS.md 1.10`) names a
# heading of that document in docs/ that starts with N. or N.M, every TV-* vector the sources
# name is in ALGORITHMS.md, and every relative link and docs/*.md path in README.md and
# docs/*.md exists. No daemon needed.
# doc_has_section DOC NUM: docs/DOC has a heading "## NUM. ..." or "### NUM ...".
doc_has_section() {
	local f=$ROOT/docs/$1 re=${2//./\\.}
	[ -f "$f" ] && grep -qE "^#+ $re\.?( |\$)" "$f"
}
bad=
ncites=0
while IFS= read -r hit; do
	loc=${hit%%:*}                  # file:line
	rest=${hit#*:}
	loc+=":${rest%%:*}"
	cite=${rest#*:}
	doc=${cite%%.md*}.md
	for num in $(grep -oE '[0-9]+(\.[0-9]+)?' <<<"${cite#*.md}"); do
		ncites=$((ncites + 1))
		doc_has_section "$doc" "$num" || bad+=" $loc:$doc§$num"
	done
done < <(cd "$ROOT" && grep -rnoE \
	'(ARCHITECTURE|ALGORITHMS)\.md (§?[0-9]+(\.[0-9]+)?)((, ?| and )§[0-9]+(\.[0-9]+)?)*' \
	daemon cli bpf include proto tests bench README.md docs 2>/dev/null)
[ "$ncites" -gt 0 ] && [ -z "$bad" ] &&
	pass "all $ncites ARCHITECTURE.md / ALGORITHMS.md § citations name a section in docs/" ||
	fail "§ citations resolve" "${bad:-no citation found}"
bad=
for tv in $(cd "$ROOT" && grep -rhoE 'TV-[A-Z][A-Z0-9]*' daemon cli bpf include proto tests bench |
	sort -u); do
	grep -qE "^#+ .*\\b$tv\\b" "$ROOT/docs/ALGORITHMS.md" 2>/dev/null || bad+=" $tv"
done
[ -z "$bad" ] && pass "every test vector the sources name has a heading in ALGORITHMS.md" ||
	fail "test vectors in ALGORITHMS.md" "missing:$bad"
bad=
for md in "$ROOT/README.md" "$ROOT"/docs/*.md; do
	dir=$(dirname "$md")
	name=${md#"$ROOT"/}
	# [text](target): relative targets only, without their #anchor.
	for t in $(grep -oE '\]\([^) ]+\)' "$md" | sed -E 's/^\]\(//; s/\)$//; s/#.*//' |
		grep -vE '^(https?:|mailto:|$)'); do
		[ -e "$dir/$t" ] || bad+=" $name->$t"
	done
	for t in $(grep -oE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_-]+\.md' "$md" | sed -E 's/^[^d]//' | sort -u); do
		[ -e "$ROOT/$t" ] || bad+=" $name->$t"
	done
done
[ -z "$bad" ] && pass "every relative link and docs/*.md path in README.md and docs/ exists" ||
	fail "links in README.md and docs/" "broken:$bad"

# (c) The completion at work.
out=$(complete_words kprofctl at)
[ "$out" = attach ] && pass "kprofctl at<TAB> gives attach" || fail "at<TAB>" "got: $(oneline "$out")"
out=$(complete_words kprofctl export 1 --format "")
[ "$(sort <<<"$out" | tr '\n' ' ')" = "folded json pprof " ] &&
	pass "kprofctl export 1 --format <TAB> gives pprof folded json" || fail "--format <TAB>" "got: $(oneline "$out")"
out=$(complete_words kprofctl attach --)
has "$out" --freq && has "$out" --duration && pass "kprofctl attach --<TAB> lists --freq and --duration" ||
	fail "attach --<TAB>" "got: $(oneline "$out")"
missing=
for v in $VERBS; do has "$(complete_words kprofctl "$v" --)" --help || missing+=" $v"; done
[ -z "$missing" ] && pass "kprofctl VERB --<TAB> offers --help for every verb" || fail "--help completed" "missing:$missing"
out=$(complete_words kprofctl help "")
[ "$(sort <<<"$out")" = "$(sort <<<"$VERBS")" ] && pass "kprofctl help <TAB> gives the verbs" ||
	fail "help <TAB>" "got: $(oneline "$out")"
out=$(complete_words kprofctl --socket /nonexistent/kprofd.sock report "")
has "$out" "$$" && pass "PIDs from /proc when kprofd does not answer" || fail "PIDs from /proc" "no $$ in the candidates"

# (d) Every verb gives JSON that parses, against a real daemon and a sleep target (a minijit
# for paths, which needs JIT code).
start_daemon || { fail "daemon starts" "see log"; exit 1; }
sleep 600 &
S=$!
PIDS+=("$S")
start_minijit --seconds 600 --cleanup || fail "minijit starts" "for paths"
J=$MJ_PID

out=$(complete_words "$KPROFCTL" --socket "$SOCK" report "")
[ -z "$out" ] && pass "no PIDs from kprofd when nothing is attached or kept" ||
	fail "PIDs from an empty kprofd" "got: $(oneline "$out" | head -c 200)"

# json_cmd VERB: the command that makes VERB print JSON.
json_cmd() {
	case $1 in
	attach) echo "ctl attach $S --json" ;;
	detach) echo "ctl detach $S --json" ;;
	list) echo "ctl list --all --json" ;;
	watch) echo "ctl watch list --json" ;;
	status) echo "ctl status --json" ;;
	report) echo "ctl report $S --json" ;;
	folded) echo "ctl folded $S --json" ;;
	top) echo "timeout 20 $KPROFCTL --socket $SOCK top --json --iterations 2 --interval 100" ;;
	hcct) echo "ctl hcct $S --json" ;;
	paths) echo "ctl paths $J mj_hot --duration 0.2 --json" ;;
	export) echo "ctl export $S --format json -o -" ;;
	diff) echo "ctl diff $S --base-pid $S --json" ;;
	record) echo "ctl record --format json -o - -- sleep 0.3" ;;
	annotate) echo "ctl annotate $J mj_hot --json" ;;
	drift) echo "ctl drift $S --json" ;;
	esac
}
# parses_json FILE MULTI: every non-empty line of FILE is a JSON object; one line unless MULTI.
parses_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert lines, "no output"
assert sys.argv[2] == "1" or len(lines) == 1, f"{len(lines)} lines"
for l in lines:
    assert isinstance(json.loads(l), dict), l[:80]
PY
}
# attach first, detach last, the others in between.
ORDER=$( (has "$VERBS" attach && echo attach; grep -vxE 'attach|detach' <<<"$VERBS"; has "$VERBS" detach && echo detach) )
for v in $ORDER; do
	[ "$v" = help ] && continue # prints the help (section (f)), not data
	args=$(verb_args "$v")
	if grep -qF -- '[--json]' <<<"$args"; then
		how="--json"
	elif grep -qE -- '--format [^ ]*json' <<<"$args" && grep -qF -- "$(roff "--format json")" "$MAN1"; then
		how="--format json (documented)"
	else
		fail "$v gives JSON" "neither --json nor a documented --format json in: $args"
		continue
	fi
	cmd=$(json_cmd "$v")
	if [ -z "$cmd" ]; then
		fail "$v gives JSON" "this test does not know how to run $v: add it to json_cmd"
		continue
	fi
	$cmd >"$TDIR/$v.json" 2>"$TDIR/$v.err"
	rc=$?
	multi=0
	[ "$v" = top ] && multi=1
	if [ $rc -ne 0 ]; then
		fail "$v $how" "exit status $rc: $(head -3 "$TDIR/$v.err" | tr '\n' ' ')"
	elif err=$(parses_json "$TDIR/$v.json" "$multi" 2>&1); then
		pass "$v $how: JSON that python3 parses"
	else
		fail "$v $how" "$(tail -1 <<<"$err"): $(head -c 200 "$TDIR/$v.json")"
	fi
	# The daemon now knows the target: PID completion asks it.
	if [ "$v" = attach ]; then
		out=$(complete_words "$KPROFCTL" --socket "$SOCK" report "")
		[ "$out" = "$S" ] && pass "PIDs from kprofctl list --all --json when kprofd answers" ||
			fail "PIDs from kprofd" "got: $(oneline "$out" | head -c 200)"
	fi
done
# make help says how long make check fuzzes each target: what the check target runs.
said=$(make -s -C "$ROOT" help 2>/dev/null | sed -nE 's/.*a ([0-9]+) s fuzz run.*/\1/p')
runs=$(sed -nE 's/.*\$\(MAKE\) fuzz FUZZ_SECONDS=([0-9]+).*/\1/p' "$ROOT/Makefile" | head -1)
[ -n "$said" ] && [ "$said" = "$runs" ] && pass "make help: make check fuzzes $said s a target, as it does" ||
	fail "make help's fuzz time" "help says '${said}' s, make check runs '${runs}' s"
# watch completes its subcommands, not PIDs; paths and annotate complete FUNCTION from the
# PID's sampled functions (issue 29, item 10).
out=$(complete_words kprofctl watch "")
[ "$(sort <<<"$out" | tr '\n' ' ')" = "add list remove " ] && pass "watch <TAB>: list, add, remove" ||
	fail "watch completion" "got: $(oneline "$out" | head -c 200)"
out=$(complete_words "$KPROFCTL" --socket "$SOCK" annotate "$J" mj_h)
has "$out" mj_hot && pass "annotate PID <TAB> completes the sampled functions ($(oneline "$out"))" ||
	fail "annotate FUNCTION completion" "got: $(oneline "$out" | head -c 200)"
out=$(complete_words "$KPROFCTL" --socket "$SOCK" paths "$J" "")
has "$out" mj_hot && pass "paths PID <TAB> completes the sampled functions" ||
	fail "paths FUNCTION completion" "got: $(oneline "$out" | head -c 200)"
# The root holds the project's layout and nothing else (no stray logs or scratch files).
extra=$(git ls-files 2>/dev/null | cut -d/ -f1 | sort -u | grep -vxE \
	'bpf|daemon|cli|proto|include|tests|systemd|bench|docs|Makefile|README.md|VERSION|LICENSE|\.ci|\.clang-format|\.gitignore')
[ -z "$extra" ] && pass "the root holds only the layout's entries" ||
	fail "stray files at the root" "$(oneline "$extra")"
finish
