/* The test program itself as a load object, for the unit tests that write
 * synthetic experiments of their own functions (test_views, test_report,
 * test_slicing): its path, load address, extent and build id. */
#ifndef SONDE_TEST_SELFEXE_H
#define SONDE_TEST_SELFEXE_H

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char exe[4096], exe_buildid[128];
static uint64_t exe_base, exe_lo = UINT64_MAX, exe_hi;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	exe_base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE) {
			/* the GNU build id note, in hex */
			const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
			const unsigned char *end = p + ph->p_memsz;

			while (p + 12 <= end) {
				uint32_t nsz, dsz, type;

				memcpy(&nsz, p, 4);
				memcpy(&dsz, p + 4, 4);
				memcpy(&type, p + 8, 4);
				const unsigned char *name = p + 12, *desc = name + ((nsz + 3) & ~3u);

				if (type == 3 && nsz == 4 && !memcmp(name, "GNU", 4) && dsz < 60)
					for (uint32_t k = 0; k < dsz; k++)
						snprintf(exe_buildid + 2 * k, 3, "%02x", desc[k]);
				p = desc + ((dsz + 3) & ~3u);
			}
		}
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < exe_lo)
			exe_lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > exe_hi)
			exe_hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1; /* the first is the program itself */
}

/* Fills exe, exe_base, exe_lo, exe_hi and exe_buildid; 0, or -1. */
static __attribute__((unused)) int find_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	dl_iterate_phdr(phdr_cb, NULL);
	return exe_hi > exe_lo ? 0 : -1;
}

#endif
