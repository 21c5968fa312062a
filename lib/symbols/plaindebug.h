/*
 * plaindebug: DWARF that libdw can open without decompressing it.
 *
 * Debian's debug packages (libc6-dbg and every -dbgsym) compress their
 * .debug_* sections (SHF_COMPRESSED, zlib), and libdw's dwarf_begin_elf()
 * inflates every one of them when it opens the file, before the first
 * question: 43 ms for libc's and ld.so's on this project's machine, five
 * times what the rest of `sonde print` takes on a 1,000-sample experiment.
 * sonde needs a few CUs of them.
 *
 * So srcinfo gives libdw an uncompressed copy instead: made once, with the
 * sections inflated in parallel by libdeflate (about twice zlib's speed),
 * and kept in a cache directory keyed by the file's build id, size and
 * modification time, so that the next analysis maps it and reads only the
 * pages its CUs are on.  Where the cache cannot be written, the copy is an
 * anonymous memory file for this process alone.
 *
 * The cache: $SONDE_CACHE_DIR, else $XDG_CACHE_HOME/sonde, else
 * $HOME/.cache/sonde; "off" (or empty) keeps nothing on disk.  Copies not
 * used for 30 days are removed, and the oldest beyond 2 GiB, when a new one
 * is written.  A copy is the original with its compressed sections
 * inflated and the sections after them moved; sections and program headers
 * before the first compressed section keep their offsets, so that a
 * program header still describes the bytes it did.
 */
#ifndef SONDE_PLAINDEBUG_H
#define SONDE_PLAINDEBUG_H

#include <stdbool.h>
#include <stddef.h>

/* A descriptor of fd's file for libdw: fd itself when no section of it is
 * compressed (or it cannot be copied: libdw then inflates it as before),
 * else one of its uncompressed copy, and fd is closed.  *has_dwarf (when
 * has_dwarf is given) says whether the file has a .debug_info.  With
 * build_id given, a file whose build id is another is closed and -1
 * returned. */
int sonde_plain_debug(int fd, bool *has_dwarf, const void *build_id, size_t build_id_len);

#endif
