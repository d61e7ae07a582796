/* paddock-session-network.c — org.paddock.Session1's network: the proxy, its policy, its records, leased ports
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A session in proxy mode has a network namespace of its own with nothing
 * but loopback. paddock-sandbox listens on 127.0.0.1:3128 inside it before
 * the agent exists and hands the listening socket to us ({"event":"proxy"}
 * on the control channel); a PaddockProxy serves it here, in the daemon's
 * network namespace, where names are resolved. So the kernel, not the
 * agent's goodwill, makes the proxy the only way out: a program that
 * ignores HTTP_PROXY reaches nothing at all.
 *
 * Each session's proxy runs on a thread of its own ("paddock-proxy"),
 * with a GMainContext of its own: a busy proxy does not delay the daemon's
 * bus, terminals and other sessions, and they do not delay it. The proxy
 * is made on that context before the thread starts (so a proxy that
 * cannot be served fails the session's start, never leaves it claiming
 * proxy mode); everything the main thread asks of it later (new rules,
 * stop) is posted to the context in order; the records a proxy emits are handed back to the
 * main thread in batches, where each becomes a record in the session's
 * journal (numbered, a ring in memory, a bounded file next to
 * session.json) and a NetworkRecord signal.
 *
 * Stopping never waits on the main thread, but at the daemon's exit. When
 * the session's sandbox is gone or the session is released, the proxy's
 * thread is told to stop and the main loop goes on at once: the proxy
 * ends every open request and tunnel, recording each as cut off with its
 * bytes so far, and the thread's last act is to post to the main context,
 * where it is joined and the records it left are journaled (a thread held
 * in its stop holds up nothing else: other clients' calls, other sessions'
 * terminals). Records of a session that was destroyed meanwhile go
 * nowhere: its folder is gone or going, and no file is made in it again.
 * The daemon's shutdown (before it flushes the journals) is the one
 * synchronous stop: every proxy whose thread has not been joined, told
 * now or earlier, is waited for against one deadline (PROXY_STOP_TIMEOUT_US),
 * joined and its records journaled there and then. So no request in
 * flight at the daemon's exit goes unrecorded, and no session leaves a
 * thread behind; a thread stuck past the deadline is logged and let go
 * with its own reference to what it uses, rather than hang the exit.
 *
 * The policy changes live: the allowlist applies to the next request, and
 * "none" for a session that has a proxy means the proxy refuses everything;
 * open requests and tunnels the new policy would refuse are ended. A change that needs another network
 * namespace (to or from host, or to proxy without the socket) is refused
 * with RestartRequired.
 *
 * Ports leased on the host's network reach the agent by the
 * socket-activation protocol; the helpers for that are at the end. In a
 * namespace of its own they are forwarded (paddock-session-ports.c).
 *
 * Given the session's id, its folder, its gate (paddock-session-gate.c)
 * and its config when made, it never calls into the session: it judges by
 * the config's parsed policy and changes it there (SetNetworkPolicy),
 * publishing the new one and each record on the skeleton it is attached
 * to (a destroyed session's records go nowhere), asks the gate whether
 * the session takes a call that needs it running and whether any of its
 * processes may still run, and says a policy change ("policy-changed")
 * for the session to record.
 */

#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "paddock-error.h"
#include "paddock-lease.h"
#include "paddock-net-journal.h"
#include "paddock-net-modes.h"
#include "paddock-proxy.h"
#include "paddock-session-calls.h"
#include "paddock-session-network.h"
#include "paddock-session-ports.h"
#include "paddock-test-hold.h"

#define MAX_RECORDS_PER_CALL 1000
#define JOURNAL_FILE         "network.jsonl"
/* How long the daemon's shutdown waits for every proxy's thread to end
 * (the one stop that waits, on the main thread); and how long a thread,
 * told to end, runs what became ready meanwhile. */
#define PROXY_STOP_TIMEOUT_US  (5 * G_USEC_PER_SEC)
#define PROXY_DRAIN_TIMEOUT_US (1 * G_USEC_PER_SEC)

/* A session's proxy as both threads see it. */
typedef struct
{
  gatomicrefcount        ref_count;
  GMutex                 lock;
  PaddockSessionNetwork *network;       /* main thread's; NULL (under lock) once it is freed */
  GMainContext          *main_context;  /* where records go */
  GQueue                 delivery;      /* PaddockNetRecord*, under lock */
  gboolean               delivery_posted; /* under lock */
  char                  *session_id;
  GMainContext          *context;       /* the proxy thread's; goes with the link */
  GThread               *thread;        /* main thread's: NULL once joined or let go */
  gint                   quit;          /* atomic: the thread ends after this iteration */
  gboolean               ended;         /* under lock: the thread is about to return */
  gboolean               told_to_stop;  /* main thread's: link_finish() was posted */
  GCond                  ended_cond;
  /* The proxy thread's alone: */
  PaddockProxy          *proxy;
  gulong                 record_id;
} ProxyLink;

struct _PaddockSessionNetwork
{
  GObject             parent_instance;

  PaddockSessionCallHandlers calls;  /* its handle-* handlers on the session's skeleton */

