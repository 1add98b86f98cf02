/*
 * rsync.pml -- a Spin model of remote resiliency's protocol: the
 * predecessor's log and failover, the primary's latch and two-phase commit,
 * the standby's staging, presumed commit and replay (docs/design/remote.md).
 * What it covers and leaves out, how it maps to the C code, its bounds and
 * figures: docs/design/model.md.  Run it with tests/model/run_model.sh.
 *
 * Three processes and six links:
 *
 *   Pred    -- d2p: stamped input ----------------------------> Primary
 *   Pred    <- p2d: LOG_TRIM --------------------------------- Primary
 *   Primary -- p2s: PREPARE, COMMIT, ABORT -------------------> Standby
 *   Primary <- s2p: VOTE, ACK -------------------------------- Standby
 *   Pred    -- d2s: REPLAY_START, REPLAY_CANCEL, input -------> Standby
 *   Pred    <- s2d: REPLAY_START echo or refusal, REPLAY_ACK -- Standby
 *
 * A link may lose a message, deliver it twice, or hold it back while later
 * ones overtake it (reordering); each process makes at most MAXF such
 * faults on its sends, on the links LINKS_FAULTY names.  A full link drops
 * what is sent to it.  HEARTBEATs are mostly not messages: a process hears
 * a peer's run and epoch at any moment, or never; only the predecessor's
 * new run reaches the primary in line with its input, as on the real
 * link.  Timers are nondeterminism: a retransmission goes while its link
 * is idle (a time-out longer than a round trip), a bounded number of
 * times.
 *
 * The chain is one NF whose state is the set of timestamps it processed (a
 * bit mask), so processing a packet twice is an assertion, and a cut at
 * timestamp T is that mask when T was the last packet admitted.  Each input
 * packet leaves the chain as one output with its timestamp, in flow
 * ts % NFLOW.  The outside world is a ghost mask of released timestamps.
 *
 * Properties (the assertions name them):
 *   P1  a stage is released only on a VOTE for it (of the primary's run)
 *       from the standby; STRICT_P1: from the standby run the primary
 *       serves at the release;
 *   P2  no output reaches the outside twice, across a failover;
 *   P3  the predecessor never trims its log above the cut the standby
 *       applies at its takeover, so every output the primary released
 *       above that cut can be replayed and suppressed;
 *   P4  nothing is stuck: when nothing can move any more, a live, unfenced
 *       primary holds no stage and no replay is left unfinished;
 *   P5  no NF processes a packet twice (the primary; the standby after a
 *       takeover: the applied cut, then the replay);
 *   P6  (ND) an output an ND decision may have shaped is, once released,
 *       at or below the cut the standby applies at its takeover.
 *
 * What one process must see of another (a HEARTBEAT's run or epoch, the
 * replay's progress) goes through a "published" global written at the
 * rare moments it changes; what the properties look at, through ghosts.
 */

/* ---- bounds (override with -D) ---- */
#ifndef NPKT
#define NPKT 3		/* timestamps the predecessor gives, over all its runs */
#endif
#ifndef NFLOW
#define NFLOW 2
#endif
#ifndef STAGES
#define STAGES 2	/* the primary's latch stages: 2 or 3 */
#endif
#ifndef STAGE_PKTS
#define STAGE_PKTS 2	/* a stage closes when full, or on its timer */
#endif
#ifndef MAXF
#define MAXF 1		/* link faults each process makes on its sends */
#endif
#ifndef LINKS_FAULTY
#define LINKS_FAULTY 63	/* bits: 1 d2p, 2 p2d, 4 p2s, 8 s2p, 16 d2s, 32 s2d */
#endif
#ifndef MAXTRIES
#define MAXTRIES 2	/* sends of a PREPARE before its stage is aborted */
#endif
#ifndef MAXTX
#define MAXTX 5		/* transactions a primary run may close */
#endif
#ifndef MAXEPOCH
#define MAXEPOCH 2	/* the highest epoch offered: MAXEPOCH - 1 failovers */
#endif
#ifndef LINKCAP
#define LINKCAP 2
#endif
#define WINDOW (STAGES + 1) /* the standby's staging slots */
#define NCANCEL 2	    /* REPLAY_CANCELs sent for a failover given up */
#define MAXTS NPKT

/*
 * Switches.  Features: ND (an NF may make an ND decision on any packet),
 * PRI_CRASH, PRI_RESTART, SBY_RESTART, PRED_RESTART.  Deliberate bugs that
 * must fail (run_model.sh --broken NAME, docs/design/model.md):
 * BROKEN_RELEASE_ON_TIMEOUT (P1), BROKEN_NO_SUPPRESS (P2),
 * BROKEN_TRIM_ON_VOTE (P3), BROKEN_NO_ABORT (P4), BROKEN_ADMIT_TWICE and
 * BROKEN_ADMIT_BELOW_CUT (P5), BROKEN_ND_NO_WAIT (P6).  Findings
 * (docs/design/model.md): CHECK_FOLLOW checks the replay that follows a
 * failover given up (F1), FIX_FOLLOW and FIX_VOTES model the fixes
 * proposed for F1 and F2.
 */

/* the deliberate bugs' switches */
#ifdef BROKEN_ND_NO_WAIT
#define ND_WAIT_OFF true	/* an ND stage goes without waiting for a cut */
#else
#define ND_WAIT_OFF false
#endif
#ifdef BROKEN_NO_SUPPRESS
#define SUPPRESS_ON false	/* the standby's TX unit lets every output out */
#else
#define SUPPRESS_ON true
#endif
#ifdef BROKEN_ADMIT_BELOW_CUT
#define CUT_HOLDS 0		/* replayed input at or below the cut is processed */
#else
#define CUT_HOLDS s_tkcut
#endif
#ifdef BROKEN_ADMIT_TWICE
#define STALE_IN(t) false	/* the primary's ingress admits a duplicate */
#else
#define STALE_IN(t) ((t) <= p_last)
#endif

#define BIT(t) (1 << (t))
#define UPTO(t) ((2 << (t)) - 1)		  /* timestamps 0 .. t */
#define RANGE(lo, hi) (UPTO(hi) & ~(BIT(lo) - 1)) /* lo .. hi */
#define FLOW(t) ((t) % NFLOW)
#define MAX(a, b) ((a) > (b) -> (a) : (b))

mtype = { PREPARE, COMMIT, ABORT, VOTE, ACK, START, CANCEL, DATA, ECHO, REFUSE, RACK };

/* ---- links, and a slot per link for a message held back ---- */
chan d2p = [LINKCAP] of { byte, byte };			/* ts, the predecessor's run */
chan p2d = [1] of { byte, byte, byte };			/* LOG_TRIM: epoch, to run, watermark */
chan p2s = [LINKCAP] of { mtype, byte, byte, byte, byte, byte, byte, byte, byte };
	/* type, epoch, from run, to run, txid, prev (ABORT: through), cut ts (0: none),
	 * cut state, outputs */
