/*
 * The sync kind's reading (sonde collect -s): its packets
 * (SONDE_PKT_SYNC, include/sonde/format.h), one event per traced wait, by
 * time.  See reader/kind.h.
 */
#include <stdlib.h>

#include "base/grow.h"
#include "reader/kind.h"

struct sync_state {
	struct sonde_sync_event *v;
	size_t n, cap;
};

static const char *take(struct scan *sc, const uint8_t *pkt, char *why, size_t whylen)
{
	const struct sonde_packet *h = (const void *)pkt;

	if (h->type != SONDE_PKT_SYNC)
		return sonde_rk_not_mine;
	if (sonde_rk_again(sc))
		return NULL;

	const struct sonde_sync_packet *p = (const void *)pkt;
	struct sonde_exp *exp = sonde_rk_exp(sc);
	struct sync_state *s;

	if (h->size < sizeof(*p))
		return sonde_rk_too_small(why, whylen, "sync", h->size, sizeof(*p));
	if (!(s = sonde_rk_state_new(exp, SONDE_KIND_SYNC, sizeof(*s))))
		return NULL;
	if (sonde_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 16)) {
		sonde_rk_oom(exp);
		return NULL;
	}
	s->v[s->n++] = (struct sonde_sync_event){ sonde_rk_tid(sc), p->func,   p->result,  p->time_ns,
						  p->wait_ns,	    p->object, p->stack_id };
	sonde_rk_stack_ref(exp, p->stack_id);
	return NULL;
}

const struct sonde_sync_event *sonde_exp_sync_events(const struct sonde_exp *exp, size_t *n)
{
	const struct sync_state *s = sonde_rk_state(exp, SONDE_KIND_SYNC);

	*n = s ? s->n : 0;
	return s ? s->v : NULL;
}

static size_t events(const struct sonde_exp *exp)
{
	size_t n;

	sonde_exp_sync_events(exp, &n);
	return n;
}

SONDE_RK_TIME_SORT(sort_sync, struct sonde_sync_event)

static void finish(struct sonde_exp *exp)
{
	struct sync_state *s = sonde_rk_state(exp, SONDE_KIND_SYNC);

	if (!s || s->n < 2)
		return;
	struct sonde_sync_event *tmp = malloc(s->n * sizeof(*tmp));

	if (!tmp) {
		sonde_rk_oom(exp);
		return;
	}
	sort_sync(s->v, tmp, s->n);
	free(tmp);
}

static void free_state(void *state)
{
	struct sync_state *s = state;

	free(s->v);
	free(s);
}

const char *sonde_sync_func_name(unsigned func)
{
	static const char *const names[] = {
		[SONDE_SYNC_MUTEX_LOCK] = "pthread_mutex_lock",
		[SONDE_SYNC_MUTEX_TIMEDLOCK] = "pthread_mutex_timedlock",
		[SONDE_SYNC_MUTEX_CLOCKLOCK] = "pthread_mutex_clocklock",
		[SONDE_SYNC_COND_WAIT] = "pthread_cond_wait",
		[SONDE_SYNC_COND_TIMEDWAIT] = "pthread_cond_timedwait",
		[SONDE_SYNC_COND_CLOCKWAIT] = "pthread_cond_clockwait",
		[SONDE_SYNC_RWLOCK_RDLOCK] = "pthread_rwlock_rdlock",
		[SONDE_SYNC_RWLOCK_TIMEDRDLOCK] = "pthread_rwlock_timedrdlock",
		[SONDE_SYNC_RWLOCK_CLOCKRDLOCK] = "pthread_rwlock_clockrdlock",
		[SONDE_SYNC_RWLOCK_WRLOCK] = "pthread_rwlock_wrlock",
		[SONDE_SYNC_RWLOCK_TIMEDWRLOCK] = "pthread_rwlock_timedwrlock",
		[SONDE_SYNC_RWLOCK_CLOCKWRLOCK] = "pthread_rwlock_clockwrlock",
		[SONDE_SYNC_SEM_WAIT] = "sem_wait",
		[SONDE_SYNC_SEM_TIMEDWAIT] = "sem_timedwait",
		[SONDE_SYNC_SEM_CLOCKWAIT] = "sem_clockwait",
		[SONDE_SYNC_BARRIER_WAIT] = "pthread_barrier_wait",
		[SONDE_SYNC_JOIN] = "pthread_join",
		[SONDE_SYNC_TIMEDJOIN] = "pthread_timedjoin_np",
		[SONDE_SYNC_CLOCKJOIN] = "pthread_clockjoin_np",
	};
	return sonde_rk_name_in(names, sizeof(names) / sizeof(names[0]), func);
}

/* <trace kind="sync" mode="on|all|N" threshold_ns="N"/>: the settings. */
static void log_trace(struct sonde_exp *exp, const char *file, const struct sonde_xml_elem *e)
{
	struct sonde_exp_info *in = sonde_rk_info(exp);
	const char *m = sonde_xml_attr(e, "mode");

	if (m)
		in->settings.sync_mode = m;
	if (sonde_xml_attr(e, "threshold_ns"))
		sonde_rk_attr_u64(exp, file, e, "threshold_ns", &in->settings.sync_threshold_ns);
}

const struct sonde_reader_kind sonde_reader_kind_SYNC = {
	.take = take, .events = events, .finish = finish, .free = free_state, .log_trace = log_trace,
};
