/* paddock-dbus-checks.c — what every incoming method call must pass before its handler runs
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Paths, folders and argv travel as "ay" (bytestrings) so that any file
 * name can be said, but a C string ends at its first NUL: the generated
 * code would hand a handler "/work/a" for "/work/a\0/../../etc", and
 * "K=V" splits differently once a NUL cuts it. Rather than trust each of
 * some forty handlers to remember, every skeleton of the daemon answers
 * through a vtable that looks at the whole message first: a bytestring
 * with a NUL before its end is refused with InvalidArgument naming the
 * argument (and the option key, for a{sv}), before the generated code
 * converts anything. Arguments that really are bytes (terminal input, a
 * command's standard input) say so with the annotation
 * org.paddock.Binary in the interface XML, and the one a{sv} option that is
 * bytes ("stdin" of Run) is listed below.
 */

#include "config.h"

#include "paddock-dbus-checks.h"

#include <string.h>

#include "paddock-error.h"

#define BINARY_ANNOTATION "org.paddock.Binary"

/* Option keys whose "ay" value is bytes, not a string. */
static const char *const binary_option_keys[] = { "stdin", NULL };

/* On each skeleton type: the generated vtable its calls go on to. */
static G_DEFINE_QUARK (paddock-dbus-checks-inner, inner_vtable)

static gboolean check_value (GVariant    *value,
                             const char  *method,
                             const char  *where,
                             gboolean     binary,
                             GError     **error);

static gboolean
check_bytestring (GVariant    *value,
                  const char  *method,
                  const char  *where,
                  GError     **error)
{
  gsize length = 0;
  const char *bytes = g_variant_get_fixed_array (value, &length, 1);
  const char *nul;

  /* One terminating NUL is how a bytestring ends; any other cuts it. */
  if (length == 0)
    return TRUE;
  nul = memchr (bytes, '\0', length - 1);
  if (nul == NULL)
    return TRUE;

  g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
               "%s: %s holds a NUL byte at offset %" G_GSIZE_FORMAT " (a path or argument ends at its "
               "only NUL)", method, where, (gsize) (nul - bytes));
  return FALSE;
}

