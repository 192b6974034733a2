/* SPDX-License-Identifier: MIT */
/*
 * The embedded web UI (ui.c; files of userspace/server/ui).
 */
#ifndef RK_SERVER_UI_H
#define RK_SERVER_UI_H

#include <stddef.h>

/**
 * ui_find() - the embedded file served at @path: its bytes, *@len (when
 * @len is not NULL) and *@mime. Return: NULL when @path is not one of them.
 */
const char *ui_find(const char *path, size_t *len, const char **mime);

#endif
