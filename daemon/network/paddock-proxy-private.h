/* paddock-proxy-private.h — what the proxy's files share (not installed, not for callers)
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proxy is one object (paddock-proxy.c: listener, lifecycle, policy
 * changes) serving connections (paddock-proxy-conn.c: the state machine
 * from the first byte to the tunnel or the forwarded request, and the
 * SOCKS5 greeting in paddock-proxy-socks.c), which copy bytes with two
 * pumps (paddock-proxy-pump.c, which also follows the origin's response),
 * reach origins through a small pool of kept connections
 * (paddock-proxy-pool.c) and a name cache (paddock-proxy-resolver.c).
 * The HTTP framing itself is pure (paddock-http-head.c, paddock-http-body.c),
 * as is the SOCKS5 message parser (paddock-socks5.c).
 */

#pragma once

#include <gio/gio.h>

#include "paddock-compat-fd-watch.h"
#include "paddock-http-body.h"
#include "paddock-proxy.h"

G_BEGIN_DECLS

#define PUMP_BUFFER_SIZE    (16 * 1024)
#define HEAD_READ_CHUNK     4096
#define DRAIN_TIMEOUT_MS    1000
#define DRAIN_MAX_BYTES     (64 * 1024)
#define CONNECT_TIMEOUT_MS  30000
#define ACCEPT_BATCH        32     /* connections taken per wake-up, so accepting cannot starve the rest */
#define ACCEPT_PAUSE_MS     100    /* out of fds: wait instead of spinning on a readable listener */
#define PUMP_ROUNDS         8      /* copies per wake-up, so one busy tunnel cannot starve the rest */
#define VIA_VALUE           "1.1 paddock"
#define POOL_MAX_IDLE       64     /* idle origin connections kept, all origins together */
#define POOL_IDLE_USEC      (30 * G_USEC_PER_SEC)  /* …each for at most this long */
#define NAME_CACHE_MAX      256    /* names whose addresses are kept… */
#define NAME_CACHE_USEC     (30 * G_USEC_PER_SEC)  /* …each for this long (GResolver gives no TTL) */

struct _PaddockProxy
{
  GObject             parent_instance;

  int                 listen_fd;
  GSource            *accept_source;      /* readable listener, or the pause after EMFILE */
  PaddockCompatFdWatch *fd_watch;         /* every connection's waits (one epoll set on Linux) */
  GResolver          *resolver;
  PaddockDomainRules *rules;
  GHashTable         *resolver_override;  /* normalised name → address text */
  GHashTable         *connections;        /* Conn* (one ref each) */

  guint               header_timeout_ms;
  guint               max_connections;

  GQueue              idle;               /* Idle*: kept origin connections, newest last */
  GHashTable         *names;              /* normalised name → CachedName*: recent lookups */
  guint               n_lookups;          /* lookups sent to the resolver */

  gboolean            stopped;
};

typedef enum {
  MODE_NONE,
  MODE_TUNNEL,
  MODE_FORWARD,
} ConnMode;

typedef enum {
  TIMEOUT_NONE,
  TIMEOUT_HEAD,
  TIMEOUT_CONNECT,
  TIMEOUT_DRAIN,
} TimeoutKind;

typedef struct _Conn Conn;
typedef void (*ConnStep) (Conn *conn, gpointer data);

/* One pending wait: @fd readable or writable, then @step runs. The
 * watch holds no reference: closing the connection takes the wait back. */
typedef struct
{
  Conn                 *conn;
  PaddockCompatFdWatch *watch;
  int                   fd;
  GIOCondition          condition;
  gboolean              pending;
  ConnStep              step;
  gpointer              data;
} Wait;

typedef struct
{
  Conn          *conn;       /* the pump is part of it */
  gboolean       up;         /* client → origin */
  int            in;
  int            out;
  Wait           wait;
  guint8        *buffer;
  const guint8  *send_from;  /* buffer, or the rewritten response head */
  gsize          pending;    /* read, not yet written */
  gsize          offset;     /* …starting here */
  gboolean       limited;
  guint64        remaining;  /* bytes still to read when limited */
  gboolean       done;       /* no more to read */
} Pump;

struct _Conn
{
  guint               ref_count;
  PaddockProxy       *proxy;         /* unowned; NULL once closed */
  int                 client;
  int                 origin;        /* -1 until connecting */
  GCancellable       *cancellable;   /* the name lookup */
  Wait                wait;          /* the one pending step outside the pumps */
  GSource            *timeout_source;
  TimeoutKind         timeout_kind;
  gboolean            closed;
  gboolean            record_done;

  GByteArray         *head;
  gsize               head_end;
  PaddockNetRecord   *record;
  gint64              start_monotonic;

