// SPDX-License-Identifier: GPL-2.0-only
/* watch.c: watch rules, which attach kprofd by itself to every present and future process
 * matching a comm, an executable, a uid, a cgroup or a systemd unit (ARCHITECTURE.md §1.2.4).
 *
 * Rules come from clients (kprofctl watch add, saved in the state directory as one rules file,
 * rule.h, written atomically by the store and checked by its CRC when read back) and from
 * kprofd.conf ([watch] rule lines, root's, replaced at each reload). Each rule is applied once to
 * the processes present when it is added (a walk of /proc), then to the processes to come:
 *
 * * comm, exe and uid rules put their comm (an exe rule: its file name's first 15 bytes) or uid
 *   in the BPF pre-filter maps (loader_watch_sync); the exec program reports a process that is
 *   no target and matches one of them (KP_REC_WATCH, manager_events.on_exec), and the rule is
 *   checked here: an exe rule's path against /proc/PID/exe (as given, or resolved).
 * * cgroup and unit rules are cgroup watches of the manager (attach --cgroup/--unit) that
 *   wait for their cgroup while it is not there: the manager's housekeeping watches it again
 *   when it comes (back): a unit started after the rule, a service restarted.
 *
 * A rule's processes are attached for its owner (quotas and permissions as for the owner's own
 * attach; a non-root owner's rule matches only the owner's processes, and a uid rule only the
 * owner's uid), never in exact mode, and are automatic targets: at most limits.max_auto_targets
 * of them at once, the refusals counted (manager.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cleanup.h"
#include "os/cgroups.h"
#include "os/clock.h"
#include "kernel/loader.h"
#include "os/log.h"
#include "manager/manager.h"
#include "os/procfs.h"
#include "os/store.h"
#include "manager/watch.h"

#define WATCH_FILE "watch.rules"
#define WATCH_FILE_MAX (WATCH_MAX_RULES * (RULE_TEXT_MAX + 16) + 64)
#define WATCH_SCAN_MAX 65536 /* /proc entries looked at by one walk */

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Whether process pid (its comm and uids given) is one r matches. */
static bool rule_matches(const struct wrule *r, pid_t pid, const char *comm, uint32_t ruid,
			 uint32_t euid)
{
	char c[16], exe[PATH_MAX], real[PATH_MAX];

	switch (r->r.kind) {
	case RULE_COMM:
		return !strncmp(comm, r->r.value, 16);
	case RULE_UID:
		return ruid == r->r.uid || euid == r->r.uid;
	case RULE_EXE:
		rule_comm(&r->r, c);
		if (strncmp(comm, c, 16) || procfs_exe(pid, exe, sizeof(exe)) < 0)
			return false;
		return !strcmp(exe, r->r.value) ||
		       (realpath(r->r.value, real) && !strcmp(exe, real));
	default:
		return false;
	}
}

/* The attach settings of rule r's processes, attached for its owner. */
static struct attach_opts rule_opts(struct wrule *r)
{
	return (struct attach_opts){.freq = r->r.freq,
				    .no_jvm_map = r->r.no_jvm_map,
				    .children = r->r.children,
				    .off_cpu = r->r.off_cpu,
				    .by = r->owner,
				    .rule = r->text};
}

/* Attach pid for rule r (started at start_ticks, 0: not known): 1 attached, 0 not a match
 * (another user's, attached already), a negative errno when refused (counted). */
static int rule_attach(struct watch *w, struct wrule *r, pid_t pid, uint64_t start_ticks)
{
	struct target *t = manager_find(w->m, pid);
	struct attach_opts o = rule_opts(r);
	char err[256];
	uid_t owner;
	int e;

	if (pid == getpid() || (t && t->state == TARGET_ATTACHED && !t->all))
		return 0;
	/* A user's rule matches the user's own processes only. */
	if (target_proc_uid(pid, &owner) < 0 || (r->owner != 0 && owner != r->owner))
		return 0;
	e = manager_attach(w->m, pid, &o, &t, err, sizeof(err));
	if (e == 0 && start_ticks && t->start_ticks != start_ticks) {
		manager_forget(w->m, t);
		e = -ESRCH;
	}
	if (e < 0) {
		r->counts.refused++;
		log_msg(e == -ESRCH ? LOG_DEBUG : LOG_INFO, "rule %s: pid %d not attached: %s",
			r->text, pid, e == -ESRCH ? "gone" : err);
		return e;
	}
	r->counts.attached++;
	log_info("rule %s: attached pid %d (%s)", r->text, pid, t->comm);
	return 1;
}