  char               *session_id;
  PaddockSessionGate *gate;
  PaddockSessionConfig *config;    /* the session's: its policy */
  PaddockNetJournal  *journal;
  ProxyLink          *link;        /* NULL until the sandbox passed its socket, and once told to stop */
  GList              *stopping;    /* ProxyLink* (a reference each) told to stop, not joined yet */
  gboolean            has_listener;  /* started in proxy mode */
  gboolean            may_have_listener;  /* adopted in none mode: may have been started in proxy */
  gboolean            forwards_ports;  /* started in none or proxy: leases are forwarded */
  PaddockSessionPorts *ports;      /* leases forwarded in none and proxy */
};

enum {
  SIGNAL_POLICY_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (PaddockSessionNetwork, paddock_session_network, G_TYPE_OBJECT)

/* Every link whose thread was started and is neither joined nor let go,
 * a reference each (main thread only): what
 * paddock_session_network_stop_all_proxies() waits for at the daemon's
 * exit, whether its session still has it or its stop began earlier. */
static GList *live_links;

/* The proxy thread: serves its context until told to end, then lets
 * whatever became ready meanwhile run (cancelled operations answering),
 * so that nothing of the proxy is left half done. */
static void link_unref (ProxyLink *link);

static gboolean link_ended_cb (gpointer user_data);

/* The thread holds a reference of its own: a stop that gave up waiting
 * (the daemon's exit) frees nothing the thread still uses. Its last act
 * hands that reference to link_ended_cb() on the main thread. */
static gpointer
proxy_thread_main (gpointer data)
{
  ProxyLink *link = data;
  GSource *source;
  gint64 deadline;

  g_main_context_push_thread_default (link->context);
  while (!g_atomic_int_get (&link->quit))
    g_main_context_iteration (link->context, TRUE);
  /* Bounded in time: a source that is always ready must not keep the
   * thread from ending (the daemon's exit waits for it). */
  deadline = g_get_monotonic_time () + PROXY_DRAIN_TIMEOUT_US;
  while (g_get_monotonic_time () < deadline && g_main_context_iteration (link->context, FALSE))
    ;
  /* A safety net: link_finish() ends the proxy before it sets quit, so
   * nothing is left here. Should something be, it ends on its own thread,
   * its records taken only while a session still has the link. */
  if (link->proxy != NULL)
    {
      paddock_proxy_stop (link->proxy);
      g_clear_signal_handler (&link->record_id, link->proxy);
      g_clear_object (&link->proxy);
    }
  g_main_context_pop_thread_default (link->context);

  g_mutex_lock (&link->lock);
  link->ended = TRUE;
  g_cond_signal (&link->ended_cond);
  g_mutex_unlock (&link->lock);
  /* The main thread joins us (we only return from here on) and journals
   * what we left; our reference goes with the source. */
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, link_ended_cb, link, (GDestroyNotify) link_unref);
  g_source_attach (source, link->main_context);
  g_source_unref (source);
  return NULL;
}

static ProxyLink *
link_ref (ProxyLink *link)
{
  g_atomic_ref_count_inc (&link->ref_count);
  return link;
}

static void
link_unref (ProxyLink *link)
{
  if (!g_atomic_ref_count_dec (&link->ref_count))
    return;
  g_assert (link->proxy == NULL);
  g_queue_clear_full (&link->delivery, g_object_unref);
  /* Whatever never ran (nothing, normally) goes with the context. */
  g_clear_pointer (&link->context, g_main_context_unref);
  g_main_context_unref (link->main_context);
  g_cond_clear (&link->ended_cond);
  g_mutex_clear (&link->lock);
  g_free (link->session_id);
  g_free (link);
}

/* Runs @func(@link, @data) on the proxy thread, after whatever was posted before. */
typedef struct
{
  ProxyLink      *link;
  void          (*func) (ProxyLink *link, gpointer data);
  gpointer        data;
  GDestroyNotify  free_data;
} LinkCall;

static gboolean
link_call_cb (gpointer user_data)
{
  LinkCall *call = user_data;

  call->func (call->link, call->data);
  return G_SOURCE_REMOVE;
}

static void
link_call_free (gpointer user_data)
{
  LinkCall *call = user_data;

  if (call->free_data != NULL)
    call->free_data (call->data);
  link_unref (call->link);
  g_free (call);
}

/* Only while the thread runs (main thread). */
static void
link_post (ProxyLink      *link,
           void          (*func) (ProxyLink *link, gpointer data),
           gpointer        data,
           GDestroyNotify  free_data)
{
  LinkCall *call = g_new0 (LinkCall, 1);
  GSource *source = g_idle_source_new ();

  call->link = link_ref (link);
  call->func = func;
  call->data = data;
  call->free_data = free_data;
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, link_call_cb, call, link_call_free);
  g_source_attach (source, link->context);
  g_source_unref (source);
}

/* The rules for @mode and @allow: "!pattern" denies (a deny wins), any
 * other entry allows; "none" allows nothing whatever the list says. */
