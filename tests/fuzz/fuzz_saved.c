// SPDX-License-Identifier: GPL-2.0-only
/* fuzz_saved.c: libFuzzer target for a kept profile file as kprofd reads it back from its state
 * directory at start (daemon/os/store.c load_one, then target_restore in daemon/target/target.c).
 *
 * The input is the whole file: decoded as a kprof.SavedProfile, walked and re-encoded
 * (fuzz_pb.h), then checked and replayed into a profile by proto/saved.c, the decoder kprofd's
 * restore and kprofctl's export use, and the profile is folded and sorted as the report and
 * folded requests would. A saved path
 * trace is rendered as `kprofctl paths --show` would print it (text and JSON), since the CLI
 * trusts nothing in a reply. Unframed, so unlike fuzz_frame every mutation reaches the decoder.
 */
#include <stdio.h>
#include <stdint.h>

#include "fuzz.h"
#include "fuzz_pb.h"
#include "proto/kprof.pb-c.h"
#include "../../cli/render_paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Kprof__SavedProfile *sp = kprof__saved_profile__unpack(NULL, size, data);

	if (!sp)
		return 0;
	pb_check_roundtrip(&sp->base);
	saved_replay(sp);
	if (sp->paths) {
		FILE *f = fopen("/dev/null", "w");

		if (f) {
			render_paths(f, sp->paths, false);
			render_paths(f, sp->paths, true);
			fclose(f);
		}
	}
	kprof__saved_profile__free_unpacked(sp, NULL);
	return 0;
}
