/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_robust.h -- a thread that holds a process-shared robust mutex (glibc)
 * hands it over as if it had died, without dying first: what the kernel's
 * robust-list walk does at a thread's exit, done by the thread itself (from
 * a signal handler: only atomics and system calls).  libnf's crash hand-over
 * (nf_crash.c) and the benchmark's floor (bench/robust_wake.c) use it.  The
 * mutex layout (__data.__lock, __data.__list) is glibc's.
 */
#ifndef ONVM_ROBUST_H
#define ONVM_ROBUST_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

enum onvm_robust_release {
	ONVM_ROBUST_NOT_OURS,	   /* the word does not name the thread */
	ONVM_ROBUST_RELEASED,	   /* owner-died, nobody waited */
	ONVM_ROBUST_RELEASED_WOKE, /* owner-died, one waiter woken */
};

#ifndef __GLIBC__
#error "onvm_robust.h reads glibc's pthread_mutex_t layout"
#endif

/*
 * The hand-over in two steps, so that a death at any instruction between them
 * still releases `m` (the thread may be killed meanwhile: a sibling's crash, a
 * SIGKILL).  onvm_robust_detach() names `m` in the thread's list_op_pending
 * -- the kernel's walk at exit handles that entry too -- unless glibc was
 * interrupted in a robust-list operation of its own (then it names that one,
 * and the kernel needs it: `m` is then not covered for the few instructions
 * to the CAS), then takes `m` out of the thread's robust list by the links
 * the kernel walks (glibc links `&m->__data.__list.__next`).  That is needed
 * before the next owner takes it: glibc then links it into that owner's list
 * through the mutex itself, and the kernel's walk of ours at exit would
 * follow those links and miss every robust mutex after it.  The caller never
 * unlocks again, so glibc's back links are left alone.
 */
struct onvm_robust_detached {
	struct robust_list_head *head; /* NULL: no robust list */
	bool pending;		       /* we set list_op_pending */
};

static inline struct onvm_robust_detached
onvm_robust_detach(pthread_mutex_t *m)
{
	struct onvm_robust_detached d = {NULL, false};
	struct robust_list *entry = (struct robust_list *)&m->__data.__list.__next;
	struct robust_list **link;
	size_t len;

	if (syscall(SYS_get_robust_list, 0, &d.head, &len) != 0 || d.head == NULL)
		return (struct onvm_robust_detached){NULL, false};
	if (d.head->list_op_pending == NULL) {
		d.head->list_op_pending = entry;
		d.pending = true;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* named before it is unlinked */
	}
	link = &d.head->list.next;
	for (int i = 0; i < 2048 && *link != &d.head->list; i++) { /* the kernel's bound */
		struct robust_list *e = (struct robust_list *)((uintptr_t)*link & ~1UL);

		if (e == NULL)
			break;
		if (e == entry) {
			*link = e->next;
			break;
		}
		link = &e->next;
	}
	return d;
}

/*
 * The kernel's handle_futex_death() on `m`'s word, by its live owner `tid`:
 * the TID replaced by FUTEX_OWNER_DIED, the waiters bit kept, one waiter
 * woken (robust mutexes use shared futexes: no FUTEX_PRIVATE_FLAG), so a
 * waiter returns with EOWNERDEAD now.  The release orders every write the
 * thread made before it for the waiter that acquires the lock.  Then
 * list_op_pending, if detach set it, is cleared.
 */
static inline enum onvm_robust_release
onvm_robust_finish(pthread_mutex_t *m, uint32_t tid, struct onvm_robust_detached d)
{
	uint32_t *word = (uint32_t *)&m->__data.__lock;
	uint32_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
	enum onvm_robust_release r = ONVM_ROBUST_NOT_OURS;

	while ((old & FUTEX_TID_MASK) == tid) {
		uint32_t dead = (old & FUTEX_WAITERS) | FUTEX_OWNER_DIED;

		if (__atomic_compare_exchange_n(word, &old, dead, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			r = ONVM_ROBUST_RELEASED;
			if (old & FUTEX_WAITERS) {
				syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
				r = ONVM_ROBUST_RELEASED_WOKE;
			}
			break;
		}
	}
	if (d.pending) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		d.head->list_op_pending = NULL;
	}
	return r;
}

/* Both steps: the hand-over of a mutex `tid` holds (else nothing is done). */
static inline enum onvm_robust_release
onvm_robust_release_dead(pthread_mutex_t *m, uint32_t tid)
{
	if ((__atomic_load_n((uint32_t *)&m->__data.__lock, __ATOMIC_RELAXED) & FUTEX_TID_MASK) !=
	    tid)
		return ONVM_ROBUST_NOT_OURS;
	return onvm_robust_finish(m, tid, onvm_robust_detach(m));
}

/* The TID the mutex's word names (0: unlocked). */
static inline uint32_t
onvm_robust_owner(const pthread_mutex_t *m)
{
	return __atomic_load_n((const uint32_t *)&m->__data.__lock, __ATOMIC_RELAXED) &
	       FUTEX_TID_MASK;
}

#endif /* ONVM_ROBUST_H */
