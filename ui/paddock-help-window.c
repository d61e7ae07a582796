/* paddock-help-window.c — the app's help: how to run an agent
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A short page, reached from the main menu (Help, F1), that says what a
 * new user must know to run Claude Code, Codex, OpenCode or pi: install it
 * for your user with npm, Paddock finds it, pick it in New Session, its
 * home lasts, and the same from the command line. It says what README
 * says, shorter; the keyboard shortcuts window is for keys, not this. */

#include "config.h"

#include <glib/gi18n.h>

#include "paddock-help-window.h"

struct _PaddockHelpWindow
{
  AdwWindow  parent_instance;
  GtkLabel  *first_body;
};

G_DEFINE_FINAL_TYPE (PaddockHelpWindow, paddock_help_window, ADW_TYPE_WINDOW)

/* A heading and its text; the text is Pango markup (commands in <tt>),
 * selectable so that a command can be copied into a terminal. */
static GtkLabel *
add_section (GtkBox     *box,
             const char *heading,
             const char *markup)
{
  GtkWidget *title = gtk_label_new (heading);
  GtkWidget *body = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (title), 0.0);
  gtk_widget_add_css_class (title, "heading");
  gtk_widget_set_margin_top (title, 12);
  gtk_accessible_update_property (GTK_ACCESSIBLE (title),
                                  GTK_ACCESSIBLE_PROPERTY_LEVEL, 2, -1);

  gtk_label_set_markup (GTK_LABEL (body), markup);
  gtk_label_set_xalign (GTK_LABEL (body), 0.0);
  gtk_label_set_wrap (GTK_LABEL (body), TRUE);
  gtk_label_set_selectable (GTK_LABEL (body), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (body), 70);

  gtk_box_append (box, title);
  gtk_box_append (box, body);
  return GTK_LABEL (body);
}

static void
paddock_help_window_init (PaddockHelpWindow *self)
{
  GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *scrolled = gtk_scrolled_window_new ();
  GtkWidget *clamp = adw_clamp_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);

  gtk_window_set_title (GTK_WINDOW (self), _("Running an Agent"));
  gtk_window_set_default_size (GTK_WINDOW (self), 620, 640);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_widget_set_margin_bottom (box, 18);

  self->first_body = add_section (GTK_BOX (box), _("Install It for Your User"),
               _("Install the agent with npm into a prefix of your own; no root and no PATH "
                 "change is needed:\n"
                 "<tt>npm config set prefix ~/.npm-global</tt>\n"
                 "<tt>npm install -g @anthropic-ai/claude-code</tt> (Claude Code), "
                 "<tt>@openai/codex</tt> (Codex), <tt>opencode-ai</tt> (OpenCode) or "
                 "<tt>@mariozechner/pi-coding-agent</tt> (pi)."));
  add_section (GTK_BOX (box), _("Paddock Finds It"),
               _("Paddock looks for each agent where npm and the usual tools install it: "
                 "npm's prefix (<tt>~/.npm-global</tt>, <tt>~/.local</tt>), nvm, fnm, volta, "
                 "bun and pnpm, <tt>~/.local/bin</tt>, <tt>/usr/local</tt> and <tt>/usr</tt>. "
                 "Its install is shown to the session read-only, at its own path."));
  add_section (GTK_BOX (box), _("Start It from New Session"),
               _("Open <b>New Session…</b> in the main menu, choose the workspace folder and "
                 "pick the agent in <b>Program</b>: Claude Code, Codex, OpenCode or pi. Each "
                 "preset runs in the safe profile on the proxy network, which lets it reach "
                 "only the hosts its preset names; every connection is listed in the session's "
                 "Network view. An agent that is not installed is named there with how to "
                 "install it."));
  add_section (GTK_BOX (box), _("Log In Once"),
               _("Turn on <b>Run Its Login Command</b> to run the agent's own login "
                 "(<tt>claude /login</tt>, <tt>codex login</tt>, <tt>opencode auth login</tt>) "
                 "in its environment. Each agent has a home of its own that persists from one "
                 "of its sessions to the next, so the login lasts; nothing is written into "
                 "your real home folder."));
  add_section (GTK_BOX (box), _("From the Command Line"),
               _("<tt>paddockctl agents</tt> lists each agent, found or not and where it looked.\n"
                 "<tt>paddockctl create --agent claude --workspace ~/src/project</tt> starts one.\n"
                 "<tt>paddockctl create --agent claude --workspace DIR -- claude /login</tt> runs "
                 "its login command.\n"
                 "<tt>paddockctl agents import-login claude --yes</tt> copies a login you already "
                 "made on this computer into its home, once.\n"
                 "<tt>paddockctl agents reset claude</tt> empties its home."));

  adw_clamp_set_child (ADW_CLAMP (clamp), box);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), clamp);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (scrolled, TRUE);
  gtk_box_append (GTK_BOX (content), header);
  gtk_box_append (GTK_BOX (content), scrolled);
  adw_window_set_content (ADW_WINDOW (self), content);
}

/* GTK gives the first focusable widget the focus when the window shows,
 * and a selectable label that takes the focus selects all its text: the
 * page would open with its first paragraph highlighted. Nothing needs the
 * focus until the user clicks or tabs. */
static void
paddock_help_window_show (GtkWidget *widget)
{
  PaddockHelpWindow *self = PADDOCK_HELP_WINDOW (widget);

  GTK_WIDGET_CLASS (paddock_help_window_parent_class)->show (widget);
  gtk_window_set_focus (GTK_WINDOW (self), NULL);
  gtk_label_select_region (self->first_body, 0, 0);
}

static void
paddock_help_window_class_init (PaddockHelpWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->show = paddock_help_window_show;

  /* Escape closes it, as it closes the About window. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

/**
 * paddock_help_window_new:
 * @parent: (nullable): the window it belongs to
 *
 * Returns: (transfer none): the help window, not yet shown; like any
 *   toplevel, it lives until it is closed
 */
GtkWindow *
paddock_help_window_new (GtkWindow *parent)
{
  /* Not added to the application, as the About window is not: closing
   * the last main window still quits the app. */
  return g_object_new (PADDOCK_TYPE_HELP_WINDOW,
                       "transient-for", parent,
                       NULL);
}
