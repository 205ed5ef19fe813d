#!/usr/bin/env bash
# The kernels users have: the same kprofd, kprofctl and minijit (this build) booted under QEMU on
# Debian's own kernel packages: bullseye (5.10), bookworm (6.1) and bookworm-backports (6.12).
# Each guest is a busybox initramfs holding the binaries and their libraries (ldd) and runs
# kernels_guest.sh: kprofd starts, status lists the features, minijit at 99 Hz is named (its
# mj_hot share within 8 points of the host's, measured here meanwhile), hcct, paths (uprobes),
# attach --calls counts equal minijit's --truth, record, attach --all and --cgroup (a process moved
# below the watched cgroup), and where the kernel has no attach cookies (5.10) a load failure
# explained. The guest's PASS/FAIL lines come back on the serial console.
#
# The kernel packages come through apt from deb.debian.org (a private sources list under
# $KPROF_KERNELS, /var/cache/kprof-kernels by default, which also caches the packages: later runs
# need no network). QEMU runs under TCG (no KVM here), one CPU a guest, two guests at a time: about
# a minute a boot on an idle machine, two for the three.
# Not sanitized: the guests run the plain build's binaries (booting them twice adds nothing).
# Background: CPU-bound boots, not timing checks: at nice 19 beside the suite, waited for at its end
# Timeout: 2400 (from the suite's start: the other tests leave it idle CPU time only)
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
KC=${KPROF_KERNELS:-/var/cache/kprof-kernels}
# suite:mode of each guest; mode "full" adds attach --all and --cgroup.
GUESTS=${KPROF_KERNEL_SUITES:-"bullseye:full bookworm:full bookworm-backports:full"}
# Percentage points between mj_hot's share in a guest and on the host: two estimates of a ~60%
# share from about 1,000 samples each differ by 2.3 points (one sigma), and a guest under TCG runs
# minijit's instructions at other relative speeds; 5 points failed one guest in a clean run
# (56.9% vs 62.7%), while a misnamed sample would move it by tens of points.
TOL=8
# (A boot at nice 19 beside the suite's tests may get little CPU for minutes.)
BOOT_TIMEOUT=${KPROF_BOOT_TIMEOUT:-1800}