PaddockDomainRules *
_paddock_session_network_build_rules (const char         *mode,
                                      const char * const *allow,
                                      GError            **error)
{
  g_autoptr(PaddockDomainRules) rules = paddock_domain_rules_new ();
  guint n = allow != NULL ? g_strv_length ((GStrv) allow) : 0;

  if (n > PADDOCK_DOMAIN_RULES_MAX_PATTERNS)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "At most %d domain patterns", PADDOCK_DOMAIN_RULES_MAX_PATTERNS);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) local_error = NULL;
      gboolean ok = allow[i][0] == '!'
                    ? paddock_domain_rules_add_deny (rules, allow[i] + 1, &local_error)
                    : paddock_domain_rules_add_allow (rules, allow[i], &local_error);

      if (!ok)
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "Invalid domain pattern “%s”: %s", allow[i], local_error->message);
          return NULL;
        }
    }

  /* A test switch, like PADDOCK_TEST_WITHOUT_LAYERS: the daemon under test
   * lets the proxy reach the ports of the test's loopback servers. Only
   * the daemon's own environment has it; nothing inside a session can. */
  if (g_getenv ("PADDOCK_TEST_PROXY_PORTS") != NULL)
    {
      g_auto(GStrv) ports = g_strsplit (g_getenv ("PADDOCK_TEST_PROXY_PORTS"), ",", 64);

      for (guint i = 0; ports[i] != NULL; i++)
        {
          guint64 port;

          if (g_ascii_string_to_unsigned (ports[i], 10, 1, 65535, &port, NULL))
            paddock_domain_rules_add_port (rules, (guint) port, NULL);
        }
    }

  if (g_strcmp0 (mode, "proxy") != 0)
    {
      /* Allows nothing: a fresh rule set denies every host. */
      g_clear_object (&rules);
      rules = paddock_domain_rules_new ();
    }
  return g_steal_pointer (&rules);
}

static GVariant *
record_to_variant (PaddockNetRecord *record)
{
  GVariantDict dict;
  const char *error = paddock_net_record_get_error (record);

  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert (&dict, "seq", "t", paddock_net_record_get_seq (record));
  g_variant_dict_insert (&dict, "time", "x", paddock_net_record_get_time (record));
  g_variant_dict_insert (&dict, "method", "s", paddock_net_record_get_method (record));
  g_variant_dict_insert (&dict, "host", "s", paddock_net_record_get_host (record));
  g_variant_dict_insert (&dict, "port", "u", paddock_net_record_get_port (record));
  g_variant_dict_insert (&dict, "verdict", "s",
                         paddock_net_verdict_to_string (paddock_net_record_get_verdict (record)));
  g_variant_dict_insert (&dict, "bytes_up", "t", paddock_net_record_get_bytes_up (record));
  g_variant_dict_insert (&dict, "bytes_down", "t", paddock_net_record_get_bytes_down (record));
  g_variant_dict_insert (&dict, "duration_ms", "x", paddock_net_record_get_duration_ms (record));
  g_variant_dict_insert (&dict, "error", "s", error != NULL ? error : "");
  return g_variant_dict_end (&dict);
}

/* On the main thread: the records the proxy thread handed over. */
static gboolean
deliver_records_cb (gpointer user_data)
{
  ProxyLink *link = user_data;
  GQueue records = G_QUEUE_INIT;
  PaddockNetRecord *record;

  g_mutex_lock (&link->lock);
  records = link->delivery;
  g_queue_init (&link->delivery);
  link->delivery_posted = FALSE;
  g_mutex_unlock (&link->lock);

  /* link->network only changes on this thread. A destroyed session's
   * records go nowhere: its folder is gone (or about to go, once its
   * records are on disk), and nothing can list them. */
  while ((record = g_queue_pop_head (&records)) != NULL)
    {
      PaddockIpcSession1 *skeleton = link->network != NULL ? link->network->calls.skeleton : NULL;

      if (skeleton != NULL && g_strcmp0 (paddock_ipc_session1_get_state (skeleton), "destroyed") != 0)
        {
          paddock_net_journal_append (link->network->journal, record);
          paddock_ipc_session1_emit_network_record (skeleton, record_to_variant (record));
        }
      g_object_unref (record);
    }
  return G_SOURCE_REMOVE;
}

/* On the proxy thread. The proxy reuses nothing: this record is finished
 * and, once on the main thread, the journal's to number. One wake-up of
 * the main thread carries every record finished meanwhile. */
static void
record_added_cb (PaddockProxy     *proxy,
                 PaddockNetRecord *record,
                 gpointer          user_data)
{
  ProxyLink *link = user_data;

  g_mutex_lock (&link->lock);
  if (link->network != NULL)
    {
      g_queue_push_tail (&link->delivery, g_object_ref (record));
      if (!link->delivery_posted)
        {
          GSource *source = g_idle_source_new ();

          link->delivery_posted = TRUE;
          g_source_set_priority (source, G_PRIORITY_DEFAULT);
          g_source_set_callback (source, deliver_records_cb, link_ref (link),
                                 (GDestroyNotify) link_unref);
          g_source_attach (source, link->main_context);
          g_source_unref (source);
        }
    }
  g_mutex_unlock (&link->lock);
}