/* Apply comm, exe and uid rules (only r, or all if NULL) to the processes present. */
static void scan_present(struct watch *w, struct wrule *only)
{
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	struct dirent *de;
	unsigned seen = 0;

	if (!d) {
		log_warn("watch rules: cannot read /proc: %m");
		return;
	}
	while ((de = readdir(d)) && seen++ < WATCH_SCAN_MAX) {
		struct procfs_ident id;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		char exe[PATH_MAX];

		/* Kernel threads have no executable: never targets. */
		if (*end || pid <= 0 || pid > INT32_MAX || procfs_ident_read(pid, &id) < 0 ||
		    id.zombie || procfs_exe(pid, exe, sizeof(exe)) == -ENOENT)
			continue;
		for (unsigned i = 0; i < w->n; i++) {
			struct wrule *r = w->rules[i];

			if ((only && r != only) || r->r.kind == RULE_CGROUP ||
			    r->r.kind == RULE_UNIT)
				continue;
			if (rule_matches(r, pid, id.comm, id.ruid, id.euid)) {
				rule_attach(w, r, pid, 0);
				break;
			}
		}
	}
}

/* The comms and uids of the rules, for the exec program's pre-filter. */
static void sync_bpf(struct watch *w)
{
	char comms[KP_MAX_WATCH_KEYS][16];
	uint32_t uids[KP_MAX_WATCH_KEYS];
	unsigned nc = 0, nu = 0;
	int e;

	for (unsigned i = 0; i < w->n; i++) {
		const struct rule *r = &w->rules[i]->r;
		bool dup = false;
		char c[16];

		if (r->kind == RULE_UID) {
			for (unsigned k = 0; k < nu; k++)
				dup |= uids[k] == r->uid;
			if (!dup && nu < KP_MAX_WATCH_KEYS)
				uids[nu++] = r->uid;
		} else if (rule_comm(r, c)) {
			for (unsigned k = 0; k < nc; k++)
				dup |= !memcmp(comms[k], c, 16);
			if (!dup && nc < KP_MAX_WATCH_KEYS)
				memcpy(comms[nc++], c, 16);
		}
	}
	e = loader_watch_sync(w->m->loader, (const char(*)[16])comms, nc, uids, nu);
	if (e < 0)
		log_err("watch rules: cannot update the BPF maps: %s", strerror(-e));
}

static void save_rules(struct watch *w)
{
	struct rule_entry e[WATCH_MAX_RULES];
	_cleanup_free_ char *buf = NULL;
	size_t n = 0;
	int len, err;

	if (!w->m->store)
		return;
	for (unsigned i = 0; i < w->n && n < WATCH_MAX_RULES; i++)
		if (!w->rules[i]->config)
			e[n++] = (struct rule_entry){.owner = w->rules[i]->owner,
						     .rule = w->rules[i]->r};
	buf = malloc(WATCH_FILE_MAX);
	if (!buf)
		return;
	len = rule_file_format(e, n, buf, WATCH_FILE_MAX);
	err = len < 0 ? len : store_write(w->m->store, WATCH_FILE, buf, len);
	if (err < 0)
		log_err("cannot save the watch rules to %s/%s: %s (they hold until kprofd stops)",
			store_path(w->m->store), WATCH_FILE, strerror(-err));
}

/* Start a cgroup or unit rule's watch, waiting if its cgroup is not there: 0, or a negative
 * errno with why in err. */
static int cg_start(struct watch *w, struct wrule *r, unsigned *attached, unsigned *refused,
		    char *err, size_t errlen)
{
	struct attach_opts o = rule_opts(r);
	struct cgwatch *cw;
	unsigned a = 0, f = 0;
	int e;

	o.children = false; /* a watch's members follow their children anyway */
	o.counts = &r->counts;
	e = manager_watch(w->m, r->r.kind == RULE_CGROUP ? r->r.value : NULL,
			  r->r.kind == RULE_UNIT ? r->r.value : NULL, &o, &cw, &a, &f, err, errlen);

	if (e < 0)
		return e;
	snprintf(r->cgname, sizeof(r->cgname), "%s", cw->name);
	r->state[0] = '\0';
	if (attached)
		*attached = a;
	if (refused)
		*refused = f;
	return 0;
}