QEMU=$(command -v qemu-system-x86_64)
BUSYBOX=$(command -v busybox)
[ -n "$QEMU" ] || { skip "kernels" "no qemu-system-x86_64 (make deps installs qemu-system-x86)"; exit 0; }
if [ -z "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	skip "kernels" "no static busybox (make deps installs busybox-static)"
	exit 0
fi

# --- the kernel packages (apt, cached).
APT=(-o Dir::Etc::sourcelist="$KC/apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$KC/apt/lists"
	-o Dir::Cache="$KC/apt" -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0)
mkdir -p "$KC/apt/lists/partial" "$KC/x"
cat >"$KC/apt/sources.list" <<'EOF'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main
EOF
# vmlinuz SUITE: the path of the suite's linux-image-amd64 kernel (downloaded and unpacked once).
vmlinuz() {
	local suite=$1 pkg deb
	pkg=$(cat "$KC/$suite.pkg" 2>/dev/null)
	if [ -z "$pkg" ] || [ ! -s "$KC/x/$pkg/vmlinuz" ]; then
		[ -d "$KC/apt/lists" ] && ls "$KC"/apt/lists/*"${suite}"_main_binary-amd64_Packages >/dev/null 2>&1 ||
			apt-get "${APT[@]}" update -qq >"$KC/update.log" 2>&1
		pkg=$(apt-cache "${APT[@]}" show "linux-image-amd64/$suite" 2>/dev/null |
			sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
		[ -n "$pkg" ] || { echo "no linux-image-amd64 in $suite: $(tail -3 "$KC/update.log")"; return 1; }
		deb=$(ls "$KC/$pkg"_*.deb 2>/dev/null | head -1)
		if [ -z "$deb" ]; then
			(cd "$KC" && apt-get "${APT[@]}" download "$pkg/$suite" >"$KC/download.log" 2>&1) ||
				{ echo "apt-get download $pkg/$suite failed: $(tail -3 "$KC/download.log")"; return 1; }
			deb=$(ls "$KC/$pkg"_*.deb | head -1)
		fi
		mkdir -p "$KC/x/$pkg"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$KC/x/$pkg" --wildcards './boot/vmlinuz-*' &&
			mv "$KC/x/$pkg"/boot/vmlinuz-* "$KC/x/$pkg/vmlinuz" ||
			{ echo "no vmlinuz in $deb"; return 1; }
		echo "$pkg" >"$KC/$suite.pkg"
	fi
	echo "$KC/x/$pkg/vmlinuz"
}

# --- the initramfs: busybox, the binaries and their libraries, the guest's checks.
ROOT=$TDIR/root
mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp,run,etc}
cp "$BUSYBOX" "$ROOT/bin/busybox"
for b in kprofd kprofctl minijit; do
	cp "$BUILD/$b" "$ROOT/bin/$b"
	for lib in $(ldd "$BUILD/$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done
done
cp "$HERE/kernels_guest.sh" "$ROOT/bin/guest.sh"
echo "root:x:0:0:root:/:/bin/sh" >"$ROOT/etc/passwd"
cat >"$ROOT/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mode=$(sed -n 's/.*kprof.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
sh /bin/guest.sh "$mode" 2>&1
poweroff -f
EOF
chmod +x "$ROOT/init" "$ROOT/bin/guest.sh"
(cd "$ROOT" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1) >"$TDIR/initramfs.gz"

# The kernels, one after the other (apt's lists are shared) before any boot.
for g in $GUESTS; do
	suite=${g%%:*}
	k=$(vmlinuz "$suite") && echo "$k" >"$TDIR/$suite.kernel" ||
		echo "KERNEL-FETCH-FAILED: $k" >"$TDIR/$suite.log"
done

# boot SUITE MODE: one guest; its console into $TDIR/SUITE.log. A starved TCG guest can fail the
# kernel's early timer checks (no_timer_check skips the one that panics); a boot that still never
# reached the guest's checks is tried once more, and says so.
boot() {
	local suite=$1 mode=$2 k try
	k=$(cat "$TDIR/$suite.kernel" 2>/dev/null) || return
	for try in 1 2; do
		timeout "$BOOT_TIMEOUT" "$QEMU" -machine pc -cpu max -smp 1 -m 1024 -accel tcg \
			-kernel "$k" -initrd "$TDIR/initramfs.gz" -no-reboot -display none -monitor none \
			-pidfile "$TDIR/$suite.qpid" -serial file:"$TDIR/$suite.log" \
			-append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check kprof.mode=$mode" \
			>"$TDIR/$suite.qemu" 2>&1
		echo "qemu exit $? (boot $try)" >>"$TDIR/$suite.qemu"
		grep -q GUEST-START "$TDIR/$suite.log" && return
		cp "$TDIR/$suite.log" "$TDIR/$suite.boot$try.log"
	done
}

# --- two guests at a time, the host's share meanwhile.
START=$SECONDS
{
	BOOTS=()
	for g in $GUESTS; do
		boot "${g%%:*}" "${g##*:}" &
		BOOTS+=($!)
		# the third waits for a CPU
		[ ${#BOOTS[@]} -eq 2 ] && { wait "${BOOTS[0]}"; BOOTS=("${BOOTS[1]}"); }
	done
	wait
} &
BOOTER=$!
kernels_cleanup() {
	local f
	for f in "$TDIR"/*.qpid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	cleanup
}
trap kernels_cleanup EXIT

start_daemon || { fail "host kprofd starts" "see log"; }
start_minijit --seconds 600 || fail "host minijit starts" ""
ctl attach "$MJ_PID" --freq 99 >/dev/null
wait_for 600 at_least_samples "$MJ_PID" 1000 || fail "host samples" "$(ctl list)"
HOST_SHARE=$(ctl report "$MJ_PID" --top 8 | awk '$1 == "SELF" { for (i = 1; i <= NF; i++) c[$i] = i; next }
	c["KIND"] && $c["KIND"] == "jit" && $NF ~ /^mj_(hot|warm|cold|leaf)$/ { s[$NF] = $1; t += $1 }
	END { if (t) printf "%.1f", 100 * s["mj_hot"] / t }')
echo "host: mj_hot is $HOST_SHARE% of minijit's JIT samples at 99 Hz"
kill "$MJ_PID"
stop_daemon

wait "$BOOTER"
echo "guests booted and checked in $((SECONDS - START)) s"
for g in $GUESTS; do
	suite=${g%%:*}
	log=$TDIR/$suite.log
	if grep -q KERNEL-FETCH-FAILED "$log"; then
		fail "$suite kernel" "$(cat "$log")"
		continue
	fi
	kv=$(sed -n 's/.*GUEST-START \([^ \r]*\).*/\1/p' "$log" | head -1)
	tag="[$suite ${kv:-no boot}]"
	tr -d '\r' <"$log" | grep -E '^(features:|  [a-z_-]+ +(on|off))' | sed "s/^/$tag /"
	tr -d '\r' <"$log" | sed -n 's/^\(PASS\|FAIL\|SKIP\): /\1: '"${tag//\//\\/}"' /p'
	tr -d '\r' <"$log" | grep '^kprofd.log:' | sed "s/^/$tag /"
	share=$(tr -d '\r' <"$log" | sed -n 's/^SHARE: mj_hot \([0-9.]*\).*/\1/p')
	if [ -n "$share" ] && [ -n "$HOST_SHARE" ]; then
		awk -v g="$share" -v h="$HOST_SHARE" -v t=$TOL 'BEGIN { d = g - h; if (d < 0) d = -d; exit !(d <= t) }' &&
			pass "$tag mj_hot $share% of the JIT samples, the host's $HOST_SHARE% (within $TOL points)" ||
			fail "$tag mj_hot share" "$share% vs the host's $HOST_SHARE%"
	else fail "$tag mj_hot share" "none measured (guest '$share', host '$HOST_SHARE')"; fi
	[ -f "$TDIR/$suite.boot1.log" ] && echo "$tag booted a second time: the first boot never reached the checks ($(tr -d '\r' <"$TDIR/$suite.boot1.log" | grep -m1 -i 'panic\|error' | cut -c1-160))"
	grep -q GUEST-DONE "$log" || fail "$tag guest finished" "$(tr -d '\r' <"$log" | tail -15 | tr '\n' ' '; cat "$TDIR/$suite.qemu")"
done
finish