/**
 * _paddock_session_network_new:
 * @session_id: the session's
 * @state_dir: (nullable): the session's folder, for the journal file
 * @gate: the session's
 * @config: the session's, which outlives the network (the session owns
 *   both): its policy and leases read and changed there
 */
PaddockSessionNetwork *
_paddock_session_network_new (const char           *session_id,
                              const char           *state_dir,
                              PaddockSessionGate   *gate,
                              PaddockSessionConfig *config)
{
  PaddockSessionNetwork *network;
  g_autofree char *path = state_dir != NULL ? g_build_filename (state_dir, JOURNAL_FILE, NULL) : NULL;

  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (PADDOCK_IS_SESSION_GATE (gate), NULL);
  g_return_val_if_fail (config != NULL, NULL);

  network = g_object_new (PADDOCK_TYPE_SESSION_NETWORK, NULL);
  network->session_id = g_strdup (session_id);
  network->gate = g_object_ref (gate);
  network->config = config;
  network->ports = _paddock_session_ports_new (session_id, gate, config);
  network->journal = paddock_net_journal_new (path, PADDOCK_NET_JOURNAL_DEFAULT_MAX_RECORDS,
                                              PADDOCK_NET_JOURNAL_DEFAULT_MAX_FILE_BYTES);
  return network;
}

/* On the proxy thread: the proxy ends every request and tunnel (each
 * recorded as cut off, with its bytes so far), then the thread. */
static void
link_finish (ProxyLink *link,
             gpointer   data)
{
  /* Before the proxy ends its requests, as a callback stuck in the
   * kernel would. */
  paddock_test_hold ("PADDOCK_TEST_PROXY_STOP_HOLD", "session %s's proxy thread, in its stop,", link->session_id);
  if (link->proxy != NULL)
    {
      paddock_proxy_stop (link->proxy);
      g_clear_signal_handler (&link->record_id, link->proxy);
      g_clear_object (&link->proxy);
    }
  g_atomic_int_set (&link->quit, TRUE);
}

/* Tells the link's proxy to stop (its thread ends once it did). Main
 * thread; once per link. */
static void
link_tell_to_stop (ProxyLink *link)
{
  if (link->told_to_stop)
    return;
  link->told_to_stop = TRUE;
  link_post (link, link_finish, NULL, NULL);
}

/* Main thread: @link's thread is over (joined) or let go. Its session, if
 * it still has one, forgets it; records it leaves from now on go nowhere;
 * live_links's reference goes. */
static void
link_forget (ProxyLink *link)
{
  PaddockSessionNetwork *network = link->network;

  live_links = g_list_remove (live_links, link);
  if (network != NULL)
    {
      GList *held = g_list_find (network->stopping, link);

      if (held != NULL)
        {
          network->stopping = g_list_delete_link (network->stopping, held);
          link_unref (link);
        }
      g_mutex_lock (&link->lock);
      link->network = NULL;
      g_mutex_unlock (&link->lock);
    }
  link_unref (link);
}

/* Main thread, @link's thread ended (link->ended): joined (it only
 * returns from there on), and the records it left are journaled now. */
static void
link_join (ProxyLink *link)
{
  g_thread_join (g_steal_pointer (&link->thread));
  deliver_records_cb (link);
  link_forget (link);
}

/* On the main thread, the proxy thread's last act: unless the daemon's
 * exit joined it (or let it go) already. */
static gboolean
link_ended_cb (gpointer user_data)
{
  ProxyLink *link = user_data;

  if (link->thread != NULL)
    link_join (link);
  return G_SOURCE_REMOVE;
}

/* The session's sandbox ended or the session goes: its proxy is told to
 * stop and this returns at once; the thread is joined, and what it left
 * journaled, on the main loop when it ends (link_ended_cb()). The link
 * stays the network's (network->stopping) until then, so records still
 * reach its journal. Main thread; idempotent. */
static void
network_stop_proxy (PaddockSessionNetwork *network)
{
  ProxyLink *link = g_steal_pointer (&network->link);

  if (link == NULL)
    return;
  link_tell_to_stop (link);
  network->stopping = g_list_prepend (network->stopping, link);
}

/**
 * paddock_session_network_stop_all_proxies:
 *
 * Stops every session's proxy, as if each session had ended, and waits:
 * the daemon's shutdown calls it before the sessions go and before it
 * flushes the network journals, so that the requests in flight at that
 * moment are recorded. Every proxy whose thread was not joined yet (its
 * session's, or one told to stop earlier that has not ended) is told to
 * stop first and all are waited for against one deadline: stuck threads
 * cost the daemon's exit one bounded wait (PROXY_STOP_TIMEOUT_US), not one
 * each. A thread that has not ended by then is let go, still holding its
 * own reference to everything it uses, and the log says so; what it
 * records after that is lost.
 */