  ConnMode            mode;
  char               *host;          /* normalised */
  guint               port;
  gboolean            host_is_ip;
  gboolean            trust_any_address;
  GString            *upstream;      /* what goes to the origin first */
  gboolean            body_unlimited;
  guint64             body_remaining;
  GList              *addresses;     /* GInetAddress* */
  GList              *next_address;
  char               *connect_error;
  gsize               drained;
  GBytes             *response;      /* an error response being written */

  /* SOCKS5 instead of HTTP (the first byte was 5): the greeting was
   * answered, and how far the head buffer has been parsed. */
  gboolean            socks;
  gboolean            socks_greeted;
  gsize               socks_used;

  /* Keeping the origin connection: asked for (an HTTP/1.1 request whose
   * body is framed by Content-Length), whether this one came from the
   * pool, and the response's framing as it streams past. */
  gboolean            want_reuse;
  gboolean            reused;
  gboolean            no_pool;          /* a retry after a stale kept connection */
  gboolean            upstream_counted;
  gboolean            is_head;          /* HEAD: the response has no body */
  GByteArray         *resp_head;        /* the response head being read; NULL once passed */
  GByteArray         *resp_out;         /* the rewritten head going to the client */
  guint64             resp_bytes;       /* bytes of response read from the origin */
  PaddockHttpBody     resp_body;        /* the response body's framing */
  gboolean            resp_reusable;

  /* A write in progress outside the pumps: what, where, and then what. */
  int                 send_fd;
  const guint8       *send_data;
  gsize               send_len;
  gsize               send_done;
  ConnStep            send_next;

  Pump                up;
  Pump                down;
};

/* paddock-proxy.c */
void      _paddock_proxy_emit_record           (PaddockProxy      *proxy,
                                                PaddockNetRecord  *record);

/* paddock-proxy-conn.c */
void      _paddock_proxy_conn_start            (PaddockProxy      *proxy,
                                                int                fd);
Conn     *_paddock_proxy_conn_ref              (Conn              *conn);
void      _paddock_proxy_conn_unref            (Conn              *conn);
void      _paddock_proxy_wait_clear            (Wait              *wait);
void      _paddock_proxy_conn_wait             (Conn              *conn,
                                                Wait              *wait,
                                                int                fd,
                                                GIOCondition       condition,
                                                ConnStep           step,
                                                gpointer           data);
void      _paddock_proxy_conn_clear_timeout    (Conn              *conn);
void      _paddock_proxy_conn_complete_record  (Conn              *conn,
                                                PaddockNetVerdict  verdict,
                                                const char        *error_text);
void      _paddock_proxy_conn_close            (Conn              *conn);
void      _paddock_proxy_conn_finish           (Conn              *conn,
                                                const char        *error_text);
void      _paddock_proxy_conn_send             (Conn              *conn,
                                                int                fd,
                                                const void        *data,
                                                gsize              len,
                                                ConnStep           next);
GBytes   *_paddock_proxy_error_response        (guint              status,
                                                const char        *body);
void      _paddock_proxy_conn_respond_error    (Conn              *conn,
                                                guint              status,
                                                PaddockNetVerdict  verdict,
                                                const char        *body);
void      _paddock_proxy_conn_check_policy     (Conn              *conn);
void      _paddock_proxy_conn_connected        (Conn              *conn);
void      _paddock_proxy_conn_try_next_address (Conn              *conn);
void      _paddock_proxy_conn_read_head        (Conn              *conn,
                                                gpointer           data);
gboolean  _paddock_proxy_conn_still_allowed    (Conn              *conn);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Conn, _paddock_proxy_conn_unref)

/* paddock-proxy-socks.c */
void      _paddock_proxy_conn_read_socks       (Conn              *conn);
void      _paddock_proxy_socks_reply           (Conn              *conn,
                                                guint8             code,
                                                ConnStep           next);
guint8    _paddock_proxy_socks_code_for_status (guint              status,
                                                PaddockNetVerdict  verdict);

/* paddock-proxy-pump.c */
gboolean  _paddock_proxy_conn_retry_fresh      (Conn              *conn);
void      _paddock_proxy_conn_start_pumps      (Conn              *conn,
                                                gpointer           data);

/* paddock-proxy-pool.c */
void      _paddock_proxy_pool_put              (PaddockProxy      *self,
                                                const char        *host,
                                                guint              port,
                                                int                fd);
int       _paddock_proxy_pool_take             (PaddockProxy      *self,
                                                const char        *host,
                                                guint              port);
void      _paddock_proxy_pool_clear            (PaddockProxy      *self);

/* paddock-proxy-resolver.c */
GHashTable *_paddock_proxy_names_new           (void);
void      _paddock_proxy_conn_resolve          (Conn              *conn);

G_END_DECLS