static bool cg_running(const struct watch *w, const struct wrule *r)
{
	return r->cgname[0] && manager_find_watch(w->m, r->cgname);
}

/* Take r in (w owns it from then on). */
static void rule_insert(struct watch *w, struct wrule *r)
{
	r->id = ++w->next_id;
	r->since_ns = now_ns(CLOCK_REALTIME);
	w->rules[w->n++] = r;
}

static struct wrule *rule_new(const struct rule *rl, uid_t owner, bool config)
{
	struct wrule *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->r = *rl;
	r->owner = owner;
	r->config = config;
	if (rule_format(rl, r->text, sizeof(r->text)) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

static struct wrule *find_text(struct watch *w, const char *text)
{
	for (unsigned i = 0; i < w->n; i++)
		if (!strcmp(w->rules[i]->text, text))
			return w->rules[i];
	return NULL;
}

/* A rule of the config file or of the rules file, at start or reload: never refused for a
 * cgroup that is not there (it is watched when it comes). */
static void add_quiet(struct watch *w, const struct rule *rl, uid_t owner, bool config)
{
	struct wrule *r;
	char err[512];

	if (w->n >= sizeof(w->rules) / sizeof(w->rules[0]))
		return;
	r = rule_new(rl, owner, config);
	if (!r || find_text(w, r->text)) {
		free(r);
		return;
	}
	rule_insert(w, r);
	if (rl->kind == RULE_CGROUP || rl->kind == RULE_UNIT) {
		if (cg_start(w, r, NULL, NULL, err, sizeof(err)) < 0)
			snprintf(r->state, sizeof(r->state), "%s", err);
	}
	log_info("watch rule %u: %s (uid %u%s)%s%s", r->id, r->text, owner,
		 config ? ", kprofd.conf" : "", r->state[0] ? ": " : "", r->state);
}

static void load_saved(struct watch *w)
{
	struct rule_entry *e = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	char err[256];
	size_t len = 0;
	int n;

	if (!w->m->store)
		return;
	n = store_read(w->m->store, WATCH_FILE, &buf, &len);
	if (n == -ENOENT)
		return;
	if (n >= 0 && len > WATCH_FILE_MAX) {
		snprintf(err, sizeof(err), "larger than %u bytes", (unsigned)WATCH_FILE_MAX);
		n = -EFBIG;
	} else if (n >= 0) {
		e = calloc(WATCH_MAX_RULES, sizeof(*e));
		n = e ? rule_file_parse((const char *)buf, len, e, WATCH_MAX_RULES, err,
					sizeof(err))
		      : -ENOMEM;
	} else {
		snprintf(err, sizeof(err), "%s",
			 n == -ENODEV ? "not a regular file" : strerror(-n));
	}
	if (n < 0) {
		log_err("watch rules %s/%s are unusable (%s): renamed %s.bad, no rule restored",
			store_path(w->m->store), WATCH_FILE, n == -ENOMEM ? "out of memory" : err,
			WATCH_FILE);
		store_quarantine(w->m->store, WATCH_FILE);
		free(e);
		return;
	}
	for (int i = 0; i < n; i++)
		add_quiet(w, &e[i].rule, e[i].owner, false);
	free(e);
}

static void config_rules(struct watch *w)
{
	for (unsigned i = 0; i < w->m->conf.n_watch_rules; i++)
		add_quiet(w, &w->m->conf.watch_rules[i], 0, true);
}

/* An attached target of r. Looked for from the start each time: a detach may drop kept
 * targets (limits.max_kept), so the list is not walked across one. */
static struct target *rule_target(struct watch *w, const struct wrule *r)
{
	for (struct target *t = manager_attached_first(w->m); t; t = manager_attached_next(t))
		if (t->rule && !strcmp(t->rule, r->text))
			return t;
	return NULL;
}

static void drop_rule(struct watch *w, struct wrule *r, unsigned *detached)
{
	struct target *t;
	struct cgwatch *cw = r->cgname[0] ? manager_find_watch(w->m, r->cgname) : NULL;
	unsigned n = 0;

	if (cw && cw->opts.rule == r->text)
		n += manager_unwatch(w->m, cw);
	while ((t = rule_target(w, r)) && manager_detach(w->m, t) == 0)
		n++;
	for (unsigned i = 0; i < w->n; i++)
		if (w->rules[i] == r) {
			memmove(&w->rules[i], &w->rules[i + 1], (w->n - i - 1) * sizeof(r));
			w->n--;
			break;
		}
	log_info("watch rule %u removed: %s: %u targets detached", r->id, r->text, n);
	free(r);
	if (detached)
		*detached = n;
}

static void on_exec(void *ud, const struct kp_execwatch *x)
{
	struct watch *w = ud;
	char comm[17];

	memcpy(comm, x->comm, 16);
	comm[16] = '\0';
	for (unsigned i = 0; i < w->n; i++)
		if (rule_matches(w->rules[i], x->hdr.tgid, comm, x->ruid, x->euid)) {
			rule_attach(w, w->rules[i], x->hdr.tgid, x->start_ticks);
			return;
		}
}

/* The config's rules again: those gone removed, new ones added, and cgroup and unit rules
 * whose watch was refused (a limit) tried again. */
static void on_reload(void *ud)
{
	struct watch *w = ud;
	const struct config *c = &w->m->conf;

	for (unsigned i = 0; i < w->n;) {
		struct wrule *r = w->rules[i];
		bool kept = false;

		for (unsigned k = 0; k < c->n_watch_rules && r->config; k++) {
			char t[RULE_TEXT_MAX];

			kept |= rule_format(&c->watch_rules[k], t, sizeof(t)) >= 0 &&
				!strcmp(t, r->text);
		}
		if (r->config && !kept)
			drop_rule(w, r, NULL);
		else
			i++;
	}
	config_rules(w);
	for (unsigned i = 0; i < w->n; i++) {
		struct wrule *r = w->rules[i];
		char err[512];

		if ((r->r.kind == RULE_CGROUP || r->r.kind == RULE_UNIT) && !cg_running(w, r) &&
		    cg_start(w, r, NULL, NULL, err, sizeof(err)) < 0)
			snprintf(r->state, sizeof(r->state), "%s", err);
	}
	sync_bpf(w);
	scan_present(w, NULL);
}

static const struct manager_events events = {
    .on_exec = on_exec,
    .on_reload = on_reload,
};

int watch_new(struct manager *m, struct watch **ret)
{
	struct watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->m = m;
	config_rules(w);
	load_saved(w);
	sync_bpf(w);
	scan_present(w, NULL);
	err = manager_subscribe(m, &events, w);
	if (err < 0) {
		watch_free(w);
		return err;
	}
	*ret = w;
	return 0;
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	manager_unsubscribe(w->m, &events, w);
	for (unsigned i = 0; i < w->n; i++)
		free(w->rules[i]);
	free(w);
}

/* Whether owner may have rule rl; err says why not. */
static int check_owner(const struct watch *w, const struct rule *rl, uid_t owner, char *err,
		       size_t errlen)
{
	unsigned mine = 0, clients = 0;

	for (unsigned i = 0; i < w->n; i++) {
		mine += w->rules[i]->owner == owner && !w->rules[i]->config;
		clients += !w->rules[i]->config;
	}
	if (clients >= WATCH_MAX_RULES || (owner != 0 && mine >= WATCH_RULES_PER_USER)) {
		snprintf(err, errlen, "too many watch rules (%d; %d per user)", WATCH_MAX_RULES,
			 WATCH_RULES_PER_USER);
		return -EUSERS;
	}
	if (owner != 0 && rl->kind == RULE_UID && rl->uid != owner) {
		snprintf(err, errlen,
			 "permission denied: uid %u may only watch its own processes (uid:%u)",
			 owner, owner);
		return -EPERM;
	}
	return 0;
}

/* A client's cgroup rule needs its cgroup now, a unit rule the unit's cgroup or unit file (an
 * installed unit not running is waited for): 0, or -ENOENT, -EINVAL with why in err. */
static int cg_exists(const struct rule *rl, char *err, size_t errlen)
{
	struct cgroup_ref ref;
	char path[PATH_MAX];
	int e;

	if (rl->kind == RULE_CGROUP) {
		e = cgroup_resolve(rl->value, &ref);
		if (e < 0)
			snprintf(err, errlen, "cgroup %.300s: %s", rl->value,
				 e == -ENOENT	     ? "no such cgroup"
				 : e == -EMEDIUMTYPE ? "not in a cgroup2 hierarchy"
						     : strerror(-e));
		return e;
	}
	e = cgroup_of_unit(rl->value, &ref);
	if (e == -ENOENT)
		e = unit_file_find(rl->value, path, sizeof(path));
	if (e < 0)
		snprintf(err, errlen, "unit %.300s: %s", rl->value,
			 e == -ENOENT ? "no such unit (no unit file in /etc/systemd/system, "
					"/run/systemd/system or /usr/lib/systemd/system, and no "
					"cgroup of that name)"
				      : "not a unit name (NAME.service, .scope, .slice)");
	return e;
}

int watch_add(struct watch *w, const char *text, size_t len, uid_t owner, unsigned *id,
	      unsigned *attached, unsigned *refused, char *err, size_t errlen)
{
	struct rule rl;
	struct wrule *r, *old;
	char why[256];
	unsigned a0, f0;
	int e;

	e = rule_parse(text, len, &rl, why, sizeof(why));
	if (e < 0) {
		snprintf(err, errlen, "bad rule: %s", why);
		return e;
	}
	e = check_owner(w, &rl, owner, err, errlen);
	if (e < 0)
		return e;
	r = rule_new(&rl, owner, false);
	if (!r)
		return -ENOMEM;
	old = find_text(w, r->text);
	if (old) {
		snprintf(err, errlen, "%s is already rule %u", r->text, old->id);
		free(r);
		return -EALREADY;
	}
	if (rl.kind == RULE_CGROUP || rl.kind == RULE_UNIT) {
		e = cg_exists(&rl, err, errlen);
		if (e == 0)
			e = cg_start(w, r, attached, refused, err, errlen);
		if (e < 0) {
			free(r);
			return e;
		}
		rule_insert(w, r);
	} else {
		rule_insert(w, r);
		sync_bpf(w);
		a0 = r->counts.attached;
		f0 = r->counts.refused;
		scan_present(w, r);
		*attached = r->counts.attached - a0;
		*refused = r->counts.refused - f0;
	}
	save_rules(w);
	log_info("watch rule %u: %s (uid %u): %u processes attached, %u refused%s%s", r->id,
		 r->text, owner, *attached, *refused, watch_state(w, r)[0] ? "; " : "",
		 watch_state(w, r));
	*id = r->id;
	return 0;
}

struct wrule *watch_find(struct watch *w, const char *what, uid_t uid, int *errp, char *err,
			 size_t errlen)
{
	struct wrule *r = NULL;
	struct rule rl;
	char *end, t[RULE_TEXT_MAX], why[256];
	unsigned long id = strtoul(what, &end, 10);

	if (what[0] >= '0' && what[0] <= '9' && !*end) {
		for (unsigned i = 0; i < w->n; i++)
			if (w->rules[i]->id == id)
				r = w->rules[i];
	} else if (rule_parse(what, strlen(what), &rl, why, sizeof(why)) == 0 &&
		   rule_format(&rl, t, sizeof(t)) >= 0) {
		r = find_text(w, t);
	} else {
		snprintf(err, errlen, "'%.80s' is neither a rule id nor a rule: %s", what, why);
		*errp = -EINVAL;
		return NULL;
	}
	if (!r || (uid != 0 && r->owner != uid)) {
		snprintf(err, errlen, "no watch rule %.300s", what);
		*errp = -ENOENT;
		return NULL;
	}
	if (r->config) {
		snprintf(err, errlen,
			 "rule %u (%s) comes from kprofd.conf: remove it there and reload", r->id,
			 r->text);
		*errp = -EPERM;
		return NULL;
	}
	return r;
}

unsigned watch_remove(struct watch *w, struct wrule *r)
{
	unsigned n = 0;

	drop_rule(w, r, &n);
	sync_bpf(w);
	save_rules(w);
	return n;
}

const char *watch_state(const struct watch *w, const struct wrule *r)
{
	const struct cgwatch *cw;

	if (r->r.kind != RULE_CGROUP && r->r.kind != RULE_UNIT)
		return "";
	cw = r->cgname[0] ? manager_find_watch(w->m, r->cgname) : NULL;
	if (!cw)
		return r->state[0] ? r->state : "not watched";
	if (!cw->waiting)
		return "";
	return r->r.kind == RULE_UNIT ? "waiting for the unit to start" : "waiting for the cgroup";
}