void
paddock_session_network_stop_all_proxies (void)
{
  gint64 deadline;

  for (GList *l = live_links; l != NULL; l = l->next)
    {
      ProxyLink *link = l->data;

      if (link->network != NULL && link->network->link == link)
        network_stop_proxy (link->network);
      else
        link_tell_to_stop (link);
    }
  deadline = g_get_monotonic_time () + PROXY_STOP_TIMEOUT_US;
  while (live_links != NULL)
    {
      ProxyLink *link = live_links->data;
      gboolean ended;

      g_mutex_lock (&link->lock);
      while (!link->ended && g_cond_wait_until (&link->ended_cond, &link->lock, deadline))
        ;
      ended = link->ended;
      g_mutex_unlock (&link->lock);
      if (ended)
        {
          link_join (link);
          continue;
        }
      g_message ("Session %s: its proxy's thread did not end within %d s at the daemon's exit; "
                 "it is left to end on its own (requests it finishes from now on are not recorded)",
                 link->session_id, (int) (PROXY_STOP_TIMEOUT_US / G_USEC_PER_SEC));
      g_thread_unref (g_steal_pointer (&link->thread));
      /* Records finished up to now, journaled rather than lost. */
      deliver_records_cb (link);
      link_forget (link);
    }
}

static void
paddock_session_network_dispose (GObject *object)
{
  PaddockSessionNetwork *network = PADDOCK_SESSION_NETWORK (object);

  g_clear_object (&network->ports);
  /* Told to stop, not waited for: the session is going (destroyed, a
   * create that failed, or the daemon's exit, which stopped every proxy
   * already), so what its proxy records from now on has nowhere to go.
   * Each link, still live_links's until its thread ends, forgets us. */
  network_stop_proxy (network);
  while (network->stopping != NULL)
    {
      ProxyLink *link = network->stopping->data;

      network->stopping = g_list_delete_link (network->stopping, network->stopping);
      g_mutex_lock (&link->lock);
      link->network = NULL;
      g_mutex_unlock (&link->lock);
      link_unref (link);
    }
  g_clear_object (&network->journal);

  G_OBJECT_CLASS (paddock_session_network_parent_class)->dispose (object);
}

static void
paddock_session_network_finalize (GObject *object)
{
  PaddockSessionNetwork *network = PADDOCK_SESSION_NETWORK (object);

  paddock_session_call_handlers_clear (&network->calls);
  g_free (network->session_id);
  g_clear_object (&network->gate);

  G_OBJECT_CLASS (paddock_session_network_parent_class)->finalize (object);
}