chan s2p = [LINKCAP] of { mtype, byte, byte, byte, byte };	/* type, epoch, from run, to run, txid */
chan d2s = [LINKCAP] of { mtype, byte, byte, byte, byte, byte }; /* type, epoch, from run, to run, a, b */
chan s2d = [LINKCAP] of { mtype, byte, byte, byte, byte };	/* type, epoch, to run, a, b */
chan late_d2p = [1] of { byte, byte };
chan late_p2d = [1] of { byte, byte, byte };
chan late_p2s = [1] of { mtype, byte, byte, byte, byte, byte, byte, byte, byte };
chan late_s2p = [1] of { mtype, byte, byte, byte, byte };
chan late_d2s = [1] of { mtype, byte, byte, byte, byte, byte };
chan late_s2d = [1] of { mtype, byte, byte, byte, byte };

/* who makes a link's faults: its sender, within its budget */
#define FB_d2p d_f
#define FB_d2s d_f
#define FB_p2d p_f
#define FB_p2s p_f
#define FB_s2p s_f
#define FB_s2d s_f
#define F_d2p ((LINKS_FAULTY & 1) != 0)
#define F_p2d ((LINKS_FAULTY & 2) != 0)
#define F_p2s ((LINKS_FAULTY & 4) != 0)
#define F_s2p ((LINKS_FAULTY & 8) != 0)
#define F_d2s ((LINKS_FAULTY & 16) != 0)
#define F_s2d ((LINKS_FAULTY & 32) != 0)
#define FAULT(ch) (F_##ch && FB_##ch < MAXF)
/* a loss on the replay's links lets the predecessor rewind again */
#define LOST_d2p skip
#define LOST_p2d skip
#define LOST_p2s skip
#define LOST_s2p skip
#define LOST_d2s g_lost = true
#define LOST_s2d g_lost = true

/* Send on a link: delivered; delivered twice; held back (later messages
 * overtake it); lost; or lost on a full link.  Never blocks. */