static gboolean
check_options (GVariant    *value,
               const char  *method,
               const char  *where,
               GError     **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *child;

  g_variant_iter_init (&iter, value);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &child))
    {
      g_autoptr(GVariant) owned = child;
      g_autofree char *child_where = g_strdup_printf ("option “%s” of %s", key, where);

      if (!check_value (child, method, child_where,
                        g_strv_contains (binary_option_keys, key), error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_value (GVariant    *value,
             const char  *method,
             const char  *where,
             gboolean     binary,
             GError     **error)
{
  const GVariantType *type = g_variant_get_type (value);
  GVariantIter iter;
  GVariant *child;
  gsize index = 0;

  if (g_variant_type_equal (type, G_VARIANT_TYPE_BYTESTRING))
    return binary || check_bytestring (value, method, where, error);
  if (g_variant_type_equal (type, G_VARIANT_TYPE_VARDICT))
    return check_options (value, method, where, error);
  if (!g_variant_type_is_container (type))
    return TRUE;
  /* Arrays of numbers, strings or handles hold no bytestring. */
  if (g_variant_type_is_array (type) && g_variant_type_is_basic (g_variant_type_element (type)))
    return TRUE;

  g_variant_iter_init (&iter, value);
  while ((child = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr(GVariant) owned = child;
      g_autofree char *child_where = g_strdup_printf ("item %" G_GSIZE_FORMAT " of %s", index++, where);

      if (!check_value (child, method, child_where, binary, error))
        return FALSE;
    }
  return TRUE;
}

/* Whether @invocation's arguments may reach its handler; an
 * InvalidArgument error naming the argument otherwise. */
gboolean
paddock_dbus_check_call (GDBusMethodInvocation  *invocation,
                         GError                **error)
{
  const GDBusMethodInfo *info = g_dbus_method_invocation_get_method_info (invocation);
  GVariant *parameters = g_dbus_method_invocation_get_parameters (invocation);
  const char *method = g_dbus_method_invocation_get_method_name (invocation);
  gsize n_args;

  g_return_val_if_fail (G_IS_DBUS_METHOD_INVOCATION (invocation), FALSE);

  /* GDBus already refused a call whose signature is not the method's. */
  if (info == NULL || info->in_args == NULL || parameters == NULL)
    return TRUE;

  n_args = g_variant_n_children (parameters);
  for (gsize i = 0; i < n_args && info->in_args[i] != NULL; i++)
    {
      const GDBusArgInfo *arg = info->in_args[i];
      g_autoptr(GVariant) value = g_variant_get_child_value (parameters, i);
      g_autofree char *where = g_strdup_printf ("argument “%s”", arg->name);
      gboolean binary = g_dbus_annotation_info_lookup (arg->annotations, BINARY_ANNOTATION) != NULL;

      if (!check_value (value, method, where, binary, error))
        return FALSE;
    }
  return TRUE;
}

static void
checked_method_call (GDBusConnection       *connection,
                     const char            *sender,
                     const char            *object_path,
                     const char            *interface_name,
                     const char            *method_name,
                     GVariant              *parameters,
                     GDBusMethodInvocation *invocation,
                     gpointer               user_data)
{
  const GDBusInterfaceVTable *inner = g_type_get_qdata (G_OBJECT_TYPE (user_data), inner_vtable_quark ());
  g_autoptr(GError) error = NULL;

  g_assert (inner != NULL);

  if (!paddock_dbus_check_call (invocation, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return;
    }
  inner->method_call (connection, sender, object_path, interface_name, method_name, parameters,
                      invocation, user_data);
}

/* The vtable a skeleton subclass returns from its get_vtable: @inner's
 * (the generated one), with every method call checked first. GDBus
 * passes the skeleton as user data, so the inner vtable is found by the
 * skeleton's type; one wrapper per generated vtable, made once. */
GDBusInterfaceVTable *
paddock_dbus_checked_vtable (GDBusInterfaceSkeleton *skeleton,
                             GDBusInterfaceVTable   *inner)
{
  static GHashTable *wrappers;  /* inner vtable → wrapper; never freed */
  G_LOCK_DEFINE_STATIC (wrappers);
  GQuark inner_quark = inner_vtable_quark ();
  GDBusInterfaceVTable *wrapper;

  g_return_val_if_fail (G_IS_DBUS_INTERFACE_SKELETON (skeleton), inner);
  g_return_val_if_fail (inner != NULL && inner->method_call != NULL, inner);

  G_LOCK (wrappers);
  if (g_type_get_qdata (G_OBJECT_TYPE (skeleton), inner_quark) != inner)
    g_type_set_qdata (G_OBJECT_TYPE (skeleton), inner_quark, inner);
  if (wrappers == NULL)
    wrappers = g_hash_table_new (NULL, NULL);
  wrapper = g_hash_table_lookup (wrappers, inner);
  if (wrapper == NULL)
    {
      wrapper = g_memdup2 (inner, sizeof *inner);
      wrapper->method_call = checked_method_call;
      g_hash_table_insert (wrappers, inner, wrapper);
    }
  G_UNLOCK (wrappers);
  return wrapper;
}

/* Whether every key of @options is one of @known (ended by a NULL key)
 * with its type: an option a method does not know would otherwise be
 * ignored without a word, and the caller would believe it took effect. */
gboolean
paddock_dbus_check_options (GVariant                *options,
                            const PaddockDBusOption *known,
                            const char              *method,
                            GError                 **error)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_return_val_if_fail (g_variant_is_of_type (options, G_VARIANT_TYPE_VARDICT), FALSE);

  g_variant_iter_init (&iter, options);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      g_autoptr(GVariant) owned = value;
      const PaddockDBusOption *option = known;

      while (option->key != NULL && !g_str_equal (option->key, key))
        option++;
      if (option->key == NULL)
        {
          g_autoptr(GString) names = g_string_new (NULL);

          for (option = known; option->key != NULL; option++)
            g_string_append_printf (names, "%s“%s”", names->len > 0 ? ", " : "", option->key);
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "%s: unknown option “%s” (it takes %s)", method, key,
                       names->len > 0 ? names->str : "none");
          return FALSE;
        }
      if (!g_variant_is_of_type (value, G_VARIANT_TYPE (option->type)))
        {
          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "%s: option “%s” is of type %s, not %s", method, key, option->type,
                       g_variant_get_type_string (value));
          return FALSE;
        }
    }
  return TRUE;
}

/* A variable name as a shell takes it: letters, digits and _, not
 * starting with a digit. Anything else ("A=B", "", "A B") would be split
 * or dropped differently by every program that reads the environment. */
gboolean
paddock_env_name_is_valid (const char *name)
{
  if (name == NULL || !(g_ascii_isalpha (name[0]) || name[0] == '_'))
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!(g_ascii_isalnum (*p) || *p == '_'))
      return FALSE;
  return TRUE;
}

/* An "a{ss}" environment within @max_items and @max_bytes, each name
 * valid; an InvalidArgument error naming @argument and the variable
 * otherwise. */
gboolean
paddock_dbus_check_env (GVariant    *env,
                        const char  *argument,
                        guint        max_items,
                        gsize        max_bytes,
                        GError     **error)
{
  GVariantIter iter;
  const char *key;
  const char *value;
  gsize bytes = 0;

  g_return_val_if_fail (g_variant_is_of_type (env, G_VARIANT_TYPE ("a{ss}")), FALSE);

  if (g_variant_n_children (env) > max_items)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s holds %" G_GSIZE_FORMAT " variables (at most %u)", argument,
                   g_variant_n_children (env), max_items);
      return FALSE;
    }
  g_variant_iter_init (&iter, env);
  while (g_variant_iter_next (&iter, "{&s&s}", &key, &value))
    {
      if (!paddock_env_name_is_valid (key))
        {
          g_autofree char *shown = g_strescape (key, NULL);

          g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                       "%s: “%s” is not a variable name (letters, digits and _, not starting "
                       "with a digit)", argument, shown);
          return FALSE;
        }
      bytes += strlen (key) + strlen (value) + 2;
    }
  if (bytes > max_bytes)
    {
      g_set_error (error, PADDOCK_ERROR, PADDOCK_ERROR_INVALID_ARGUMENT,
                   "%s is %" G_GSIZE_FORMAT " bytes (at most %" G_GSIZE_FORMAT ")", argument,
                   bytes, max_bytes);
      return FALSE;
    }
  return TRUE;
}

/* @bytes (a path as the client sent it) as valid UTF-8 for a message:
 * D-Bus error messages must be UTF-8, and a file name need not be. */
char *
paddock_dbus_display_bytes (const char *bytes)
{
  if (bytes == NULL)
    return g_strdup ("(none)");
  return g_utf8_make_valid (bytes, -1);
}