static void
paddock_session_network_class_init (PaddockSessionNetworkClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = paddock_session_network_dispose;
  object_class->finalize = paddock_session_network_finalize;

  /**
   * PaddockSessionNetwork::policy-changed:
   *
   * SetNetworkPolicy decided: the session's config and properties have
   * its policy from now on, for the owner to record (before the call is
   * answered).
   */
  signals[SIGNAL_POLICY_CHANGED] = g_signal_new ("policy-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                                 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
paddock_session_network_init (PaddockSessionNetwork *network)
{
}

/* The session is about to start: in proxy mode its namespace will have the
 * socket, which decides the environment and what SetNetworkPolicy can do;
 * in none and proxy its leases will be forwarded once it runs. */
void
_paddock_session_network_prepare (PaddockSessionNetwork *network,
                                  const char            *mode)
{
  network->has_listener = g_strcmp0 (mode, "proxy") == 0;
  network->forwards_ports = g_strcmp0 (mode, "none") == 0 || g_strcmp0 (mode, "proxy") == 0;
}

/* A sandbox adopted from its keeper (paddock-keeper-protocol.h) in @mode:
 * as prepared for a start in it; and one recorded in none may have been
 * started in proxy and switched to none since (SetNetworkPolicy), its
 * pid 1 still holding the proxy's socket: served if it comes (by the
 * rules of none, which allow nothing, until switched back). */
void
_paddock_session_network_prepare_adopted (PaddockSessionNetwork *network,
                                          const char            *mode)
{
  _paddock_session_network_prepare (network, mode);
  network->may_have_listener = g_strcmp0 (mode, "none") == 0;
}

/* The sandbox was spawned (and its control channel is open): only now are
 * the leases forwarded, so a spawn that failed leaves no forward holding a
 * copy of a lease's socket until the session object goes. */
void
_paddock_session_network_spawned (PaddockSessionNetwork *network)
{
  _paddock_session_ports_start (network->ports, network->forwards_ports);
}

PaddockSessionPorts *
_paddock_session_network_get_ports (PaddockSessionNetwork *network)
{
  return network->ports;
}

/* Where programs inside find the proxy: the variables curl, git, pip, npm,
 * Go, Python and Node read (upper- and lower-case, since tools disagree),
 * and loopback excluded, since the session's own servers are there.
 * ALL_PROXY names the same listener as SOCKS5 (it speaks both, see
 * paddock-proxy-socks.c), for what is not HTTP; "socks5h" because names
 * must reach the proxy unresolved: there is no resolver inside. */
char **
_paddock_session_network_add_environment (PaddockSessionNetwork *network,
                                          char                 **env)
{
  static const char * const http_names[] = {
    "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
  };
  static const char * const socks_names[] = { "ALL_PROXY", "all_proxy" };
  g_autofree char *url = NULL;
  g_autofree char *socks_url = NULL;

  if (!network->has_listener)
    return env;
  url = g_strdup_printf ("http://127.0.0.1:%u", PADDOCK_SESSION_PROXY_PORT);
  socks_url = g_strdup_printf ("socks5h://127.0.0.1:%u", PADDOCK_SESSION_PROXY_PORT);
  for (gsize i = 0; i < G_N_ELEMENTS (http_names); i++)
    env = g_environ_setenv (env, http_names[i], url, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (socks_names); i++)
    env = g_environ_setenv (env, socks_names[i], socks_url, TRUE);
  {
    /* git over ssh through the proxy, unless the session was given its
     * own way (paddock_proxy_git_ssh_command() says how). */
    g_autofree char *ssh_command = paddock_proxy_git_ssh_command (PADDOCK_SESSION_PROXY_PORT);

    env = g_environ_setenv (env, "GIT_SSH_COMMAND", ssh_command, FALSE);
  }
  env = g_environ_setenv (env, "NO_PROXY", "localhost,127.0.0.1,::1", TRUE);
  env = g_environ_setenv (env, "no_proxy", "localhost,127.0.0.1,::1", TRUE);
  return env;
}

/* The test-only resolver: PADDOCK_TEST_PROXY_RESOLVE="name=address,…" in
 * the daemon's environment replaces DNS for the proxy (see
 * paddock_proxy_set_resolver_override). */
static GHashTable *
test_resolver (PaddockSessionNetwork *network)
{
  const char *text = g_getenv ("PADDOCK_TEST_PROXY_RESOLVE");
  GHashTable *map = NULL;
  g_auto(GStrv) pairs = NULL;

  if (text == NULL)
    return NULL;
  g_message ("Session %s: PADDOCK_TEST_PROXY_RESOLVE is set, so its proxy resolves names from it, "
             "not from DNS (a test switch)", network->session_id);
  map = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  pairs = g_strsplit (text, ",", 256);
  for (guint i = 0; pairs[i] != NULL; i++)
    {
      const char *eq = strchr (pairs[i], '=');

      if (eq != NULL && eq != pairs[i])
        g_hash_table_replace (map, g_strndup (pairs[i], (gsize) (eq - pairs[i])), g_strdup (eq + 1));
    }
  return map;
}

/* The test switch PADDOCK_TEST_PROXY_THREAD_FAIL=1 in the daemon's own
 * environment (like PADDOCK_TEST_PROXY_RESOLVE: nothing a client or a
 * session can set) makes the proxy's thread fail to start, as it would
 * when the process is out of threads or memory, so that a test sees what
 * the user is told then. Only the exact value "1" counts, and the log says
 * so whenever it does. */
static gboolean
test_proxy_thread_fails (const char *session_id)
{
  if (g_strcmp0 (g_getenv ("PADDOCK_TEST_PROXY_THREAD_FAIL"), "1") != 0)
    return FALSE;
  g_message ("Session %s: PADDOCK_TEST_PROXY_THREAD_FAIL=1 is set, so its proxy's thread is not "
             "started (a test switch)", session_id);
  return TRUE;
}

/* The sandbox's {"event":"proxy"}: @fd (always taken) is the listening
 * socket inside the session's namespace. The proxy is made here, on its
 * own context but before its thread exists, so that every way it can fail
 * is known before this returns: FALSE then, with @error saying why, and
 * the caller must not let the session run in proxy mode with nobody
 * serving its proxy (the namespace has no other way out, so it would be
 * safe, but every request would fail and nobody would know why). */
gboolean
_paddock_session_network_take_listener (PaddockSessionNetwork  *network,
                                        int                     fd,
                                        GError                **error)
{
  g_autoptr(PaddockDomainRules) rules = NULL;
  const char *session_id = network->session_id;
  g_autoptr(GHashTable) resolver = NULL;
  g_autoptr(GError) local_error = NULL;
  PaddockProxy *proxy;
  ProxyLink *link;

  if (network->link == NULL && !network->has_listener && network->may_have_listener)
    network->has_listener = TRUE;
  network->may_have_listener = FALSE;
  if (network->link != NULL || !network->has_listener)
    {
      /* Not a proxy-mode start, or a second socket: nothing to serve. */
      close (fd);
      return TRUE;
    }
  rules = network->config->net_rules != NULL ? g_object_ref (network->config->net_rules) : NULL;
  if (rules == NULL)
    {
      /* Only a session restored from its record lacks them, and it never
       * starts: refuse rather than guess a policy. */
      close (fd);
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "The session's proxy cannot be served: it has no parsed network rules");
      return FALSE;
    }

  link = g_new0 (ProxyLink, 1);
  g_atomic_ref_count_init (&link->ref_count);
  g_mutex_init (&link->lock);
  g_cond_init (&link->ended_cond);
  g_queue_init (&link->delivery);
  link->main_context = g_main_context_ref_thread_default ();
  link->session_id = g_strdup (session_id);
  link->context = g_main_context_new ();

  /* The proxy's sources go to the thread's context: made with it as this
   * thread's default, then left to the thread, which acquires it (so the
   * thread starts only once this thread let go of it). */
  g_main_context_push_thread_default (link->context);
  proxy = paddock_proxy_new (fd, rules, &local_error);   /* fd taken, even on failure */
  if (proxy != NULL)
    {
      resolver = test_resolver (network);
      if (resolver != NULL)
        paddock_proxy_set_resolver_override (proxy, resolver);
      link->record_id = g_signal_connect (proxy, "record-added", G_CALLBACK (record_added_cb), link);
      link->proxy = proxy;
      link->network = network;
    }
  g_main_context_pop_thread_default (link->context);

  if (proxy != NULL && !test_proxy_thread_fails (session_id))
    {
      /* The thread's own reference (proxy_thread_main()). */
      link->thread = g_thread_try_new ("paddock-proxy", proxy_thread_main, link_ref (link), &local_error);
      if (link->thread == NULL)
        link_unref (link);
    }
  else if (proxy != NULL)
    g_set_error_literal (&local_error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
                         "Error creating thread: Resource temporarily unavailable (test switch)");
  if (proxy != NULL && link->thread == NULL)
    {
      /* Nothing ran on the context: the proxy goes here, unserved, with
       * its listening socket; nothing was recorded. */
      link->network = NULL;
      paddock_proxy_stop (link->proxy);
      g_clear_signal_handler (&link->record_id, link->proxy);
      g_clear_object (&link->proxy);
    }

  if (link->thread == NULL)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_FAILED,
                   "The session's proxy cannot be served: %s%s", proxy == NULL ? "" : "cannot start its thread: ",
                   local_error->message);
      link_unref (link);
      return FALSE;
    }
  network->link = link;
  live_links = g_list_prepend (live_links, link_ref (link));
  return TRUE;
}