#define SEND(ch, ...) \
	if \
	:: nfull(ch) -> ch!__VA_ARGS__; \
		if \
		:: FAULT(ch) && nfull(ch) -> ch!__VA_ARGS__; FB_##ch++ \
		:: skip \
		fi \
	:: FAULT(ch) && nfull(late_##ch) -> late_##ch!__VA_ARGS__; FB_##ch++ \
	:: FAULT(ch) -> FB_##ch++; LOST_##ch \
	:: full(ch) -> LOST_##ch \
	fi

/* ---- ghosts: what the properties look at, and what a process publishes ---- */
byte g_rel;		/* timestamps released to the outside world */
byte g_relp;		/* ... of them, by the primary */
byte g_relnd;		/* ... of them, from a stage an ND decision held (P6) */
byte g_unrep;		/* ... of them, whose input a predecessor restart may have lost
			 * before the primary heard of it (not claimed: model.md) */
byte g_voted[MAXTX + 1]; /* per txid of the current primary run: standby runs that voted (bits) */
bool g_tk;		/* the standby took over */
byte g_tkcut;		/* the cut it applied then */
byte g_trim;		/* the highest LOG_TRIM the predecessor's current run applied */
byte g_oldts;		/* timestamps of the predecessor's earlier runs (their log is gone) */
bool g_lost;		/* a replay message was lost since the last rewind */
byte pub_drun = 1, pub_depoch = 1;	/* the predecessor's HEARTBEAT */
byte pub_prun = 1;			/* the primary's run */
byte pub_srun = 1, pub_sepoch = 1;	/* the standby's HEARTBEAT */
byte pub_rnext;				/* the standby's replay: next timestamp expected */
byte pub_dacked;			/* the predecessor's replay: acknowledged below */
bool pub_dreplay;			/* the predecessor replays */

/* scratch, used within one atomic step only: not part of the state (a
 * hidden variable cannot be a bool) */
hidden mtype h_ty;
hidden byte h_ep, h_sr, h_rr, h_a, h_b, h_c, h_d, h_e;
hidden byte h_i, h_j, h_k, h_m, h_n, h_t, h_last, h_dead, h_tip, h_rel, h_new, h_g;
hidden byte w_n, w_cur, w_nx, w_ok, w_origin;
hidden byte w_ch[WINDOW];

/* ==== the predecessor's state (onvm_mgr/remote/plog_unit.c) ==== */
#define D_PRI 0	   /* stamped input goes to the primary */
#define D_START 1  /* REPLAY_START sent, not echoed: input is logged only */
#define D_REPLAY 2 /* the log is replayed to the standby */
#define D_SBY 3	   /* stamped input goes to the standby */

byte d_run = 1;
byte d_epoch = 1;
byte d_att;	/* the epoch offered the standby, or last given up */
byte d_st;	/* D_* */
byte d_last;	/* the last timestamp given */
byte d_log;	/* the log: its timestamps */
byte d_trim;	/* trimmed to (watermark) */
byte d_cur;	/* the cursor: next timestamp to send from the log; 0: not behind */
byte d_resume;	/* where the primary's output stopped for a failover */
byte d_after, d_newest, d_acked; /* the replayed range (after, newest]; acknowledged below */
byte d_srun = 1;	/* the standby's run as last heard */
byte d_cancels, d_stries;
bool d_followed;	/* this replay follows a failover given up */
byte d_rwack;	/* the acknowledgement the last rewind went back to */
byte d_f;		/* faults made */
bool g_drestart;

/* ==== the primary's state (rsync/rsync_primary.c, rsync_latch.c, rsync_unit.c) ==== */
#define S_FREE 0
#define S_OPEN 1
#define S_SENT 2
#define S_VOTED 3

byte p_run = 1;
bool p_alive = true;
bool p_fenced;
byte p_epoch = 1;
byte p_nf;	/* the chain's state: timestamps processed */
byte p_last;	/* the last admitted timestamp */
byte p_used;	/* busy stages, oldest first at index 0 */
byte st_st[STAGES], st_tx[STAGES], st_prev[STAGES], st_pk[STAGES], st_n[STAGES];
byte st_cts[STAGES], st_cst[STAGES], st_nd[STAGES], st_tries[STAGES];
bool st_need[STAGES];
byte p_next_tx, p_chain_tx, p_chain_cts, p_chain_nd;
byte p_rel_tx, p_rel_cts, p_rel_nd;
byte p_ndseq;	/* ND decisions (and predecessor restarts) so far; a cut covers those before it */
byte p_acked;
byte p_srun;	/* the standby run served (the last heard) */
byte p_drun = 1;	/* the predecessor's run as last heard */
byte p_abort_first, p_abort_thr;
byte p_ctries, p_ttries, p_atries;
byte p_sdead;	/* FIX_VOTES: the standby run it replaced */
byte p_f;
bool g_pcrash, g_prestart;

/* ==== the standby's state (rsync/rsync_standby.c, rsync_standby_sync.c, rsync_unit.c) ==== */
byte s_run = 1;
byte s_epoch = 1;
bool s_whole = true, s_synced, s_ever, s_tk;
byte s_prun;	/* the primary run served (the first heard) */
byte s_drun = 1;
byte s_cancel;	/* the newest epoch given up */
byte sl_tx[WINDOW], sl_prev[WINDOW], sl_cts[WINDOW], sl_cst[WINDOW], sl_pk[WINDOW];
byte s_app_tx, s_app_cts, s_app_cst, s_abort_thr;
byte s_txts[NFLOW];
byte s_nf, s_last, s_tkcut, s_rnext, s_rnewest, s_tk_after, s_tk_newest; /* after the takeover */
byte s_f;
bool g_srestart;

/* ---------------------------------------------------------------------- */
/* primary                                                                 */

#define HAS_OPEN (p_used > 0 && st_st[p_used - 1] == S_OPEN)
#define LATCH_ROOM (HAS_OPEN || p_used + 1 < STAGES) /* packets never take the last free stage */
#define CUT_ROOM (HAS_OPEN || p_used < STAGES)
#define PS_IDLE (empty(p2s) && empty(s2p))
/* Once the standby took over, the old primary's new stages, cuts and
 * resends are refused (stale epoch) and never voted: it is let act only on
 * votes sent before, repeat its LOG_TRIM and be fenced. */
#define P_LIVE (p_alive && !p_fenced && pub_sepoch <= p_epoch)

inline p_clear(k)
{
	st_st[k] = S_FREE; st_tx[k] = 0; st_prev[k] = 0; st_pk[k] = 0; st_n[k] = 0;
	st_cts[k] = 0; st_cst[k] = 0; st_nd[k] = 0; st_tries[k] = 0; st_need[k] = false
}

inline p_copy(d, s)
{
	st_st[d] = st_st[s]; st_tx[d] = st_tx[s]; st_prev[d] = st_prev[s]; st_pk[d] = st_pk[s];
	st_n[d] = st_n[s]; st_cts[d] = st_cts[s]; st_cst[d] = st_cst[s]; st_nd[d] = st_nd[s];
	st_tries[d] = st_tries[s]; st_need[d] = st_need[s]
}

/* Everything a primary run holds, as it starts. */
inline p_forget()
{
	p_nf = 0; p_last = 0; p_used = 0;
	h_m = 0;
	do
	:: h_m < STAGES -> p_clear(h_m); h_m++
	:: else -> break
	od;
	p_next_tx = 0; p_chain_tx = 0; p_chain_cts = 0; p_chain_nd = 0;
	p_rel_tx = 0; p_rel_cts = 0; p_rel_nd = 0; p_ndseq = 0; p_acked = 0;
	p_srun = 0; p_abort_first = 0; p_abort_thr = 0; p_sdead = 0;
	p_ctries = 0; p_ttries = 0; p_atries = 0
}

/* A newer epoch owns the chain: nothing held is released any more, and a
 * fenced primary sends nothing, so the model forgets what it held. */
inline p_fence()
{
	p_fenced = true;
	p_forget()
}

inline p_send_prepare(k)
{
	SEND(p2s, PREPARE, p_epoch, p_run, p_srun, st_tx[k], st_prev[k], st_cts[k], st_cst[k], st_pk[k])
}

/* The open stage, opening one (the caller checked there is room). */
inline p_open(k)
{
	if
	:: HAS_OPEN -> k = p_used - 1
	:: else -> k = p_used; p_used++; st_st[k] = S_OPEN
	fi
}

/* OPEN -> SENT: number the transaction and chain it (rsync_stage_close). */
inline p_close(k)
{
	p_next_tx++;
	st_tx[k] = p_next_tx;
	st_prev[k] = p_chain_tx;
	p_chain_tx = p_next_tx;
	st_need[k] = (st_cts[k] == 0 && p_ndseq > p_chain_nd);
	if
	:: st_cts[k] != 0 -> p_chain_nd = st_nd[k]; p_chain_cts = st_cts[k]
	:: else
	fi;
	st_st[k] = S_SENT;
	st_tries[k] = 1;
	p_send_prepare(k)
}

/* Release the voted prefix in order; a stage that needs a cut goes once a
 * voted stage at or after it carries one.  Then COMMIT, and LOG_TRIM up to
 * the newest cut released (try_release). */
inline p_try_release()
{
	h_last = 255;
	h_k = 0;
	do
	:: h_k < p_used && st_st[h_k] == S_VOTED ->
		if
		:: st_cts[h_k] != 0 -> h_last = h_k
		:: else
		fi;
		h_k++
	:: else -> break
	od;
	h_n = 0;
	do
	:: h_n < p_used && st_st[h_n] == S_VOTED &&
	   (ND_WAIT_OFF || !st_need[h_n] || (h_last != 255 && h_n <= h_last)) -> h_n++
	:: else -> break
	od;
	h_rel = (h_n > 0);
	h_new = false;
	do
	:: h_n > 0 ->
#ifdef STRICT_P1
		assert(g_voted[st_tx[0]] & BIT(p_srun));	/* P1 (strict) */
#else
		assert(g_voted[st_tx[0]] != 0);			/* P1 */
#endif
		assert((g_rel & st_pk[0]) == 0);		/* P2 */
		g_rel = g_rel | st_pk[0];
		g_relp = g_relp | st_pk[0];
		if
		:: p_drun != pub_drun -> g_unrep = g_unrep | st_pk[0]
		:: else
		fi;
		if
		:: st_need[0] -> g_relnd = g_relnd | st_pk[0]
		:: else
		fi;
		p_rel_tx = st_tx[0];
		if
		:: st_cts[0] != 0 -> p_rel_cts = st_cts[0]; p_rel_nd = st_nd[0]; h_new = true
		:: else
		fi;
		h_m = 0;
		do
		:: h_m + 1 < STAGES -> p_copy(h_m, h_m + 1); h_m++
		:: else -> break
		od;
		p_clear(STAGES - 1);
		p_used--;
		h_n--
	:: else -> break
	od;
	if
	:: h_rel ->
		p_ctries = 0;
		SEND(p2s, COMMIT, p_epoch, p_run, p_srun, p_rel_tx, 0, 0, 0, 0)
	:: else
	fi;
#ifndef BROKEN_TRIM_ON_VOTE
	if
	:: h_new -> p_ttries = 0; SEND(p2d, p_epoch, p_drun, p_rel_cts)
	:: else
	fi
#endif
}

/* The chain after an abort: the released transaction, then the stages
 * before index k (rewind_chain). */
inline p_rewind(k)
{
	p_chain_tx = p_rel_tx;
	p_chain_cts = p_rel_cts;
	p_chain_nd = p_rel_nd;
	h_m = 0;
	do
	:: h_m < k ->
		p_chain_tx = st_tx[h_m];
		if
		:: st_cts[h_m] != 0 -> p_chain_cts = st_cts[h_m]; p_chain_nd = st_nd[h_m]
		:: else
		fi;
		h_m++
	:: else -> break
	od
}

/* Abort closed stage k and every closed stage after it, go-back-N; the
 * open stage moves down to k; the standby is told (abort_from). */
inline p_abort_from(k)
{
	h_a = 0;
	h_b = 0;
	h_j = k;
	do
	:: h_j < p_used && st_st[h_j] != S_OPEN ->
		if
		:: h_a == 0 -> h_a = st_tx[h_j]
		:: else
		fi;
		h_b = st_tx[h_j];
		h_j++
	:: else -> break
	od;
	if
	:: h_j < p_used -> /* the open stage */
		if
		:: h_j != k -> p_copy(k, h_j)
		:: else
		fi;
		p_used = k + 1
	:: else -> p_used = k
	fi;
	h_m = p_used;
	do
	:: h_m < STAGES -> p_clear(h_m); h_m++
	:: else -> break
	od;
	p_rewind(k);
	p_abort_first = h_a;
	p_abort_thr = h_b;
	p_atries = 0;
	SEND(p2s, ABORT, p_epoch, p_run, p_srun, h_a, h_b, 0, 0, 0)
}

/* The predecessor restarted and lost its log: no stage not released yet
 * goes out before a cut after it is voted (pred_restarted). */
inline p_pred_restarted()
{
	h_m = 0;
	do
	:: h_m < p_used ->
		if
		:: st_cts[h_m] == 0 -> st_need[h_m] = true
		:: else
		fi;
		h_m++
	:: else -> break
	od;
	p_ndseq++
}

/* The ingress admits timestamps in order; the NF processes the packet and
 * its output is latched (mgr_rsync_ingress, rsync_primary_add). */
inline p_admit(t)
{
	if
	:: p_fenced || STALE_IN(t) -> skip		/* fenced; or stale: reordered, duplicated */
	:: else ->
		assert((p_nf & BIT(t)) == 0);		/* P5 */
		p_nf = p_nf | BIT(t);
		p_last = t;
#ifdef ND
		if
		:: p_ndseq++		/* an ND decision: the next cut must cover it */
		:: skip
		fi;
#endif
		p_open(h_k);
		st_pk[h_k] = st_pk[h_k] | BIT(t);
		st_n[h_k]++;
		if
		:: st_n[h_k] == STAGE_PKTS && p_next_tx < MAXTX -> p_close(h_k)
		:: else
		fi
	fi
}

/* The standby restarted: what it committed is never acknowledged
 * (standby_restarted); FIX_VOTES: nor do its earlier run's votes count. */
inline p_standby_restarted()
{
	p_acked = p_rel_tx;
	p_ctries = 0;
	p_abort_first = 0;
	p_abort_thr = 0;
#ifdef FIX_VOTES
	p_sdead = p_srun;
	h_m = 0;
	do
	:: h_m < p_used ->
		if
		:: st_st[h_m] == S_VOTED -> st_st[h_m] = S_SENT; st_tries[h_m] = 1
		:: else
		fi;
		h_m++
	:: else -> break
	od;
#endif
	skip
}

/* A VOTE or an ACK (rsync_primary_rx). */
inline p_rx_standby()
{
	if
	:: h_ep < p_epoch || h_rr != p_run -> skip	/* stale epoch, stale run */
	:: h_ep >= p_epoch && h_rr == p_run && p_sdead != 0 && h_sr == p_sdead -> skip /* FIX_VOTES */
	:: h_ep >= p_epoch && h_rr == p_run && (p_sdead == 0 || h_sr != p_sdead) ->
		if
		:: h_sr != p_srun ->
			if
			:: p_srun != 0 -> p_standby_restarted()
			:: else
			fi;
			p_srun = h_sr
		:: else
		fi;
		if
		:: h_ep > p_epoch -> p_epoch = h_ep; p_fence()
		:: h_ep == p_epoch && !p_fenced && h_ty == VOTE ->
			h_k = 0;
			do
			:: h_k < p_used && !(st_tx[h_k] == h_a && st_st[h_k] >= S_SENT) -> h_k++
			:: else -> break
			od;
			if
			:: h_k < p_used && st_st[h_k] == S_SENT ->
				st_st[h_k] = S_VOTED;
#ifdef BROKEN_TRIM_ON_VOTE
				if
				:: st_cts[h_k] != 0 -> SEND(p2d, p_epoch, p_drun, st_cts[h_k])
				:: else
				fi;
#endif
				if
				:: h_a > p_abort_thr -> p_abort_first = 0; p_abort_thr = 0; p_atries = 0
				:: else
				fi;
				p_try_release()
			:: else
			fi
		:: h_ep == p_epoch && !p_fenced && h_ty == ACK ->
			if
			:: h_a > p_acked && h_a <= p_rel_tx ->
				p_acked = h_a;
				if
				:: p_acked == p_rel_tx -> p_ctries = 0	/* nothing to repeat */
				:: else
				fi
			:: else
			fi
		:: else
		fi
	fi
}

/* Stage K's timers: send again (and the last ABORT with it), or, out of
 * tries, abort it -- BROKEN_RELEASE_ON_TIMEOUT: release it, as the paper's
 * prototype did. */
#ifdef BROKEN_RELEASE_ON_TIMEOUT
#define P_TIMEOUT(K) st_st[K] = S_VOTED; p_try_release()
#else
#define P_TIMEOUT(K) p_abort_from(K)
#endif
#ifdef BROKEN_NO_ABORT
#define P_GIVES_UP false	/* out of tries, a stage waits for ever */
#else
#define P_GIVES_UP true
#endif
#define P_TIMERS(K) \
	:: atomic { P_LIVE && K < p_used && st_st[K] == S_SENT && \
		    st_tries[K] < MAXTRIES && PS_IDLE -> \
		st_tries[K]++; p_send_prepare(K); \
		if \
		:: p_abort_first != 0 && p_atries < 1 -> p_atries++; \
			SEND(p2s, ABORT, p_epoch, p_run, p_srun, p_abort_first, p_abort_thr, 0, 0, 0) \
		:: else \
		fi } \
	:: atomic { P_LIVE && K < p_used && st_st[K] == S_SENT && \
		    st_tries[K] == MAXTRIES && PS_IDLE && P_GIVES_UP -> P_TIMEOUT(K) }

active proctype Primary()
{
end_primary:
	do
	/* input; timestamp 0: the HEARTBEAT of a new predecessor run, in
	 * line with its input (after every frame its earlier run sent) */
	:: atomic { p_alive && pub_sepoch <= p_epoch && nempty(d2p) && (p_fenced || LATCH_ROOM) ->
		d2p?h_t, h_a;
		if
		:: h_t == 0 && h_a > p_drun && !p_fenced -> p_pred_restarted(); p_drun = h_a
		:: h_t == 0 && (h_a <= p_drun || p_fenced) -> skip
		:: h_t != 0 -> p_admit(h_t)
		fi }
	/* the standby's messages */
	:: atomic { nempty(s2p) -> s2p?h_ty, h_ep, h_sr, h_rr, h_a;
		if
		:: p_alive -> p_rx_standby()
		:: else
		fi }
	/* the open stage's timer */
	:: atomic { P_LIVE && HAS_OPEN && st_n[p_used - 1] > 0 && p_next_tx < MAXTX && nfull(p2s) ->
		p_close(p_used - 1) }
	/* a cut: every checkpoint period when something left the chain, at
	 * once when an ND decision waits for one.  Consistent because the
	 * marker follows every packet admitted before it. */
	:: atomic { P_LIVE && p_last > 0 && (p_last > p_chain_cts || p_ndseq > p_chain_nd) &&
		    CUT_ROOM && p_next_tx < MAXTX && nfull(p2s) ->
		p_open(h_k);
		st_cts[h_k] = p_last;
		st_cst[h_k] = p_nf;
		st_nd[h_k] = p_ndseq;
		p_close(h_k) }
	/* the stages' timers */
	P_TIMERS(0)
	P_TIMERS(1)
#if STAGES > 2
	P_TIMERS(2)
#endif
	/* COMMIT until acknowledged, LOG_TRIM now and then */
	:: atomic { P_LIVE && p_rel_tx > p_acked && p_ctries < MAXTRIES && PS_IDLE ->
		p_ctries++;
		SEND(p2s, COMMIT, p_epoch, p_run, p_srun, p_rel_tx, 0, 0, 0, 0) }
#ifndef BROKEN_TRIM_ON_VOTE
	:: atomic { p_alive && !p_fenced && p_rel_cts != 0 && p_ttries < 1 && empty(p2d) ->
		p_ttries++;
		SEND(p2d, p_epoch, p_drun, p_rel_cts) }
#endif
	/* messages held back on the way */
	:: atomic { nempty(late_p2s) && nfull(p2s) -> late_p2s?h_ty, h_ep, h_sr, h_rr, h_a, h_b, h_c, h_d, h_e;
		p2s!h_ty, h_ep, h_sr, h_rr, h_a, h_b, h_c, h_d, h_e }
	:: atomic { nempty(late_p2d) && nfull(p2d) -> late_p2d?h_ep, h_rr, h_a; p2d!h_ep, h_rr, h_a }
	/* HEARTBEATs: the predecessor's epoch, the standby's */
	:: atomic { p_alive && !p_fenced && pub_depoch > p_epoch -> p_epoch = pub_depoch; p_fence() }
	:: atomic { p_alive && !p_fenced && pub_sepoch > p_epoch -> p_epoch = pub_sepoch; p_fence() }
#ifdef PRI_CRASH
	:: atomic { p_alive && !g_pcrash -> p_alive = false; g_pcrash = true; p_fenced = false; p_forget() }
#endif
#ifdef PRI_RESTART
	/* a new run, empty, at the configured epoch */
	:: atomic { !p_alive && !g_prestart ->
		g_prestart = true;
		p_run = 2;
		pub_prun = 2;
		p_alive = true;
		p_fenced = false;
		p_epoch = 1;
		p_forget();
		p_drun = pub_drun;
		h_m = 0;
		do
		:: h_m <= MAXTX -> g_voted[h_m] = 0; h_m++
		:: else -> break
		od }
#endif
	od
}

/* ---------------------------------------------------------------------- */
/* standby                                                                 */

inline s_find(tx, r)
{
	r = 0;
	do
	:: r < WINDOW && sl_tx[r] != tx -> r++
	:: else -> break
	od
}

inline s_free(i)
{
	sl_tx[i] = 0; sl_prev[i] = 0; sl_cts[i] = 0; sl_cst[i] = 0; sl_pk[i] = 0
}

/* Drop what is staged with a txid in lo .. hi (discard_upto). */
inline s_discard(lo, hi)
{
	h_m = 0;
	do
	:: h_m < WINDOW ->
		if
		:: sl_tx[h_m] != 0 && sl_tx[h_m] >= lo && sl_tx[h_m] <= hi -> s_free(h_m)
		:: else
		fi;
		h_m++
	:: else -> break
	od
}

/* A txid inside the gap a staged META leaves: it was aborted (in_a_known_gap). */
inline s_in_gap(tx, r)
{
	r = false;
	h_m = 0;
	do
	:: h_m < WINDOW ->
		if
		:: sl_tx[h_m] != 0 && sl_prev[h_m] < tx && tx < sl_tx[h_m] -> r = true
		:: else
		fi;
		h_m++
	:: else -> break
	od
}

inline s_vote(tx)
{
	if
	:: s_prun == pub_prun -> g_voted[tx] = g_voted[tx] | BIT(s_run)
	:: else
	fi;
	SEND(s2p, VOTE, s_epoch, s_run, s_prun, tx)
}

/* The chain from slot `tip` back to what is applied, newest first, into
 * w_ch[0 .. w_n); w_ok false when a link is missing (walk_chain). */
inline s_walk(tip)
{
	w_n = 0;
	w_ok = true;
	w_origin = false;
	w_cur = tip;
	do
	:: w_n == WINDOW -> w_ok = false; break
	:: else ->
		w_ch[w_n] = w_cur;
		w_n++;
		if
		:: sl_prev[w_cur] == s_app_tx -> w_origin = (sl_prev[w_cur] == 0 && !s_ever); break
		:: sl_prev[w_cur] < s_app_tx -> w_ok = false; break
		:: sl_prev[w_cur] > s_app_tx ->
			s_find(sl_prev[w_cur], w_nx);
			if
			:: w_nx == WINDOW && !s_whole -> break
			:: w_nx == WINDOW && s_whole -> w_ok = false; break
			:: w_nx < WINDOW -> w_cur = w_nx
			fi
		fi
	od
}

/* Apply one staged transaction: its TxTs delta (a cut first frees the
 * entries at or below it), then its cut (apply_slot). */
inline s_apply(i)
{
	if
	:: sl_cts[i] != 0 ->
		h_m = 0;
		do
		:: h_m < NFLOW ->
			if
			:: s_txts[h_m] <= sl_cts[i] -> s_txts[h_m] = 0
			:: else
			fi;
			h_m++
		:: else -> break
		od
	:: else
	fi;
	h_m = 1;
	do
	:: h_m <= MAXTS ->
		if
		:: (sl_pk[i] & BIT(h_m)) && h_m > sl_cts[i] && s_txts[FLOW(h_m)] < h_m ->
			s_txts[FLOW(h_m)] = h_m
		:: else
		fi;
		h_m++
	:: else -> break
	od;
	s_app_tx = sl_tx[i];
	s_ever = true;
	if
	:: sl_cts[i] != 0 -> s_app_cts = sl_cts[i]; s_app_cst = sl_cst[i]
	:: else
	fi;
	s_free(i)
}

inline s_apply_walked()
{
	if
	:: w_origin && s_whole -> s_synced = true
	:: else
	fi;
	do
	:: w_n > 0 -> w_n--; s_apply(w_ch[w_n])
	:: else -> break
	od
}

/* Nothing applied yet and the chain reaches back past what is staged:
 * this standby started while the chain ran (joined_late). */
inline s_joined_late()
{
	if
	:: !s_ever && s_whole -> s_whole = false; s_synced = false
	:: else
	fi
}

/* A message of the primary (rsync_standby_rx). */
inline s_rx_primary()
{
	if
	:: h_ep != s_epoch || s_tk -> skip				/* stale epoch */
	:: h_ep == s_epoch && !s_tk && (h_ty == COMMIT || h_ty == ABORT) && h_rr != s_run -> skip /* stale run */
	:: else ->
		if
		:: s_prun == 0 -> s_prun = h_sr
		:: else
		fi;
		if
		:: h_sr != s_prun -> skip				/* a restarted primary */
		:: h_sr == s_prun && h_ty == PREPARE ->
			s_find(h_a, h_i);
			if
			:: h_i < WINDOW -> s_vote(h_a)			/* our vote was lost */
			:: h_i == WINDOW && (h_a <= s_app_tx || h_a <= s_abort_thr) -> skip /* late copy */
			:: h_i == WINDOW && h_a > s_app_tx && h_a > s_abort_thr ->
				s_in_gap(h_a, h_g);
				if
				:: h_g -> skip
				:: else ->
					s_discard(h_b + 1, h_a - 1);
					s_find(0, h_i);
					if
					:: h_i == WINDOW -> skip		/* no room */
					:: else ->
						sl_tx[h_i] = h_a; sl_prev[h_i] = h_b; sl_cts[h_i] = h_c;
						sl_cst[h_i] = h_d; sl_pk[h_i] = h_e;
						s_vote(h_a)
					fi
				fi
			fi
		:: h_sr == s_prun && h_ty == COMMIT ->
			if
			:: h_a <= s_app_tx -> skip			/* our ACK was lost */
			:: else ->
				s_find(h_a, h_i);
				if
				:: h_i == WINDOW -> s_joined_late()
				:: else ->
					s_walk(h_i);
					if
					:: !w_ok && !s_ever -> s_joined_late(); s_walk(h_i)
					:: else
					fi;
					if
					:: w_ok -> s_apply_walked(); s_discard(0, s_app_tx)
					:: else
					fi
				fi
			fi;
			if
			:: s_app_tx > 0 -> SEND(s2p, ACK, s_epoch, s_run, s_prun, s_app_tx)
			:: else
			fi
		:: h_sr == s_prun && h_ty == ABORT ->
			s_discard(h_a, h_b);
			if
			:: h_b > s_abort_thr -> s_abort_thr = h_b
			:: else
			fi
		fi
	fi
}

/* REPLAY_START of a newer epoch: presumed commit of the newest voted
 * transaction whose chain is complete, if that leaves the standby in sync
 * (rsync_standby_takeover, standby_replay_msg). */
inline s_takeover()
{
	h_dead = 0;
	do
	:: true ->
		h_tip = WINDOW;
		h_m = 0;
		do
		:: h_m < WINDOW ->
			if
			:: sl_tx[h_m] != 0 && (h_dead & BIT(h_m)) == 0 &&
			   (h_tip == WINDOW || sl_tx[h_m] > sl_tx[h_tip]) -> h_tip = h_m
			:: else
			fi;
			h_m++
		:: else -> break
		od;
		if
		:: h_tip == WINDOW -> w_n = 0; w_origin = false; break
		:: else ->
			s_walk(h_tip);
			if
			:: w_ok -> break
			:: else -> h_dead = h_dead | BIT(h_tip)
			fi
		fi
	od;
	if
	:: !(s_synced || (w_origin && s_whole)) ->
		SEND(s2d, REFUSE, h_ep, s_drun, h_a, h_b)		/* not in sync */
	:: else ->
		s_apply_walked();
		assert(g_trim <= s_app_cts);					/* P3 */
		assert((g_relp & ~g_unrep & ~UPTO(s_app_cts) & g_oldts) == 0);	/* P3 */
		assert((g_relnd & ~UPTO(s_app_cts)) == 0);			/* P6 */
		h_m = 0;
		do
		:: h_m < WINDOW -> s_free(h_m); h_m++
		:: else -> break
		od;
		/* (what only staging and applying used: forgotten) */
		s_app_tx = 0; s_abort_thr = 0; s_cancel = 0; s_prun = 0;
		s_whole = true; s_synced = true; s_ever = true;
		s_epoch = h_ep;
		pub_sepoch = h_ep;
		s_tk = true;
		s_nf = s_app_cst;
		s_tkcut = s_app_cts;
#ifdef FIX_FOLLOW
		/* the proposed fix: the cut holds what is at or below it, so
		 * the replay is not waited for there */
		s_rnext = MAX(h_a, s_app_cts) + 1;
#else
		s_rnext = h_a + 1;
#endif
		pub_rnext = s_rnext;
		s_rnewest = h_b;
		s_tk_after = h_a;
		s_tk_newest = h_b;
		g_tk = true;
		g_tkcut = s_app_cts;
		SEND(s2d, ECHO, s_epoch, s_drun, h_a, h_b)
	fi
}

/* Stamped input after the takeover: the replayed range whole and in
 * order, then timestamps in order; the cut holds those at or below it;
 * an output at or below its flow's TxTs left the old primary already
 * (mgr_rsync_ingress, the TX unit's filter). */
inline s_input(t)
{
	if
	:: !s_tk -> skip					/* before the takeover */
	:: s_tk && s_rnext <= s_rnewest && t != s_rnext ->
		if
		:: t > s_rnext -> SEND(s2d, RACK, s_epoch, s_drun, s_rnext, t)	/* a gap */
		:: else
		fi
	:: else ->
		if
		:: s_rnext <= s_rnewest ->
			s_rnext++;
			pub_rnext = s_rnext;
			if
			:: s_rnext > s_rnewest -> SEND(s2d, RACK, s_epoch, s_drun, s_rnext, 0)
			:: else
			fi
		:: else
		fi;
		if
		:: t <= s_last -> skip					/* stale */
		:: t > s_last && t <= CUT_HOLDS -> s_last = t		/* the cut holds it */
		:: t > s_last && t > CUT_HOLDS ->
			s_last = t;
			assert((s_nf & BIT(t)) == 0);			/* P5 */
			s_nf = s_nf | BIT(t);
			if
			:: SUPPRESS_ON && t <= s_txts[FLOW(t)] -> skip	/* released already */
			:: !SUPPRESS_ON || t > s_txts[FLOW(t)] ->
				assert((g_rel & BIT(t)) == 0);		/* P2 */
				g_rel = g_rel | BIT(t)
			fi
		fi
	fi
}

/* A message of the predecessor (standby_replay_msg, and the ingress). */
inline s_rx_pred()
{
	if
	:: h_ty == DATA -> s_input(h_a)
	:: h_ty != DATA && h_rr != s_run -> skip			/* stale run */
	:: h_ty != DATA && h_rr == s_run ->
		s_drun = h_sr;
		if
		:: h_ty == CANCEL ->
			if
			:: s_tk && h_ep == s_epoch ->			/* taken: say so again */
				SEND(s2d, ECHO, s_epoch, s_drun, s_tk_after, s_tk_newest)
			:: !s_tk && h_ep > s_cancel -> s_cancel = h_ep
			:: else
			fi
		:: h_ty == START ->
			if
			:: s_tk && h_ep == s_epoch -> SEND(s2d, ECHO, s_epoch, s_drun, h_a, h_b)
			:: else ->
				if
				:: h_ep <= s_epoch || h_ep <= s_cancel -> skip	/* old, or given up */
				:: else -> s_takeover()
				fi
			fi
		fi
	fi
}

active proctype Standby()
{
end_standby:
	do
	:: atomic { nempty(p2s) -> p2s?h_ty, h_ep, h_sr, h_rr, h_a, h_b, h_c, h_d, h_e; s_rx_primary() }
	:: atomic { nempty(d2s) -> d2s?h_ty, h_ep, h_sr, h_rr, h_a, h_b; s_rx_pred() }
	/* REPLAY_ACK every millisecond while replaying (when it tells the
	 * predecessor something new: the rest change nothing) */
	:: atomic { s_tk && pub_dreplay && s_rnext != pub_dacked && empty(d2s) && empty(s2d) ->
		SEND(s2d, RACK, s_epoch, s_drun, s_rnext, 0) }
	/* messages held back on the way */
	:: atomic { nempty(late_s2p) && nfull(s2p) -> late_s2p?h_ty, h_ep, h_sr, h_rr, h_a;
		s2p!h_ty, h_ep, h_sr, h_rr, h_a }
	:: atomic { nempty(late_s2d) && nfull(s2d) -> late_s2d?h_ty, h_ep, h_rr, h_a, h_b;
		s2d!h_ty, h_ep, h_rr, h_a, h_b }
#ifdef SBY_RESTART
	/* a new run: nothing staged or applied, not in sync */
	:: atomic { !s_tk && !g_srestart ->
		g_srestart = true;
		s_run = 2; pub_srun = 2; s_epoch = 1; s_whole = true; s_synced = false; s_ever = false;
		s_prun = 0; s_cancel = 0; s_app_tx = 0; s_app_cts = 0; s_app_cst = 0; s_abort_thr = 0;
		h_m = 0;
		do
		:: h_m < WINDOW -> s_free(h_m); h_m++
		:: else -> break
		od;
		h_m = 0;
		do
		:: h_m < NFLOW -> s_txts[h_m] = 0; h_m++
		:: else -> break
		od }
#endif
	od
}

/* ---------------------------------------------------------------------- */
/* predecessor                                                             */

#define DS_IDLE (empty(d2s) && empty(s2d))
#define D_HAS_FROM(x) ((d_log & ~(BIT(x) - 1)) != 0) /* an entry at or after x */

/* The first log entry at or after timestamp x, 0 if none (plog_log_seek). */
inline d_seek(x, r)
{
	r = x;
	do
	:: r <= MAXTS && (d_log & BIT(r)) == 0 -> r++
	:: else -> break
	od;
	if
	:: r > MAXTS -> r = 0
	:: else
	fi
}

/* Back to the primary, from where its output stopped; the epoch offered
 * is cancelled (give_up_failover). */
inline d_give_up()
{
	d_st = D_PRI;
	d_cur = d_resume;
	d_resume = 0;
	d_stries = 0;
	d_cancels = NCANCEL
}

/* The standby took epoch d_att: replay (after, newest] to it. */
inline d_replay()
{
	d_epoch = d_att;
	pub_depoch = d_att;
	d_st = D_REPLAY;
	pub_dreplay = true;
	d_resume = 0;
	d_stries = 0;
	d_cur = d_after + 1;
	d_acked = d_after + 1;
	pub_dacked = d_acked;
	d_rwack = 0;
	g_lost = false
}

/* Send the log again from what the standby lacks (replay_rewind).  Back to
 * the same acknowledgement only after a replay message was lost: otherwise
 * what the last rewind sent arrives (the abstraction of its rate limit). */
#define D_MAY_REWIND(ack) ((ack) != d_rwack || g_lost)
inline d_rewind(ack)
{
	d_cur = ack;
	d_rwack = ack;
	g_lost = false
}

/* The cursor: a chain behind, or the replay (send_from_log). */
inline d_cursor()
{
	d_seek(d_cur, h_t);
	if
	:: h_t == 0 && d_st == D_REPLAY ->	/* whole and acknowledged: REPLAY_END */
		d_st = D_SBY; pub_dreplay = false; d_cur = 0; d_log = 0; d_trim = d_last;
		d_after = 0; d_newest = 0; d_acked = 0; d_rwack = 0
	:: h_t == 0 && d_st != D_REPLAY -> d_cur = 0	/* caught up */
	:: h_t != 0 && d_st == D_PRI -> SEND(d2p, h_t, d_run); d_cur = h_t + 1
	:: h_t != 0 && d_st == D_REPLAY -> SEND(d2s, DATA, 0, 0, 0, h_t, 0); d_cur = h_t + 1
	:: h_t != 0 && d_st == D_SBY -> SEND(d2s, DATA, 0, 0, 0, h_t, 0); d_cur = h_t + 1;
		d_log = d_log & ~UPTO(h_t)		/* only a buffer now */
	fi
}

/* The standby's echo or refusal of REPLAY_START, and its REPLAY_ACKs. */
inline d_rx_standby()
{
	if
	:: h_rr != d_run -> skip					/* stale run */
	:: h_rr == d_run && (h_ty == ECHO || h_ty == REFUSE) ->
		if
		:: h_ep != d_att -> skip
		:: h_ep == d_att && h_ty == REFUSE && d_st == D_START -> d_give_up()
		:: h_ep == d_att && h_ty == ECHO && d_st == D_START -> d_replay()
		:: h_ep == d_att && h_ty == ECHO && d_st == D_PRI && d_att > d_epoch ->
			/* given up, but the standby had taken over: follow it */
#ifdef CHECK_FOLLOW
			assert(d_after >= d_newest || (d_log & BIT(d_after + 1)));	/* P3 (F1) */
#endif
			d_cancels = 0;
			d_followed = true;
			d_replay()
		:: else
		fi
	:: h_rr == d_run && h_ty == RACK ->
		if
		:: h_ep != d_epoch || d_st != D_REPLAY -> skip
		:: else ->
			if
			:: h_a > d_acked -> d_acked = h_a; pub_dacked = h_a
			:: else
			fi;
			/* a gap: send again from what the standby lacks, once
			 * the cursor went past it */
			if
			:: h_b != 0 && h_a <= d_newest && D_MAY_REWIND(h_a) &&
			   (d_log & RANGE(d_cur, h_a)) == 0 -> d_rewind(h_a)
			:: else
			fi
		fi
	fi
}

active proctype Pred()
{
end_pred:
	do
	/* stamp, log and send (mgr_plog_on_send); a port without room makes
	 * the predecessor wait (only replies meet a full link) */
	:: atomic { d_last < MAXTS && d_st == D_PRI && d_cur == 0 && nfull(d2p) ->
		d_last++;
		d_log = d_log | BIT(d_last);
		SEND(d2p, d_last, d_run) }
	:: atomic { d_last < MAXTS && d_st == D_SBY && d_cur == 0 && nfull(d2s) ->
		d_last++;
		SEND(d2s, DATA, 0, 0, 0, d_last, 0) }
	:: atomic { d_last < MAXTS && (d_st == D_START || d_st == D_REPLAY || d_cur != 0) ->
		d_last++;
		d_log = d_log | BIT(d_last) }		/* logged only: the cursor sends it */
	/* the cursor */
	:: atomic { d_cur != 0 && d_st == D_PRI && D_HAS_FROM(d_cur) && nfull(d2p) -> d_cursor() }
	:: atomic { d_cur != 0 && (d_st == D_REPLAY || d_st == D_SBY) && D_HAS_FROM(d_cur) && nfull(d2s) ->
		d_cursor() }
	:: atomic { d_cur != 0 && d_st != D_START && !D_HAS_FROM(d_cur) &&
		    (d_st != D_REPLAY || d_acked > d_newest) -> d_cursor() }
	/* a failover: BFD, a link down, the primary restarted, the operator;
	 * or a false suspicion */
	:: atomic { d_st == D_PRI && MAX(d_epoch, d_att) < MAXEPOCH && nfull(d2s) ->
		d_seek(1, h_t);
		d_after = (h_t != 0 -> h_t - 1 : d_last);
		d_newest = d_last;
		d_att = MAX(d_epoch, d_att) + 1;
		d_resume = (d_cur != 0 -> d_cur : d_last + 1);
		d_cur = 0;
		d_cancels = 0;
		d_stries = 0;
		d_st = D_START;
		SEND(d2s, START, d_att, d_run, d_srun, d_after, d_newest) }
	:: atomic { d_st == D_START && d_stries < 1 && DS_IDLE ->
		d_stries++;
		SEND(d2s, START, d_att, d_run, d_srun, d_after, d_newest) }
	:: atomic { d_st == D_START && DS_IDLE -> d_give_up() }	/* no answer in failover_timeout_ms */
	:: atomic { d_st == D_PRI && d_cancels > 0 && nfull(d2s) ->
		d_cancels--;
		SEND(d2s, CANCEL, d_att, d_run, d_srun, 0, 0) }
	/* the replay: no progress for a while (after the standby's periodic
	 * REPLAY_ACK, which comes first), send again */
	:: atomic { d_st == D_REPLAY && d_acked <= d_newest && d_acked == pub_rnext && DS_IDLE &&
		    D_MAY_REWIND(d_acked) && (d_log & RANGE(d_cur, d_acked)) == 0 -> d_rewind(d_acked) }
	/* the standby's messages, and the primary's LOG_TRIM */
	:: atomic { nempty(s2d) -> s2d?h_ty, h_ep, h_rr, h_a, h_b; d_rx_standby() }
	:: atomic { nempty(p2d) -> p2d?h_ep, h_rr, h_a;
		if
		:: h_rr == d_run && h_ep == d_epoch && d_st == D_PRI ->
			assert(!g_tk || h_a <= g_tkcut);		/* P3 */
			if
			:: h_a > d_trim -> d_trim = h_a; g_trim = h_a; d_log = d_log & ~UPTO(h_a)
			:: else
			fi
		:: else
		fi }
	/* messages held back on the way */
	:: atomic { nempty(late_d2p) && nfull(d2p) -> late_d2p?h_t, h_a; d2p!h_t, h_a }
	:: atomic { nempty(late_d2s) && nfull(d2s) -> late_d2s?h_ty, h_ep, h_sr, h_rr, h_a, h_b;
		d2s!h_ty, h_ep, h_sr, h_rr, h_a, h_b }
	/* the standby's HEARTBEAT: its run */
	:: atomic { d_srun != pub_srun -> d_srun = pub_srun }
#ifdef PRED_RESTART
	/* a new run: the log is lost, timestamps go on above */
	:: atomic { d_st == D_PRI && d_epoch == 1 && !g_tk && !g_drestart ->
		g_drestart = true;
		g_unrep = g_relp;	/* released before: their inputs may be above every cut */
		g_oldts = UPTO(d_last);
		g_trim = 0;
		d_run = 2; pub_drun = 2;
		d_log = 0; d_trim = 0; d_cur = 0; d_att = 0; d_cancels = 0;
		SEND(d2p, 0, d_run) }		/* its first HEARTBEAT */
#endif
	od
}

/* P4: when nothing can move any more, nothing is stuck. */
active proctype Quiet()
{
	timeout ->
	assert(!p_alive || p_fenced || p_next_tx >= MAXTX || p_used == 0);	/* P4 */
#if defined(FIX_FOLLOW) || defined(CHECK_FOLLOW)
	assert(d_st != D_REPLAY);						/* P4 */
#else
	/* (a replay that follows a failover given up may stall: finding F1,
	 * checked with -DCHECK_FOLLOW) */
	assert(d_st != D_REPLAY || d_followed);					/* P4 */
#endif
}
