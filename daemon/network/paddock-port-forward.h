/* paddock-port-forward.h — a leased host port forwarded into a session's network namespace
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define PADDOCK_PORT_FORWARD_DEFAULT_MAX_CONNECTIONS 64

/* The pages the pipes of every forward in the process may hold at once.
 * The kernel counts pipe pages per user: once a user's pipes hold more
 * than /proc/sys/fs/pipe-user-pages-soft (16384 pages, 64 MiB, by
 * default), every new pipe of that user gets a single page — the
 * desktop's and the shell's too, not only ours. Unbounded, the forwards
 * could ask for 16 ports × 64 connections × 2 pipes × 256 KiB per session.
 * A quarter of that default keeps the daemon well clear of it; enlarged
 * pipes take at most half of it (16 connections at once), and a crowd
 * gets smaller pipes rather than none (paddock-port-forward.c). */
#define PADDOCK_PORT_FORWARD_PIPE_BUDGET_PAGES 4096

#define PADDOCK_TYPE_PORT_FORWARD (paddock_port_forward_get_type ())

G_DECLARE_FINAL_TYPE (PaddockPortForward, paddock_port_forward, PADDOCK, PORT_FORWARD, GObject)

/* Called on the thread that made the forward, once per accepted
 * connection (@family AF_INET), and once more for a connection that
 * 127.0.0.1 refused (@family AF_INET6, for [::1]): ask for one TCP socket
 * of @family in the target namespace and hand it over with
 * paddock_port_forward_take_inside_socket() (or -1 if none could be
 * made): now (then it is this request's answer, whatever else is in
 * flight) or later, in the order asked. A socket that is not a fresh TCP
 * socket of a family asked for is closed unused and ends the oldest
 * request. */
typedef void (*PaddockPortForwardSocketFunc) (PaddockPortForward *forward,
                                              int                 family,
                                              gpointer            user_data);

PaddockPortForward *paddock_port_forward_new                 (int                           listen_fd,
                                                              guint16                       inside_port,
                                                              PaddockPortForwardSocketFunc  socket_func,
                                                              gpointer                      user_data,
                                                              GError                      **error);
void                paddock_port_forward_set_max_connections (PaddockPortForward           *self,
                                                              guint                         max_connections);
void                paddock_port_forward_take_inside_socket  (PaddockPortForward           *self,
                                                              int                           fd);
guint16             paddock_port_forward_get_inside_port     (PaddockPortForward           *self);
guint               paddock_port_forward_get_n_connections   (PaddockPortForward           *self);
guint64             paddock_port_forward_get_n_refused       (PaddockPortForward           *self);
guint               paddock_port_forward_get_pipe_pages      (void);
void                paddock_port_forward_stop                (PaddockPortForward           *self);

G_END_DECLS