/* The session ended: its namespace is gone, and so is every client. */
void
_paddock_session_network_stop (PaddockSessionNetwork *network)
{
  _paddock_session_ports_stop (network->ports);
  network_stop_proxy (network);
}

static gboolean
handle_list_records (PaddockIpcSession1    *session,
                     GDBusMethodInvocation *invocation,
                     guint64               after_seq,
                     guint                 max,
                     PaddockSessionNetwork *network)
{
  g_autoptr(GPtrArray) records = NULL;
  GVariantBuilder builder;
  guint64 next = after_seq;

  records = paddock_net_journal_list (network->journal, after_seq, MIN (max, MAX_RECORDS_PER_CALL), &next);
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aa{sv}"));
  for (guint i = 0; i < records->len; i++)
    g_variant_builder_add_value (&builder, record_to_variant (g_ptr_array_index (records, i)));
  paddock_ipc_session1_complete_list_network_records (session, invocation,
                                                      g_variant_builder_end (&builder), next);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef struct
{
  PaddockDomainRules    *rules;
  GDBusMethodInvocation *invocation;  /* completed on the main thread */
  GMainContext          *main_context;
} PolicyChange;

static void
policy_change_free (gpointer data)
{
  PolicyChange *change = data;

  g_clear_object (&change->rules);
  /* link_set_rules() never ran (its source destroyed unrun: a safety
   * net, since the thread runs what was posted before it ends). The call
   * is still owed its answer, which takes the handler's reference. */
  if (change->invocation != NULL)
    g_dbus_method_invocation_return_error (g_steal_pointer (&change->invocation), PADDOCK_ERROR,
                                           PADDOCK_ERROR_FAILED,
                                           "The session's proxy stopped before the new policy took effect");
  g_main_context_unref (change->main_context);
  g_free (change);
}

static gboolean
policy_applied_cb (gpointer user_data)
{
  GDBusMethodInvocation *invocation = user_data;

  /* What paddock_ipc_session1_complete_set_network_policy() sends; it
   * takes the invocation's reference. */
  g_dbus_method_invocation_return_value (invocation, g_variant_new ("()"));
  return G_SOURCE_REMOVE;
}

/* On the proxy thread: new rules for what comes next, and open tunnels
 * judged again (they were judged when they opened: those the new policy
 * refuses end now, or "none" would not mean none). Then the reply. */
static void
link_set_rules (ProxyLink *link,
                gpointer   data)
{
  PolicyChange *change = data;
  GSource *source;

  if (link->proxy != NULL)
    {
      paddock_proxy_set_rules (link->proxy, change->rules);
      paddock_proxy_close_denied_connections (link->proxy, "the network policy no longer allows it");
    }
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, policy_applied_cb, g_steal_pointer (&change->invocation), NULL);
  g_source_attach (source, change->main_context);
  g_source_unref (source);
}

static gboolean
handle_set_policy (PaddockIpcSession1    *session,
                   GDBusMethodInvocation *invocation,
                   const char            *mode,
                   const char * const    *allow_domains,
                   PaddockSessionNetwork *network)
{
  const char *current = paddock_ipc_session1_get_network_mode (session);
  g_autoptr(PaddockDomainRules) rules = NULL;
  g_autoptr(GError) error = NULL;

  if (!paddock_net_mode_is_valid (mode))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                                             "The network mode is " PADDOCK_NET_MODES_TEXT ", not “%s”", mode);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  rules = _paddock_session_network_build_rules (mode, allow_domains, &error);
  if (rules == NULL)
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  if (paddock_session_gate_refuse (network->gate, invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  /* As LeasePort: a policy for a network nobody uses any more (the
   * session ended; none is started again) would be taken for one applied. */
  if (!paddock_session_gate_is_live (network->gate))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_CONFLICT,
                                             "Session %s is not running: its network policy applies to "
                                             "nothing; nothing was changed", network->session_id);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* Only what the running namespaces allow: the network namespace is made
   * once, at start, and only a proxy-mode start has the socket. */
  if (g_strcmp0 (mode, current) != 0 &&
      (g_strcmp0 (mode, "host") == 0 ||
       g_strcmp0 (current, "host") == 0 || (g_strcmp0 (mode, "proxy") == 0 && !network->has_listener)))
    {
      g_dbus_method_invocation_return_error (invocation, PADDOCK_ERROR, PADDOCK_ERROR_RESTART_REQUIRED,
                                             "Switching this session from %s to %s needs a new network "
                                             "namespace: create the session again with --net %s; "
                                             "nothing was changed",
                                             current, mode, mode);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }

  /* The session's policy from now on, published, and recorded by it. */
  paddock_session_config_set_network (network->config, mode, allow_domains, rules);
  paddock_ipc_session1_set_network_mode (session, mode);
  paddock_ipc_session1_set_allowed_domains (session, allow_domains);
  g_signal_emit (network, signals[SIGNAL_POLICY_CHANGED], 0);
  if (network->link != NULL)
    {
      PolicyChange *change = g_new0 (PolicyChange, 1);

      /* The reply waits until the proxy judges by the new rules: a request
       * made after it must meet them. */
      change->rules = g_steal_pointer (&rules);
      /* The handler's own reference, which the answer takes (no other:
       * a second one would keep the call and its message for good). */
      change->invocation = invocation;
      change->main_context = g_main_context_ref_thread_default ();
      link_post (network->link, link_set_rules, change, policy_change_free);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  paddock_ipc_session1_complete_set_network_policy (session, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* ---- leased ports (net host) ------------------------------------------- */

/* Its leased ports by name, for the agent and every command: PORT is the
 * first (what most frameworks read), PADDOCK_PORT_<NAME> each one, the
 * name upper-cased with anything but letters and digits as "_". */
char **
_paddock_session_network_add_port_environment (GPtrArray  *leases,
                                               char      **env)
{
  for (guint i = 0; leases != NULL && i < leases->len; i++)
    {
      PaddockLease *lease = g_ptr_array_index (leases, i);
      g_autofree char *port = g_strdup_printf ("%u", paddock_lease_get_port (lease));
      g_autofree char *name = g_ascii_strup (paddock_lease_get_name (lease), -1);
      g_autofree char *variable = NULL;

      for (char *p = name; *p != '\0'; p++)
        if (!g_ascii_isalnum (*p))
          *p = '_';
      variable = g_strconcat ("PADDOCK_PORT_", name, NULL);
      if (i == 0)
        env = g_environ_setenv (env, "PORT", port, TRUE);
      env = g_environ_setenv (env, variable, port, TRUE);
    }
  return env;
}

/* The socket-activation protocol (sd_listen_fds(3)) for the agent alone:
 * its leased sockets are fds 3… in lease order, named by LISTEN_FDNAMES.
 * LISTEN_PID is @pid, or a placeholder the child fills in with its own. */
char **
_paddock_session_network_add_listen_environment (GPtrArray   *leases,
                                                 char       **env,
                                                 const char  *pid)
{
  g_autoptr(GString) names = g_string_new (NULL);
  g_autofree char *count = NULL;

  if (leases == NULL || leases->len == 0)
    return env;
  for (guint i = 0; i < leases->len; i++)
    g_string_append_printf (names, "%s%s", i > 0 ? ":" : "",
                            paddock_lease_get_name (g_ptr_array_index (leases, i)));
  count = g_strdup_printf ("%u", leases->len);
  env = g_environ_setenv (env, "LISTEN_FDS", count, TRUE);
  env = g_environ_setenv (env, "LISTEN_FDNAMES", names->str, TRUE);
  env = g_environ_setenv (env, "LISTEN_PID", pid, TRUE);
  return env;
}

/* Writes @value in decimal into @out (room for 20 digits and a NUL). */
void
_paddock_session_network_child_format_pid (char  *out,
                                           pid_t  value)
{
  char digits[24];
  int n = 0;

  do
    {
      digits[n++] = (char) ('0' + value % 10);
      value /= 10;
    }
  while (value > 0 && n < 20);
  for (int i = 0; i < n; i++)
    out[i] = digits[n - 1 - i];
  out[n] = '\0';
}

/* From now on it answers its calls on @skeleton itself (the session's
 * D-Bus object leaves those methods to it); they are disconnected when
 * it goes, or when the skeleton does. */
void
_paddock_session_network_attach (PaddockSessionNetwork *self,
                                 PaddockIpcSession1 *skeleton)
{
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-list-network-records", G_CALLBACK (handle_list_records), self);
  paddock_session_call_handlers_connect (&self->calls, skeleton, "handle-set-network-policy", G_CALLBACK (handle_set_policy), self);
  _paddock_session_ports_attach (self->ports, skeleton);
}
